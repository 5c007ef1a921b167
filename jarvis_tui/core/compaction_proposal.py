"""A summary made but not stored yet: what /compact shows the user before anything changes.

The summary replaces turns in every later request, so the user reads (and may correct) it first.
Between the proposal and the user's answer the session may move on: another jarvis-tui may
compact it, or a message the proposal would fold in may no longer be there to fold. `stale`
tells a proposal that still applies from one that would store a summary of a history that is
gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jarvis_tui.core.messages import FAILED, Message


@dataclass(frozen=True)
class CompactionProposal:
    conversation_id: int
    text: str  # the summary with its details ledger, as the summariser and ledger made it
    evict: tuple[Message, ...]  # the messages it would fold in, oldest first
    base_summary_id: int | None  # the summary it folds in too (None: the session had none)
    before: int  # the request's tokens when it was proposed
    # The request's tokens once accepted, without the summary: the summary's own tokens are
    # added for whatever text the user ends up with.
    rest: int
    reason: str
    focus: str | None
    model: str
    # What the summary requests cost (they were made whether the proposal is kept or not).
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None
    calls: int
    cached_prefix: bool


def stale(proposal: CompactionProposal, conversation_id: int, summary_id: int | None,
          messages: Sequence[Message]) -> str | None:
    """Why `proposal` no longer applies to the session as it is now, or None when it does."""
    if proposal.conversation_id != conversation_id:
        return f"it was made for session {proposal.conversation_id}, not this one"
    if summary_id != proposal.base_summary_id:
        return ("the session's summary changed after this one was proposed (another "
                "compaction or an edit); run /compact again for a summary of it as it is now")
    present = {m.id: m for m in messages if m.id is not None}
    for old in proposal.evict:
        now = present.get(old.id) if old.id is not None else None
        if now is None or now.status == FAILED:
            return (f"message {old.id} it would fold in is no longer in the session; run "
                    "/compact again")
        if now.covered or now.pinned or now.excluded:
            return (f"message {old.id} it would fold in is already summarised or pinned; run "
                    "/compact again")
    return None
