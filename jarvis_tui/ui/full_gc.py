"""Full garbage collections put off while a reply streams.

A full collection walks every object the app holds, and Textual's render caches grow that to a
few hundred thousand while a long reply renders: each one stopped the event loop for 100-250 ms,
every second or so of a long reply, and a key typed then waited for it (bench/ui.py). While any
hold is taken, full collections wait (the young generations are still collected as usual); the
one that was put off runs when the last hold is released, after the finished reply is drawn.
"""

from __future__ import annotations

import gc

PUT_OFF = 1_000_000  # a generation-2 threshold that means "not now"

_holds = 0
_saved: tuple[int, int, int] | None = None


def hold() -> None:
    global _holds, _saved
    if _holds == 0:
        _saved = gc.get_threshold()
        young, middle, _ = _saved
        gc.set_threshold(young, middle, PUT_OFF)
    _holds += 1


def release() -> None:
    """Give back one hold; the last one restores the thresholds as they were."""
    global _holds, _saved
    if _holds == 0:
        return
    _holds -= 1
    if _holds == 0 and _saved is not None:
        gc.set_threshold(*_saved)
        _saved = None
