"""Compaction and the summary, as a session's caller sees them: run one, propose one for the
user to read, store or drop it, and what the summary weighs and cost."""

from __future__ import annotations

from collections.abc import AsyncIterator

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.size import SummarySize, summary_size
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.costs import CompactionCost, compaction_cost
from jarvis_tui.core.messages import Message
from jarvis_tui.core.session.part import Part
from jarvis_tui.core.store.records import StoreError, Summary


class SessionCompaction(Part):
    @property
    def summary_max_tokens(self) -> int:
        return self._engine.summary_max_tokens

    def summary_size(self) -> SummarySize | None:
        """The summary and its ledger against their budgets, and what the newest compaction
        added; None without a summary or when the store cannot be read now."""
        shown = self._engine.summary
        if shown is None:
            return None
        try:
            # Up to the branch's own: a later one may be another branch's.
            summaries = [s for s in self._store.summaries(self.id) if s.id <= shown.id]
        except StoreError:
            return None
        return summary_size(summaries, self._engine.counter, self._engine.summary_max_tokens,
                            self._engine.details_max_tokens)

    def covered(self) -> list[Message]:
        """The messages the summary stands for in requests."""
        return [m for m in self.messages if m.covered]

    def run(self, reason: str, focus: str | None = None) -> AsyncIterator[ev.Event]:
        """Compact and store at once: the automatic compactions (a threshold, an overflow)."""
        return self._engine.compact(reason=reason, focus=focus)

    def propose(self, focus: str | None = None) -> AsyncIterator[ev.Event]:
        """/compact: summarise, store nothing, and end with CompactionProposed for the user to
        read; then commit_compaction or discard_compaction."""
        return self._engine.compact(reason="manual", focus=focus, preview=True)

    def commit(self, proposal: CompactionProposal,
                          text: str) -> AsyncIterator[ev.Event]:
        """Store the proposal with `text` (an edited text is stored as edited by the user), or
        say in CompactionFailed why it no longer applies."""
        return self._engine.commit_compaction(proposal, text)

    def discard(self, proposal: CompactionProposal) -> None:
        self._engine.discard_compaction(proposal)

    def covers(self, proposal: CompactionProposal) -> list[Message]:
        """The messages the summary would stand for once accepted: those it covers already and
        those it folds in, oldest first."""
        folding = {m.id for m in proposal.evict}
        return [m for m in self.messages if m.covered or m.id in folding]

    def tokens_after(self, proposal: CompactionProposal, text: str) -> int:
        """About what the next request would need with the proposal accepted as `text`."""
        return self._engine.tokens_after(proposal, text)

    def edit_summary(self, text: str) -> Summary:
        return self._engine.edit_summary(text)

    def last_cost(self) -> CompactionCost | None:
        """What the newest compaction cost, as the store kept it; None when it cannot say."""
        try:
            return compaction_cost(self._store.last_compaction_usage(self.id))
        except StoreError:
            return None
