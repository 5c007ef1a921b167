"""The reply being written: stored as it streams, so a killed process leaves the question and
most of the answer in the session; stored whole when it ends; kept in memory when the store
cannot take it (a full disk), and stored before the next round once it can.
"""

from __future__ import annotations

import time

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import PARTIAL, Message
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.history import History

FLUSH_S = 0.5  # a streaming reply reaches the store this often, so a killed process loses little


class ReplyLog:
    def __init__(self, store: Store, conversation_id: int, history: History) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.history = history
        self.streaming: Message | None = None  # the reply being written, already stored
        self.unsaved: Message | None = None  # a reply the store could not take
        self._flushed_at = 0.0
        self._saved_parts = 0  # how many of the streaming reply's pieces the store holds

    def flush(self, parts: list[str]) -> None:
        """Store the reply as it streams (status partial until it ends). Only the new text is
        written each time. A save the store cannot take now (another program's lock, a full
        disk) is tried again at the next flush; the text waits in `parts`."""
        now = time.monotonic()
        reply = self.streaming
        if reply is None:
            reply = self.streaming = Message("assistant", "", status=PARTIAL)
            self._saved_parts = 0
        elif now - self._flushed_at < FLUSH_S:
            return
        self._flushed_at = now
        new = "".join(parts[self._saved_parts:])
        try:
            if reply.id is None:
                reply.content = new
                self.store.add_message(self.conversation_id, reply, wait=STREAM_SAVE_WAIT_S)
                self.history.append(reply)
            else:
                self.store.append_text(reply, new, wait=STREAM_SAVE_WAIT_S)
                reply.content += new
        except StoreError:
            if reply.id is None:
                reply.content = ""
            return
        self._saved_parts = len(parts)

    def save(self, text: str, status: str, *, wait: float | None = STREAM_SAVE_WAIT_S,
             tool_calls: list[dict] | None = None) -> Message:
        """Store the reply whole (with the tool calls it asks for); on a StoreError the reply
        stays `streaming`, with the whole text in memory, for the caller to try again or
        report."""
        reply = self.streaming
        if reply is None:  # an empty reply, or no flush got it stored
            reply = self.streaming = Message("assistant", "", status=status)
        reply.content, reply.status = text, status
        if tool_calls:
            reply.tool_calls = tool_calls
        if reply.id is None:
            self.store.add_message(self.conversation_id, reply, wait=wait)
            self.history.append(reply)
        else:
            self.store.update_message(reply, wait=wait)
        self.streaming = None
        return reply

    def keep_in_memory(self) -> Message | None:
        """The store refused the streaming reply: it waits here for the next round."""
        self.unsaved, self.streaming = self.streaming, None
        return self.unsaved

    def not_saved(self, err: StoreError) -> ev.Failed:
        """The reply arrived but the store cannot take it (a full disk, a lock held for
        minutes): it is kept in memory, tried again before the next round, and handed to the
        caller, which shows it for copying."""
        reply = self.keep_in_memory()
        return ev.Failed(f"the reply could not be saved: {err}", reply, saved=False)

    def save_unsaved(self) -> None:
        """Before a new round: store a reply an earlier round could not (the disk has room
        again), so the conversation stays in order; if it still cannot be, it stays here."""
        reply = self.unsaved
        if reply is None:
            return
        try:
            if reply.id is None:
                self.store.add_message(self.conversation_id, reply)
                self.history.append(reply)
            else:
                self.store.update_message(reply)
        except StoreError:
            return
        self.unsaved = None
