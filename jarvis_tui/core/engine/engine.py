"""The conversation engine: layers 1-3, retries, and the events that report them.

One round = one user message answered. Before the request, layer 2 compacts if the conversation
passed the threshold; layer 1 fits the request; when the provider still says the context is
full, layer 3 compacts (or trims) and retries the same round. Transient faults back off and retry.

Where to read each part: what a request is made of, front.py (taken as the immutable value of
request_basis.py); how it is fitted, request_plan.py; a round's steps, round.py; a failed
request's recovery, recovery.py; one request, requests.py; a compaction, compactions.py. This
file holds the session: which question a round answers, the session's lock shared with other
processes, and the collaborators, wired once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget, BudgetUsage
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.costs import Tally, tally
from jarvis_tui.core.engine.branches import (
    COVERED_REGENERATE,
    EXCLUDED_REGENERATE,
    NO_REGENERATE,
    NOT_SHOWN,
    Branches,
)
from jarvis_tui.core.engine.budgeting import details_room, summary_cap
from jarvis_tui.core.engine.compaction_guard import CompactionGuard
from jarvis_tui.core.engine.compactions import Compactions
from jarvis_tui.core.engine.front import EMBED_AFTER, RequestFront
from jarvis_tui.core.engine.recovery import Recovery
from jarvis_tui.core.engine.reply_log import ReplyLog
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.requests import Requests
from jarvis_tui.core.engine.retry_policy import backoff
from jarvis_tui.core.engine.round import Round, RoundParts
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.engine.session_sync import Saved, SessionSync, persisting
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.engine.tool_round import ToolPolicy, ToolResults
from jarvis_tui.core.engine.window_limit import WindowLimit
from jarvis_tui.core.messages import COMPLETE, FAILED, ROOT, Message
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.records import StoreError, Summary
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S, SessionMeta
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.specs import Approve, ToolBox
from jarvis_tui.core.window.anchor import Anchor
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter


class Engine:
    """A session's conversation and the rounds that answer it. What it learns about the server
    is held by collaborators: `limit` (the window), `calibration` (our counts against the
    server's), `replies` (the reply being written), `sent` (what requests sent in place of a
    message), `front` (what the next request is made of: settings, summary, memory, tools,
    recall), `requests` (one request and what it teaches), `recovery` (a failed one's step),
    `compactions`, `branches` (the branch shown and the moves between them), and `sync` (the
    session shared with other processes)."""

    def __init__(self, settings: Settings, store: Store, provider: Provider,
                 conversation_id: int | None = None, *, counter: TokenCounter | None = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 jitter: Callable[[], float] = random.random,
                 forget_learned_limit: bool = False, tools: ToolBox | None = None,
                 approve: Approve | None = None):
        # Who allows each of the model's tool calls (None: every call not allowlisted is
        # refused, as `ask` does without --allow-tool).
        self.approve = approve
        self.store = store
        self.provider = provider
        self._sleep = sleep
        self._jitter = jitter
        self._lock = asyncio.Lock()
        if conversation_id is None:
            conversation_id = store.create_conversation(model=settings.model).id
        conv = store.get_conversation(conversation_id)
        if conv is None:
            raise ValueError(f"there is no session {conversation_id}")
        self.conversation = conv
        meta = SessionMeta(store, conv.id)
        self._session = store.session_lock(conv.id)
        self.sync = SessionSync(self._session, conv.id, read_again=self._read_again)
        self._history = History(store.messages(conv.id), store.head(conv.id))
        # While a regenerated reply is on its way: the tip of the branch it left, shown again
        # if the new reply never comes; and the question asked anew for it, if it is one.
        self._back_to: int | None = None
        self._anew: Message | None = None
        self.limit = WindowLimit(settings, meta)
        if forget_learned_limit:
            # The window was given on the command line: a limit learned under another one
            # no longer holds.
            self.limit.window_given()
        self.calibration = Calibration(settings, meta, counter)
        self.replies = ReplyLog(store, conv.id, self._history)
        self.sent = SentTexts()
        self.guard = CompactionGuard()
        self.tool_policy = ToolPolicy()
        self.tool_results = ToolResults(store, conv.id, self._history)
        self.tool_outputs = ToolOutputShaper(settings, self._history, self.calibration,
                                             self.sent, meta)
        self.tool_outputs.restore_stubs()
        self.front = RequestFront(settings, store, conv.id, self._history, self.limit,
                                  self.calibration, self.sent, self.tool_outputs, meta, tools)
        self.branches = Branches(store, lambda: self.conversation, self._history, self.front,
                                 self.calibration)
        self.compactions = Compactions(self.basis, store, conv.id, self._history, self.sent,
                                       self.tool_outputs, self.guard,
                                       keep_summary=self._keep_summary, backoff=self._backoff,
                                       sleep=sleep)
        self.requests = Requests(self.basis, store, conv.id, self.limit, self.calibration,
                                 self.replies, self.tool_outputs, compact=self.compact,
                                 withdraw=self._withdraw)
        self.recovery = Recovery(self.requests, self.front.refused_tools, self.basis,
                                 backoff=self._backoff, sleep=sleep,
                                 search_refused=self.front.search_refused,
                                 images_refused=self.front.images_refused)
        self.front.refresh_memory()

    # ---- what the collaborators hold, by the names callers know -------------------------

    @property
    def settings(self) -> Settings:
        return self.front.settings

    @property
    def summary(self) -> Summary | None:
        """The summary in force on the branch shown."""
        return self.front.summary

    @summary.setter
    def summary(self, summary: Summary | None) -> None:
        self.front.summary = summary

    @property
    def tools(self) -> ToolBox | None:
        """What runs the model's tool calls (the MCP servers): set once they connect."""
        return self.front.tools

    @tools.setter
    def tools(self, tools: ToolBox | None) -> None:
        self.front.tools = tools

    @property
    def messages(self) -> list[Message]:
        """Every message of the session, oldest first; read-only for callers."""
        return self._history.all

    @property
    def context_window(self) -> int:
        return self.limit.size

    @property
    def window_source(self) -> str:
        return self.limit.source

    @property
    def counter(self) -> TokenCounter:
        return self.calibration.counter

    @property
    def anchor(self) -> Anchor | None:
        return self.calibration.anchor

    @anchor.setter
    def anchor(self, anchor: Anchor | None) -> None:
        self.calibration.anchor = anchor

    @property
    def framing(self) -> float | None:
        return self.calibration.framing

    @property
    def last_usage(self) -> ev.Usage | None:
        """The server's counts of the latest request that reported any (the gauge's "last
        turn")."""
        return self.requests.last_usage

    @property
    def streaming_reply(self) -> Message | None:
        """The reply being written, as far as the store holds it."""
        return self.replies.streaming

    @property
    def unsaved(self) -> Message | None:
        """The last reply, when the store could not take it: only memory holds it."""
        return self.replies.unsaved

    async def detect_window(self) -> ev.WindowDetected | None:
        return await self.limit.detect(self.provider)

    def apply_settings(self, settings: Settings) -> None:
        """New settings take effect from the next request (the settings screen's Save)."""
        self.tool_outputs.apply(settings)
        self.front.settings = settings
        self.limit.apply(settings)
        self.calibration.apply(settings)
        self.guard.resume()  # a paused automatic compaction may work with these
        self.front.refresh_memory()  # memory_budget may have changed

    # ---- numbers -------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        """The budget at the window now (budgeting.py)."""
        return self.front.budget

    @property
    def summary_max_tokens(self) -> int:
        return summary_cap(self.settings, self.budget)

    @property
    def details_max_tokens(self) -> int:
        return details_room(self.settings, self.budget)

    def history(self) -> list[Message]:
        """What the request is built from: messages no summary covers, and covered ones the
        user pinned back (from /recall); failed ones left out. Kept up to date, not rebuilt:
        the caller must not change the list."""
        return self._history.active

    def basis(self) -> RequestBasis:
        """What the next request is made of, as it stands now (request_basis.py): what the
        plan, the gauge, a compaction and a request's sending read."""
        return self.front.basis(self.provider)

    def usage(self, pending: str = "", attached: int = 0) -> BudgetUsage:
        """What the next request would need without windowing: what the gauge shows."""
        return self.basis().usage(pending, attached)

    def turns_folded(self, pending: str = "", attached: int = 0) -> int:
        """How many turns a send of `pending` with `attached` tokens of files would have
        compacted first (Compactions.turns_folded)."""
        return self.compactions.turns_folded(self.basis(), pending, attached)

    def _keep_summary(self, summary: Summary) -> None:
        self.summary = summary

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return backoff(self.settings, attempt, retry_after, self._jitter)

    def system_prompt(self) -> str:
        """The prompt the system message starts with, before any summary: the configured one,
        then the user's memory (one system message: strict chat templates refuse a second).
        Every path that builds or weighs a request (the round's fit, the gauge, a compaction's
        prefix) reads it here, so all of them see the same front."""
        return self.basis().system_prompt

    async def _over_threshold(self) -> AsyncIterator[ev.Event]:
        """Past the threshold: old tool outputs go first, and only then, if the request is
        still over, is anything summarised."""
        if not self.usage().over_threshold:
            return
        for deeper in (False, True):
            if (pruned := self.tool_outputs.prune(deeper=deeper)) is not None:
                yield pruned
                if not self.usage().over_threshold:
                    return
        async with aclosing(self.compact(reason="threshold")) as compaction:
            async for event in compaction:
                yield event

    def _round(self, user: Message) -> AsyncIterator[ev.Event]:
        """Answer `user` (round.py), through the engine's collaborators."""
        return Round(RoundParts(
            self.basis, self.front, self.limit, self.calibration, self.replies, self.requests,
            self.recovery, self.tool_results, self.tool_policy, self.approve,
            self._over_threshold)).run(user)

    # ---- layer 2 -------------------------------------------------------------------------
    # The compaction itself is Compactions' (compactions.py); holding the session is the
    # engine's, since its rounds hold the same lock and compact under it.

    async def compact(self, *, reason: str = "manual", focus: str | None = None,
                      keep_recent_turns: int | None = None,
                      preview: bool = False) -> AsyncIterator[ev.Event]:
        """Fold older turns into the summary. Yields Started/Finished/Failed (or nothing when
        there is nothing to fold and the compaction was not asked for by the user). `preview`:
        store nothing; the summary comes back as CompactionProposed, for commit_compaction or
        discard_compaction once the user has read it."""
        took = not self._session.held
        if took and not self._session.try_acquire():
            # Another jarvis-tui is answering in this session; it compacts for itself.
            if reason == "manual":
                yield ev.CompactionFailed(self.sync.busy_text(), reason)
            return
        try:
            if took and (added := self.catch_up()):
                yield ev.SessionChanged(added)
            async with self._lock, aclosing(self.compactions.run(
                    reason, focus, keep_recent_turns, preview)) as it:
                async for event in it:
                    yield event
        finally:
            if took:
                self._session.release()

    async def commit_compaction(self, proposal: CompactionProposal,
                                text: str) -> AsyncIterator[ev.Event]:
        """Store a proposal the user accepted, with `text` (edited or as proposed): Finished as
        compact's, or Failed saying why it no longer applies, with nothing stored. A round of
        this process that is on its way is finished first, as a round waits for another's."""
        if not text.strip():
            self.discard_compaction(proposal)
            yield ev.CompactionFailed("the proposed summary was not stored: it is empty, and "
                                      "an empty summary would lose the turns it folds in",
                                      proposal.reason)
            return
        await self.sync.after_own_round()
        async with aclosing(self.sync.wait()) as waiting:
            async for event in waiting:
                yield event
        if not self._session.held:
            yield ev.CompactionFailed(self.sync.waited_text(), proposal.reason)
            return
        try:
            if added := self.catch_up():
                yield ev.SessionChanged(added)
            async with self._lock:
                for event in self.compactions.commit(proposal, text):
                    yield event
        finally:
            self._session.release()

    def tokens_after(self, proposal: CompactionProposal, text: str) -> int:
        """What the request would need once `proposal` is stored with `text`."""
        return self.compactions.tokens_after(proposal, text)

    def discard_compaction(self, proposal: CompactionProposal) -> None:
        """The user did not want the proposal: its summary requests are still counted."""
        self.compactions.discard(proposal)

    def edit_summary(self, text: str) -> Summary:
        if self.summary is None:
            raise ValueError("there is no summary to edit yet")
        self.summary = self.store.edit_summary(self.summary.id, text)
        return self.summary

    # ---- a round -------------------------------------------------------------------------

    async def stream_reply(self, user_text: str | Message, *,
                           after: int | None = None) -> AsyncIterator[ev.Event]:
        """Answer one user message; the message is stored before any request leaves.

        A round holds the session's lock (another jarvis-tui's round on it is waited for), so
        each reply stays with its question; what another process added meanwhile is read first.
        A Message may be passed so the caller's record (already on screen) is the stored one.
        `after`: the message it follows, when not the last one shown (an edited question: the
        turns after `after` stay on the branch they were on)."""
        user = user_text if isinstance(user_text, Message) else Message("user", user_text)
        if after is not None:
            user.parent_id = after
        async with aclosing(self._turn(user)) as turn:
            async for event in turn:
                yield event

    async def regenerate(self, question: Message | None = None, *,
                         anew: Message | None = None) -> AsyncIterator[ev.Event]:
        """Answer the last question (or `question`, one shown) again. The reply it had, and
        anything after it, stays on a branch of its own; for the last question, the request is
        the one that reply was written for, byte for byte. A question with no reply but later
        turns after it (asks_anew) is asked anew as a new version of itself: `anew`, the
        caller's record of that version (already on screen), when it has one."""
        async with aclosing(self._turn(question, again=True, anew=anew)) as turn:
            async for event in turn:
                yield event

    async def _turn(self, user: Message | None, *, again: bool = False,
                    anew: Message | None = None) -> AsyncIterator[ev.Event]:
        async with aclosing(self.sync.wait()) as waiting:
            async for event in waiting:
                yield event
        if not self._session.held:
            yield ev.Failed(self.sync.waited_text())
            return
        try:
            if added := self.catch_up():
                yield ev.SessionChanged(added)
            self.guard.new_turn()
            self.replies.save_unsaved()
            self.tool_results.answer_interrupted()
            if again:
                chosen = self._asked_again(user)
                if isinstance(chosen, str):
                    yield ev.Failed(chosen)
                    return
                user = chosen
                if self.branches.asks_anew(user):
                    # The turns after it stay on the branch of the version asked before.
                    self._back_to = self.branches.head_id
                    self._anew = anew or Message("user", user.content, pasted=user.pasted)
                    self._anew.parent_id = user.parent_id or ROOT
                    user = self._anew
                elif user.status == FAILED:
                    # Asked before and never answered (the server was down): ask again.
                    user.status = COMPLETE
                    self.store.update_message(user)
                    self._history.changed()
                if user is not self._anew and self.branches.head_id != user.id:
                    self._back_to = self.branches.head_id
                    self.branches.show_branch(user.id)
            if user is None:  # asked with nothing to ask: only regenerate may, handled above
                yield ev.Failed(NO_REGENERATE)
                return
            if not again or user is self._anew:
                async with aclosing(self._saving_question(user)) as saving:
                    async for event in saving:
                        yield event
            try:
                await self._compaction_settled()
                # aclosing: when the caller stops listening (Esc), the round is closed at once,
                # so the partial reply is stored now rather than whenever the generator is
                # collected.
                await self.front.embed_waiting()
                async with aclosing(self._round(user)) as round_events:
                    async for event in round_events:
                        yield event
                await self.front.embed_waiting(EMBED_AFTER)
            except BaseException:
                if self.messages[-1] is user and user.status != FAILED:
                    # Stopped before any reply text: like a failed round, the message stays in
                    # the store but is not sent again as if it had been answered.
                    self._withdraw(user)
                raise
        finally:
            self._back_to = self._anew = None
            self._session.release()

    def _asked_again(self, question: Message | None) -> Message | str:
        """The question to answer again (`question`, else the last), as this process holds
        it now; or why there is none to (a line for the user)."""
        if question is not None and not any(m is question for m in self.messages):
            # Read again since it was chosen (another jarvis-tui answered in the session
            # meanwhile): the same stored question, in a new record.
            at = self._history.position(question.id) if question.id is not None else None
            if at is None:
                return NOT_SHOWN
            question = self.messages[at]
        question = question or self.branches.last_question()
        if question is None:
            return NO_REGENERATE
        if question.covered:
            return COVERED_REGENERATE
        if question.excluded:
            return EXCLUDED_REGENERATE
        return question

    async def _compaction_settled(self) -> None:
        """Wait for a compaction running in the background to finish: a request is fitted to
        the history it leaves."""
        async with self._lock:
            return

    async def _saving_question(self, user: Message) -> AsyncIterator[ev.Event]:
        """Store the question and show it; one that follows an earlier message starts a branch
        there, and the old branch is shown again if the store cannot take it."""
        before = self.branches.head_id
        if user.parent_id is not None and user.parent_id != before:
            self._history.show(user.parent_id)
        try:
            async with aclosing(persisting(
                    lambda: self.store.add_message(self.conversation.id, user,
                                                   wait=STREAM_SAVE_WAIT_S),
                    Saved())) as saving:
                async for event in saving:
                    yield event
        except BaseException:
            if self.branches.head_id != before:
                self._history.show(before)
            raise
        self._history.append(user)
        if user.parent_id != before:
            self.branches.changed()

    def catch_up(self) -> int:
        """Read the session again if another process added to it since it was loaded; how
        many messages it added (0: nothing changed)."""
        return self.sync.catch_up()

    def _read_again(self) -> int:
        """What catching up means for the engine, run by `sync` under the session's hold:
        the history, summary and counts read again when the store's stamp differs."""
        stamp = self.store.stamp(self.conversation.id)
        stored = self._history.stored
        mine = (len(stored), max((m.id or 0 for m in stored), default=0),
                max(self.branches.newest_summary, self.summary.id if self.summary else 0),
                self.branches.head_id)
        if stamp == mine:
            return 0
        count, known = stamp[0], len(stored)
        self._history.reload(self.store.messages(self.conversation.id),
                             self.store.head(self.conversation.id))
        self.branches.load_summary()
        # Another process's requests: our count of the last one is stale.
        self.calibration.forget_anchor()
        self.sent.clear()
        self.tool_outputs.restore_stubs()
        return max(1, count - known)

    def pinned_usage(self) -> tuple[int, int]:
        """(messages, tokens) pinned: always sent, so always taken from the budget."""
        active = self.history()
        pinned = [active[i] for i in self._history.pinned]
        return len(pinned), sum(self.counter.message(m) for m in pinned)

    def set_pinned(self, message: Message, pinned: bool = True) -> None:
        """A pinned message is always sent verbatim and never folded into a summary."""
        message.pinned = pinned
        self.store.update_message(message)
        self._history.changed()

    def session_cost(self) -> Tally:
        """The session's requests so far, chat and summary, with their cost where the config
        prices the model; read from the store, so it counts other processes' rounds too."""
        return tally(self.store.usage_totals(self.conversation.id), self.settings.prices)

    def _withdraw(self, user: Message) -> None:
        if self._back_to is not None and user is not self._anew:
            # A regenerated reply that never came: the question keeps the reply it had.
            self.branches.show_branch(self._back_to)
            return
        user.status = FAILED
        self.sent.drop(user)
        self._history.changed()
        # The store may be what failed; the message is left out of this session's requests
        # in any case.
        with contextlib.suppress(StoreError):
            self.store.update_message(user)
        if self._back_to is not None:
            # A question asked anew that was not answered either: it stays stored as a failed
            # version of the question, and the turns after the one before come back.
            self.branches.show_branch(self._back_to)
