"""What keeps automatic compaction from looping.

Agents have shipped loops that compact again and again without freeing room. Here an automatic
compaction runs at most once a turn, unless the server refuses the request; one that frees too
little (a summary as long as what it replaced) or comes back to the same range holds the
automatic cycle for the rest of the turn, and the plain window is sent; three failed summaries in
a row pause it until the user runs /compact or changes the settings. A compaction the user asks
for always runs.
"""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message

MIN_FREED_SHARE = 0.05  # of the budget: a compaction freeing less did not help
MAX_FAILURES = 3  # summaries failed in a row before automatic compaction pauses


class CompactionGuard:
    def __init__(self) -> None:
        self.compacted_this_turn = 0
        self.held_this_turn = False
        self.failures = 0  # summaries failed in a row, automatic or asked for
        self._small_told = False
        self._last_range: tuple[int | None, int | None] | None = None

    @property
    def paused(self) -> bool:
        return self.failures >= MAX_FAILURES

    def new_turn(self) -> None:
        self.compacted_this_turn = 0
        self.held_this_turn = False

    def resume(self) -> None:
        """The settings changed, or a summary the user asked for worked: start afresh."""
        self.failures = 0
        self.held_this_turn = False
        self._small_told = False

    def allows(self, reason: str) -> bool:
        if reason == "manual":
            return True
        if self.paused or self.held_this_turn:
            return False
        return reason == "overflow" or self.compacted_this_turn == 0

    def starting(self, reason: str, evict: list[Message]) -> ev.CompactionHeld | None:
        """None to go on; the notice when an automatic compaction would fold the same range
        as the one before."""
        span = (evict[0].id, evict[-1].id) if evict else None
        if reason != "manual" and span is not None and span == self._last_range:
            self.held_this_turn = True
            return ev.CompactionHeld("repeated")
        return None

    def too_small(self, reason: str, folding: int,
                  budget: int) -> tuple[bool, ev.CompactionHeld | None]:
        """Whether an automatic compaction would fold in less than it could ever free (a small
        turn or two behind a large newest one, or tool definitions that fill the budget: the
        summary and its ledger would take as much as they replace), so no request is made; and
        the notice, told once until a compaction or a change of settings (else every turn of
        a session whose tools fill the window would repeat it)."""
        if reason == "manual" or folding >= budget * MIN_FREED_SHARE:
            return False, None
        self.held_this_turn = True
        if self._small_told:
            return True, None
        self._small_told = True
        return True, ev.CompactionHeld("small", freed=folding)

    def finished(self, reason: str, evict: list[Message], freed: int,
                 budget: int) -> ev.CompactionHeld | None:
        """Count a compaction that worked; the notice when an automatic one freed too little."""
        self._last_range = (evict[0].id, evict[-1].id) if evict else None
        self._small_told = False
        if reason == "manual":
            self.resume()
            return None
        self.failures = 0
        self.compacted_this_turn += 1
        if freed < budget * MIN_FREED_SHARE:
            self.held_this_turn = True
            return ev.CompactionHeld("stalled", freed=freed)
        return None

    def failed(self) -> ev.CompactionHeld | None:
        """Count a failed summary; the notice when that pauses automatic compaction."""
        self.failures += 1
        if self.failures == MAX_FAILURES:
            return ev.CompactionHeld("paused", failures=self.failures)
        return None
