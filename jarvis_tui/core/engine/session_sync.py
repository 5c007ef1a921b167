"""Sharing a session with other processes: waiting for another jarvis-tui's round on it,
catching up with what that round added, and saving while another program holds the database's
write lock.

Apart from the engine because this piece needs only the session's lock and the store's errors,
never the conversation: what catching up means for the engine (its history, summary and counts
read again) is handed in as the engine's own call, so this never imports the engine. The lock
object is the engine's too: a round and a compaction take and release it themselves.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.lock import SessionLock
from jarvis_tui.core.store.records import StoreLocked

SAVE_WAIT_S = 120.0  # a finished reply waits this long for another program's lock
SAVE_POLL_S = 0.25
SESSION_WAIT_S = 600.0  # a round waits this long for another jarvis-tui's round on the session
SESSION_POLL_S = 0.2


@dataclass
class Saved:
    """Where `persisting` puts what the store took: a generator of events returns nothing."""

    message: Message | None = None


async def persisting(save: Callable[[], Message], out: Saved) -> AsyncIterator[ev.Event]:
    """Run `save` until the store takes it: while another program holds the database's
    write lock, wait (saying so once) up to SAVE_WAIT_S. Other store errors are raised."""
    told = False
    end = time.monotonic() + SAVE_WAIT_S
    while True:
        try:
            out.message = save()
            return
        except StoreLocked as err:
            if time.monotonic() >= end:
                raise
            if not told:
                told = True
                yield ev.SaveDelayed(str(err))
            await asyncio.sleep(SAVE_POLL_S)


async def stored(save: Callable[[], Message]) -> Message:
    """Run `save` as `persisting` does, silently: for a tool's result, whose round has already
    said what it is waiting for. The wait does not hold up the screen."""
    end = time.monotonic() + SAVE_WAIT_S
    while True:
        try:
            return save()
        except StoreLocked:
            if time.monotonic() >= end:
                raise
            await asyncio.sleep(SAVE_POLL_S)


class SessionSync:
    """One session's lock, seen from this process: waiting for it, saying who holds it, and
    reading the session again (`read_again`, the engine's) when another process changed it."""

    def __init__(self, lock: SessionLock, conversation_id: int, *,
                 read_again: Callable[[], int]) -> None:
        self._lock = lock
        self._conversation_id = conversation_id
        self._read_again = read_again

    async def wait(self) -> AsyncIterator[ev.Event]:
        """Take the session, waiting (saying so once) up to SESSION_WAIT_S while another
        process's round holds it; the caller checks `held` to know whether it got it."""
        if self._lock.try_acquire():
            return
        yield ev.SessionBusy(self._lock.holder())
        end = time.monotonic() + SESSION_WAIT_S
        while time.monotonic() < end:
            await asyncio.sleep(SESSION_POLL_S)
            if self._lock.try_acquire():
                return

    async def after_own_round(self) -> None:
        """Wait while this process holds the session: its round (or compaction) ends first."""
        while self._lock.held:
            await asyncio.sleep(SESSION_POLL_S)

    def busy_text(self) -> str:
        pid = self._lock.holder()
        who = f"another jarvis-tui (process {pid})" if pid else "another jarvis-tui"
        return (f"session {self._conversation_id} is busy: {who} is answering in it; try again "
                "when it is done")

    def waited_text(self) -> str:
        return f"{self.busy_text()} (waited {SESSION_WAIT_S:g}s)"

    def catch_up(self) -> int:
        """Read the session again if another process added to it since it was loaded; how
        many messages it added (0: nothing changed). Between rounds only: while another
        process's round holds the session, its reply is still being written."""
        if self._lock.held:
            return self._read_again()
        if not self._lock.try_acquire():
            return 0
        try:
            return self._read_again()
        finally:
            self._lock.release()
