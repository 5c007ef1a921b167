"""Layer 2: folding older turns into the summary, as a proposal or stored at once.

Held by the engine and handed what a compaction needs: the store and session it writes to, the
history it folds, what was sent in place of messages (SentTexts, the tool outputs), the guard
that keeps automatic compaction from looping, and what the request is made of (request_basis.py:
its budget, counts, prompt and tool definitions), taken anew at each compaction since settings
and the summary change between them; the summary it stores goes back through `keep_summary`.
The session lock stays with the engine: a round holds it too, and a compaction inside a
round runs under the round's hold.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import BudgetUsage
from jarvis_tui.core.compaction.summarizer import (
    PREFIX_COUNT_MARGIN,
    PREFIX_INSTRUCTION,
    PREFIX_SUMMARY_SHARE,
    PROMPT_SLACK,
    CalledATool,
    CompactionPlan,
    Summarizer,
    SummaryError,
    SummaryPrefix,
    plan_compaction,
)
from jarvis_tui.core.compaction_proposal import CompactionProposal, stale
from jarvis_tui.core.details.ledger import ledger_for, left_out
from jarvis_tui.core.engine.compaction_guard import CompactionGuard
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.memory.guard import refusal
from jarvis_tui.core.memory.suggest import durable, typed_by_user
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.errors import ContextOverflow, ProviderError
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
from jarvis_tui.core.recall.alike import new_ones
from jarvis_tui.core.settings.config import known_secrets
from jarvis_tui.core.store.records import StoreError, Summary
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_tool import SUMMARY_NOTE, definition_overflow
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.history import History


class Compactions:
    """Plans, summarises and stores compactions of one session; proposals wait here for the
    user's word (commit or discard) only as values the caller keeps."""

    def __init__(self, basis: Callable[[], RequestBasis], store: Store, conversation_id: int,
                 history: History, sent: SentTexts, tool_outputs: ToolOutputShaper,
                 guard: CompactionGuard, *, keep_summary: Callable[[Summary], None],
                 backoff: Callable[[int, float | None], float],
                 sleep: Callable[[float], Awaitable[object]]) -> None:
        self._basis = basis
        self._keep_summary = keep_summary
        self._store = store
        self._conversation_id = conversation_id
        self._history = history
        self._sent = sent
        self._tool_outputs = tool_outputs
        self._guard = guard
        self._backoff = backoff
        self._sleep = sleep

    async def run(self, reason: str, focus: str | None, keep_recent_turns: int | None,
                  preview: bool = False) -> AsyncIterator[ev.Event]:
        """One compaction, under the caller's hold of the session and the compaction lock
        (Engine.compact takes them): what it yields is what Engine.compact says. The steps:
        what to fold, whether to go on, the summary, what it left out, the proposal."""
        view = self._basis()
        if not self._guard.allows(reason):
            return  # at most once a turn, held after a useless one, paused after failures
        usage = view.usage()  # a pass over the history: once, for the mark and the notice
        plan, keep = self._fold(view, usage, keep_recent_turns)
        told = self._held_back(view, reason, plan, keep)
        for event in told or ():
            yield event
        if told is not None:
            return
        yield ev.CompactionStarted(reason, len(plan.evict))
        summarizer = self._summarizer(view)
        previous = view.summary.content if view.summary else None
        try:
            text, cached_prefix = await self._summarised(summarizer, view, plan.evict, focus)
        except (SummaryError, ProviderError) as err:
            message = err.message if isinstance(err, ProviderError) else str(err)
            yield ev.CompactionFailed(f"could not summarise: {message}", reason)
            if (held := self._guard.failed()) is not None:
                yield held
            return
        text = await self._completed(text, previous, summarizer, view, plan.evict)
        # What stays, as the gauge counts it once the summary changes the system message (the
        # server's count of the old front no longer applies).
        rest = (usage.system_overflow + usage.memory
                + sum(view.counter.message(m) for m in plan.keep))
        proposal = CompactionProposal(
            self._conversation_id, text, tuple(plan.evict),
            view.summary.id if view.summary else None, usage.used, rest=rest,
            reason=reason, focus=focus,
            model=summarizer.model, prompt_tokens=summarizer.prompt_tokens,
            completion_tokens=summarizer.completion_tokens,
            cached_tokens=summarizer.cached_tokens if summarizer.cached_seen else None,
            calls=summarizer.calls, cached_prefix=cached_prefix)
        if preview:
            yield ev.CompactionProposed(proposal)
            return
        for event in self.store_proposal(proposal, text, usage.used):
            yield event

    def _fold(self, view: RequestBasis, usage: BudgetUsage,
              keep_recent_turns: int | None) -> tuple[CompactionPlan, int]:
        """What to fold in, and how many recent turns stay verbatim. Down to the low-water
        mark, not just under the threshold: each compaction changes the front of the request
        (the provider's cache then re-reads all of it), so the next one should be many turns
        away. Recent turns that would not fit under it with the summary are folded in too, all
        but the newest, which stays verbatim however large."""
        return _folding(view, usage, self._history.active, keep_recent_turns)

    def turns_folded(self, view: RequestBasis, pending: str, attached: int) -> int:
        """How many turns the compaction a send of `pending` (with `attached` tokens of files)
        starts would fold: 0 when the send stays under the threshold. Old tool outputs are
        pruned first, which may spare some: the figure is the most it folds."""
        usage = view.usage(pending, attached)
        if not usage.over_threshold:
            return 0
        question = Message("user", pending)
        extra = {id(question): attached}
        plan, _ = _folding(view, usage, [*self._history.active, question], None, extra)
        return sum(1 for m in plan.evict if m.role == "user")

    def _held_back(self, view: RequestBasis, reason: str, plan: CompactionPlan,
                   keep: int) -> list[ev.Event] | None:
        """Why this compaction does not go on (what to tell, maybe nothing), or None: it
        goes on. Nothing to fold, or the guard holds it (a loop, or too little to fold)."""
        if not plan.evict:
            if reason != "manual":
                return []
            return [ev.CompactionFailed(
                f"nothing to compact yet: the last {keep} turns are always kept verbatim",
                reason)]
        if (held := self._guard.starting(reason, plan.evict)) is not None:
            return [held]
        folding = sum(view.counter.message(m) for m in plan.evict)
        hold, told = self._guard.too_small(reason, folding, view.budget.tokens)
        if hold:
            return [told] if told is not None else []
        return None

    def _summarizer(self, view: RequestBasis) -> Summarizer:
        s = view.settings
        model = s.summary_model or s.model
        # The bundled small model follows short instructions in the conversation's language
        # (bench/local/summary_local.py), not the long English ones a remote model is sent. A
        # local chat model means the local server, which answers whatever the summary model's
        # name.
        local = LOCAL_MODEL_NAME in (s.model, model)
        return Summarizer(
            view.provider, model=model, max_tokens=view.summary_max_tokens,
            window=view.window, counter=view.counter,
            retries=min(s.max_retries, 2), backoff=self._backoff, sleep=self._sleep,
            style="plain" if local else "standard")

    async def _summarised(self, summarizer: Summarizer, view: RequestBasis,
                          evict: list[Message], focus: str | None) -> tuple[str, bool]:
        """The summary of `evict`, and whether it reused the chat request's cached front.
        Raises SummaryError or ProviderError when the summariser could not write one."""
        if (prefix := self._summary_prefix(evict)) is not None:
            # Too big for the server after all: the small prompt goes in chunks. Any other
            # failure is the summariser's, and asking again another way would not help.
            with contextlib.suppress(ContextOverflow, CalledATool):
                return await summarizer.summarize_prefix(
                    prefix.wire, focus, view.definitions, max_tokens=prefix.room), True
        previous = view.summary.content if view.summary else None
        return await summarizer.summarize(previous, self._tool_outputs.as_sent(evict),
                                          focus), False

    async def _completed(self, text: str, previous: str | None, summarizer: Summarizer,
                         view: RequestBasis, evict: list[Message]) -> str:
        """The summary with what it left out of `evict`: asked back into it by one more
        request (not of the demo model, which does not follow such an instruction), and what
        is still out kept below it, word for word, in the ledger."""
        if view.settings.summary_repair and LOCAL_MODEL_NAME not in (view.settings.model,
                                                                     summarizer.model):
            if left := left_out(text, previous, evict):
                text = await summarizer.repair(text, left)
        return ledger_for(text, previous, evict, self._history.all, view.counter,
                          view.details_max_tokens)

    def store_proposal(self, proposal: CompactionProposal, text: str,
                       before: int) -> list[ev.Event]:
        """Store `text` as the summary of `proposal.evict`, and count what that freed from
        `before`. The caller holds the session and checked the proposal still applies."""
        view = self._basis()
        edited = text.strip() != proposal.text.strip()
        kind = "edited" if edited else "manual" if proposal.reason == "manual" else "auto"
        # The live objects: a session read again since the proposal holds new ones, and these
        # are the ones the store marks covered.
        by_id = {m.id: m for m in self._history.all}
        evict = [by_id.get(m.id, m) for m in proposal.evict]
        summary = self._store.add_summary(
            self._conversation_id, text, evict, kind=kind, focus=proposal.focus,
            model=proposal.model)
        self._keep_summary(summary)
        self._history.changed()
        self._sent.compacted(self._history.active)
        after = self._basis().usage().used  # the front the new summary makes
        with contextlib.suppress(StoreError):  # the summary is kept; only its bill is not
            self._add_summary_usage(proposal, summary.id, max(0, before - after))
        # Before Finished, which callers (and `ask`) take as the compaction's last word.
        events: list[ev.Event] = []
        if view.settings.memory_suggestions and (found := self._suggest(evict)):
            events.append(ev.MemorySuggested(found))
        events.append(ev.CompactionFinished(
            summary.id, len(evict), before, after, proposal.reason,
            cost_prompt_tokens=proposal.prompt_tokens,
            cost_completion_tokens=proposal.completion_tokens, calls=proposal.calls,
            cached_prefix=proposal.cached_prefix,
            covered_ids=tuple(m.id for m in evict if m.id is not None)))
        held = self._guard.finished(proposal.reason, evict, before - after, view.budget.tokens)
        if held is not None:
            events.append(held)
        return events

    def _suggest(self, folded: list[Message]) -> int:
        """What the user typed in the turns just folded in that looks worth remembering, stored
        as suggestions for the user to accept or dismiss (never as memory: nothing enters it
        without the user's yes); a text the memory holds in any state is not offered again,
        nor one the guard would refuse (a sentence that holds a key), nor, while
        recall_by_meaning is on, one saying what the memory holds in other words. How many were
        new."""
        view = self._basis()
        secrets = known_secrets(view.settings)
        found = [(kind, text, m.id) for m in folded if m.role == "user" and not m.excluded
                 for kind, text in durable([typed_by_user(m)]) if refusal(text, secrets) is None]
        if not found:
            return 0
        try:
            if (meaning := view.meaning) is not None:
                # Nor one that says what the memory holds, or an earlier one of these, in other
                # words or the other language (the store's check is the same text only).
                have = [e.text for e in self._store.memories(("active", "suggested",
                                                              "dismissed"))]
                found = [found[i] for i in new_ones(meaning, [t for _, t, _ in found], have)]
            return len(self._store.add_suggestions(self._conversation_id, found))
        except StoreError:
            return 0  # the summary is stored; a suggestion is only a suggestion

    def _add_summary_usage(self, proposal: CompactionProposal, summary_id: int | None,
                           freed: int | None) -> None:
        self._store.add_usage(
            self._conversation_id, kind="summary", model=proposal.model,
            prompt_tokens=proposal.prompt_tokens, completion_tokens=proposal.completion_tokens,
            cached_tokens=proposal.cached_tokens, summary_id=summary_id, freed_tokens=freed,
            wait=STREAM_SAVE_WAIT_S)

    def tokens_after(self, proposal: CompactionProposal, text: str) -> int:
        """What the request would need once `proposal` is stored with `text` (an estimate:
        the gauge's count of the rest, plus the summary as the system message carries it)."""
        view = self._basis()
        # Stored, it brings search_history along: the note under its header, the definition.
        summary = view.summary_tokens(text, SUMMARY_NOTE if view.searches_history else "")
        return proposal.rest + (summary + self._search_definition_adds() if text.strip() else 0)

    def _search_definition_adds(self) -> int:
        """Tokens over the system reserve search_history's definition adds to the request once
        a first summary is stored (0 when it is offered already, or will not be)."""
        view = self._basis()
        if view.summary is not None or not view.searches_history:
            return 0
        return definition_overflow(view.counter, view.prompt, view.budget.system_reserve,
                                   list(view.specs))

    def commit(self, proposal: CompactionProposal, text: str) -> list[ev.Event]:
        """Store a proposal the user accepted, with `text`, unless the session moved on since
        it was made. The caller holds the session and the compaction lock."""
        view = self._basis()
        why = stale(proposal, self._conversation_id,
                    view.summary.id if view.summary else None, self._history.all)
        if why is not None:
            self.discard(proposal)
            return [ev.CompactionFailed(f"the proposed summary was not stored: {why}",
                                        proposal.reason)]
        # Counted now, not when proposed: the request as it is before this summary.
        return self.store_proposal(proposal, text.strip(), view.usage().used)

    def discard(self, proposal: CompactionProposal) -> None:
        """The user did not want the proposal: nothing of the conversation changes, but the
        summary requests were made and are counted (/cost), with no summary and nothing freed."""
        if proposal.conversation_id != self._conversation_id:
            return  # the session it cost in is not this one; its counts are not ours to add
        with contextlib.suppress(StoreError):
            self._add_summary_usage(proposal, None, None)

    def _summary_prefix(self, evict: list[Message]) -> SummaryPrefix | None:
        """The chat request's own front up to the last message to fold in (system message with
        the summary so far, then the turns as they were sent, a paste cut to fit as cut), when
        the summary model is the chat model and that front leaves the summary room in its
        window: the provider's prompt cache (llama.cpp's KV cache) already holds it, so the
        summary request costs the instruction only, and the cache stays warm. None: use the
        small summary prompt."""
        view = self._basis()
        s = view.settings
        if s.summary_model not in ("", s.model) or not evict:
            return None
        active = self._history.active
        ids = {m.id for m in evict}
        last = max((i for i, m in enumerate(active) if m.id in ids), default=-1)
        fitted = fit_window(active[:last + 1], budget=view.window * 4,
                            counter=view.counter, system=view.system, sent_as=self._sent.texts)
        wire = fitted.wire
        if len(fitted.sent) != last + 1 or not wire or wire[-1].get("role") != "assistant":
            return None  # a message left out, or no reply to end on: not the chat front
        front = (view.system.tokens + fitted.history_tokens + view.counter.text(PREFIX_INSTRUCTION)
                 + PROMPT_SLACK + view.definitions_tokens)
        # A front that fills the window (a paste cut to the whole budget) leaves the summary
        # less than its cap: a shorter summary, once, costs less than the small prompt reading
        # that front again from its first token.
        room = min(view.window - int(front * (1 + PREFIX_COUNT_MARGIN)),
                   view.summary_max_tokens)
        if room < view.summary_max_tokens * PREFIX_SUMMARY_SHARE:
            return None
        return SummaryPrefix(wire, room)


def _folding(view: RequestBasis, usage: BudgetUsage, history: list[Message],
             keep_recent_turns: int | None,
             extra: dict[int, int] | None = None) -> tuple[CompactionPlan, int]:
    """Compactions._fold's plan for `history`; `extra`: tokens a message (by id()) carries
    beside its text (files attached to a question not sent yet)."""
    s = view.settings
    keep = s.keep_recent_turns if keep_recent_turns is None else keep_recent_turns
    extra = extra or {}
    plan = plan_compaction(history, keep)
    room = (int(view.budget.tokens * s.compact_low_water) - view.summary_max_tokens
            - view.details_max_tokens - usage.system_overflow - usage.memory)
    while keep > 1 and sum(view.counter.message(m) + extra.get(id(m), 0)
                           for m in plan.keep) > room:
        keep -= 1
        plan = plan_compaction(history, keep)
    return plan, keep
