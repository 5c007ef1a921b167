"""Full garbage collections put off while a reply streams, and run when the user pauses.

A full collection walks every object the app holds, and Textual's render caches grow that to a
few hundred thousand while a long reply renders: each one stopped the event loop for 100-250 ms,
every second or so of a long reply, and a key typed then waited for it (bench/ui/ui.py). While any
hold is taken, full collections wait (the young generations are still collected as usual). The
one that was put off takes 0.3-0.6 s, so it does not run the moment the last hold goes (the user
is often typing the next message as a reply ends): it waits until no key has come for IDLE_S,
runs once, and then the thresholds are as they were.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

PUT_OFF = 1_000_000  # a generation-2 threshold that means "not now"
IDLE_S = 1.0

_holds = 0
_saved: tuple[int, int, int] | None = None  # the thresholds while full collections are put off
_last_key = float("-inf")

# set_timer(seconds, callback): how the app runs something later (full_gc stays free of Textual).
Later = Callable[[float, Callable[[], None]], object]


def hold() -> None:
    global _holds, _saved
    if _holds == 0 and _saved is None:
        _saved = gc.get_threshold()
        young, middle, _ = _saved
        gc.set_threshold(young, middle, PUT_OFF)
    _holds += 1


def keyed() -> None:
    """The user pressed a key: a put-off collection waits for the next pause."""
    global _last_key
    _last_key = time.monotonic()


def release(later: Later) -> None:
    """Give back one hold; after the last one, the put-off collection runs at the next pause."""
    global _holds
    if _holds == 0:
        return
    _holds -= 1
    if _holds == 0:
        _collect_when_idle(later)


def pending() -> bool:
    """A full collection is put off (held, or waiting for a pause)."""
    return _saved is not None


def give_back() -> None:
    """The app is closing: thresholds as they were, whatever was put off (no collection now)."""
    global _holds, _saved
    if _saved is not None:
        gc.set_threshold(*_saved)
    _holds, _saved = 0, None


def _collect_when_idle(later: Later) -> None:
    global _saved
    if _holds or _saved is None:
        return  # held again meanwhile (a new reply), or already done
    wait = _last_key + IDLE_S - time.monotonic()
    if wait > 0:
        later(wait, lambda: _collect_when_idle(later))
        return
    gc.set_threshold(*_saved)
    _saved = None
    gc.collect()
