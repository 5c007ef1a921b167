"""How large the summary and its details ledger are against their budgets, and what the newest
compaction did to them: what the summary panel shows, so growth across compactions is seen
rather than found in a request that no longer fits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jarvis_tui.core.details.ledger import section, split
from jarvis_tui.core.store.records import Summary
from jarvis_tui.core.window.tokens import TokenCounter


@dataclass(frozen=True)
class SummarySize:
    summary: int  # tokens of the summary's own text
    summary_budget: int
    details: int  # tokens of its ledger section (0: none)
    details_budget: int
    compactions: int  # summaries a compaction made (the user's edits are not counted)
    growth: int | None  # tokens the newest compaction added to what it started from (< 0: cut)


def tokens(summary: Summary, counter: TokenCounter) -> tuple[int, int]:
    """(the summary's own text, its ledger section), as the budgets count them."""
    body, kept = split(summary.content)
    return counter.text(body), counter.text(section(kept)) if kept else 0


def summary_size(summaries: Sequence[Summary], counter: TokenCounter, summary_budget: int,
                 details_budget: int) -> SummarySize | None:
    """The newest of a session's `summaries` (oldest first, as stored) against the budgets;
    None before the first."""
    if not summaries:
        return None
    body, details = tokens(summaries[-1], counter)
    # Only F2's edits replace a summary; an accepted /compact proposal the user edited is a
    # compaction of its own, stored as "edited" too.
    made = [i for i, s in enumerate(summaries) if s.replaces_id is None]
    growth = None
    if made:
        # Against the summary the compaction folded in (an edit of the user's, maybe).
        last = made[-1]
        before = sum(tokens(summaries[last - 1], counter)) if last else 0
        growth = sum(tokens(summaries[last], counter)) - before
    return SummarySize(body, summary_budget, details, details_budget, len(made), growth)
