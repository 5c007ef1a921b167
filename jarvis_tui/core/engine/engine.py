"""The conversation engine: layers 1-3, retries, and the events that report them.

One round = one user message answered. Before the request, layer 2 compacts if the conversation
passed the threshold; layer 1 fits the request; when the provider still says the context is
full, layer 3 compacts (or trims) and retries the same round. Transient faults back off and retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget, BudgetUsage
from jarvis_tui.core.compaction.proposal import CompactionProposal
from jarvis_tui.core.costs import Tally, tally
from jarvis_tui.core.details.ledger import split
from jarvis_tui.core.embed.meaning import Meaning, chosen
from jarvis_tui.core.engine.branches import (
    COVERED_REGENERATE,
    EXCLUDED_REGENERATE,
    NO_REGENERATE,
    NOT_SHOWN,
    Branches,
)
from jarvis_tui.core.engine.budgeting import budget_for, details_room, summary_cap
from jarvis_tui.core.engine.compaction_guard import CompactionGuard
from jarvis_tui.core.engine.compactions import Compactions
from jarvis_tui.core.engine.recovery import Failed, Recovery, Verdict
from jarvis_tui.core.engine.reply_log import ReplyLog
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.request_plan import Plan, plan_request
from jarvis_tui.core.engine.requests import Attempt, Requests
from jarvis_tui.core.engine.retry_policy import RoundRetries, backoff
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.engine.session_sync import Saved, SessionSync, persisting, stored
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.engine.tool_round import ToolPolicy, run_calls
from jarvis_tui.core.engine.window_limit import WindowLimit
from jarvis_tui.core.memory.remember import Alike
from jarvis_tui.core.memory.section import EMPTY, MemorySection, memory_section
from jarvis_tui.core.messages import COMPLETE, FAILED, PARTIAL, ROOT, Message
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.providers.errors import ProviderError
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, with_tool_sentence
from jarvis_tui.core.recall.alike import alike
from jarvis_tui.core.recall.sessions import Scrub, joined, recall_beyond, search_sessions
from jarvis_tui.core.recall.turns import Recalled, recall, search_covered
from jarvis_tui.core.safety.redact import redactor
from jarvis_tui.core.settings.config import Settings, known_secrets
from jarvis_tui.core.store.records import StoreError, Summary
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S, SessionMeta
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HistorySearch, result_cap
from jarvis_tui.core.tools.history_tool import (
    HISTORY_SPEC,
    SEARCH_REFUSED_KEY,
    SUMMARY_NOTE,
    WithHistorySearch,
    refusing_models,
)
from jarvis_tui.core.tools.refused import RefusedTools
from jarvis_tui.core.tools.results import (
    INTERRUPTED,
    calls_of,
    definitions_text,
    tool_definitions,
    tool_result_message,
    unanswered,
)
from jarvis_tui.core.tools.specs import Approve, ToolBox, ToolSpec
from jarvis_tui.core.window.anchor import Anchor
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter

# Messages embedded before a request at most: about 2 s on one core for an older store's
# backlog, a batch a send; after the reply, the few messages the round stored.
EMBED_BEFORE = 2048
EMBED_AFTER = 16
# The most of the window a statement or paste may recall (half the share, and no more than
# this): its turns are carried, and re-read, in every request until the next compaction.
STATEMENT_SHARE = 0.15


@dataclass
class _RoundState:
    """What a round keeps across its requests: the steps that ended in tool calls, what it
    has tried since the last answered one, and the recalled turns it told of."""

    steps: int = 0
    tried: RoundRetries = field(default_factory=RoundRetries)
    told: set[tuple[int, ...]] = field(default_factory=set)


class Engine(Branches):
    """A session's conversation and the rounds that answer it. What it learns about the server
    is held by collaborators: `limit` (the window), `calibration` (our counts against the
    server's), `replies` (the reply being written), `sent` (what requests sent in place of a
    message), `requests` (one request and what it teaches), `sync` (the session shared
    with other processes), and the summariser for compactions."""

    def __init__(self, settings: Settings, store: Store, provider: Provider,
                 conversation_id: int | None = None, *, counter: TokenCounter | None = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 jitter: Callable[[], float] = random.random,
                 forget_learned_limit: bool = False, tools: ToolBox | None = None,
                 approve: Approve | None = None):
        self.settings = settings
        # What runs the model's tool calls, and who allows each one (None: every call not
        # allowlisted is refused, as `ask` does without --allow-tool).
        self.tools = tools
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
        self.summary: Summary | None = None
        self._known_summary = 0  # the newest summary id of the session this process has seen
        self._load_summary()
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
        # Loads its model on first use.
        self.meaning = Meaning(store, chosen(settings.base_url, settings.embedding_model,
                                             settings.api_key))
        self.guard = CompactionGuard()
        self.tool_policy = ToolPolicy()
        self.refused_tools = RefusedTools()  # tools the provider would not be told of
        self._defs_cache: tuple[object, int] = (None, 0)
        self._meta = meta
        self.tool_outputs = ToolOutputShaper(settings, self._history, self.calibration,
                                             self.sent, meta)
        self.tool_outputs.restore_stubs()
        self.compactions = Compactions(self.basis, store, conv.id, self._history, self.sent,
                                       self.tool_outputs, self.guard,
                                       keep_summary=self._keep_summary, backoff=self._backoff,
                                       sleep=sleep)
        self._search_refused_by = refusing_models(meta.get(SEARCH_REFUSED_KEY))
        self.requests = Requests(self.basis, store, conv.id, self.limit, self.calibration,
                                 self.replies, self.tool_outputs, compact=self.compact,
                                 withdraw=self._withdraw)
        self.recovery = Recovery(self.requests, self.refused_tools, self.basis,
                                 backoff=self._backoff, sleep=sleep,
                                 search_refused=self._search_refused)
        # The user's memory as the requests carry it, and what it was read at: the memory's
        # stamp and the section's budget (refresh_memory).
        self._memory = EMPTY
        self._memory_key: tuple[object, ...] | None = None
        self.refresh_memory()

    # ---- what the collaborators hold, by the names callers know -------------------------

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
        self.settings = settings
        self.limit.apply(settings)
        self.calibration.apply(settings)
        self.guard.resume()  # a paused automatic compaction may work with these
        self.refresh_memory()  # memory_budget may have changed

    # ---- numbers -------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        """The budget at the window now (budgeting.py)."""
        return budget_for(self.settings, self.context_window)

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
        specs = tuple(self.tool_specs())
        return RequestBasis(
            settings=self.settings, provider=self.provider, window=self.context_window,
            window_source=self.window_source, budget=self.budget, calibration=self.calibration,
            prompt=self.configured_prompt(), memory=self.memory_sent(), summary=self.summary,
            note=self.summary_note(), history=self._history, sent=self.sent,
            tool_outputs=self.tool_outputs, specs=specs,
            definitions_tokens=self.definitions_tokens(),
            searches_history=self.may_search_history(), meaning=self.by_meaning(),
            recall=self._recall)

    def usage(self, pending: str = "") -> BudgetUsage:
        """What the next request would need without windowing: what the gauge shows."""
        return self.basis().usage(pending)

    def _keep_summary(self, summary: Summary) -> None:
        self.summary = summary

    def _recall(self, text: str, shrink: float = 1.0, user: Message | None = None,
                free: int | None = None) -> Recalled:
        """This session's folded turns `text` is about, then, if it points beyond the session,
        other sessions' turns: one budget, this session's first. `free`: the room the request
        leaves under the window; what the ranker adds by meaning takes no more, so the newest
        turns stay as they are (the turns the words name may push the oldest out, as always)."""
        budget = int(self.context_window * self.settings.recall_budget * shrink)
        statement = int(self.context_window * STATEMENT_SHARE * shrink)
        present = self.sent.carried_by_others(user)
        own = Recalled()
        meaning = self.by_meaning()
        if self.summary:  # nothing is folded without one
            own = recall(self.store, self.conversation.id, self._history, text, self.counter,
                         budget, present, split(self.summary.content)[1], meaning, free,
                         statement)
        if not self.settings.recall_other_sessions:
            return own
        return joined(own, recall_beyond(self.store, self.conversation.id, text, self.counter,
                                         budget - own.tokens, present, self._history.all,
                                         self.beyond_scrub(), meaning,
                                         None if free is None else max(0, free - own.tokens)))

    async def embed_waiting(self, limit: int = EMBED_BEFORE) -> None:
        """Embed stored messages that have no vector yet, newest first, in a thread: the
        question just stored and the reply before it, and, a batch per send, what an older
        store never had. The event loop (the screen, typing) goes on meanwhile."""
        if self.settings.recall_by_meaning and self.meaning.ready:
            await asyncio.to_thread(self.meaning.index, None, limit)

    def beyond_scrub(self) -> Scrub | None:
        """What other sessions' text goes through before this one sends or shows it: their
        secrets hidden, unless the user turned that off (None)."""
        if not self.settings.recall_redact_secrets:
            return None
        return redactor(known_secrets(self.settings))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return backoff(self.settings, attempt, retry_after, self._jitter)

    def _search_refused(self) -> None:
        """The server refused search_history: kept with the session, so the model is not
        offered it again, this run or the next."""
        self._search_refused_by.append(self.settings.model)
        self._meta.remember(SEARCH_REFUSED_KEY, self._search_refused_by)

    # ---- tools ---------------------------------------------------------------------------

    def tool_specs(self) -> list[ToolSpec]:
        box = self._toolbox()
        return self.refused_tools.offered(box.specs()) if box is not None else []

    def _searches_history(self) -> bool:
        """Whether the model is offered search_history: while a summary covers turns (so the
        definitions change with the summary only), unless it is off or the server refused it."""
        return self.summary is not None and self.may_search_history()

    def may_search_history(self) -> bool:
        # Not for the bundled local model: offered it after a compaction, it called it on
        # ordinary turns, over and over, then answered every later turn with nothing (the
        # cache bench's local run); asked to search, it called it 0 times in 6, and the answer
        # had the fact less often than with the tool off (bench/search_tool_local.py). The
        # details ledger and recall bring folded facts back without the model's help.
        return (self.settings.history_search_tool
                and self.settings.model != LOCAL_MODEL_NAME
                and self.settings.model not in self._search_refused_by
                and bool(self.refused_tools.offered([HISTORY_SPEC])))

    def _toolbox(self) -> ToolBox | None:
        """The tools a round offers and runs: the MCP tools, and search_history beside them."""
        if not self._searches_history():
            return self.tools
        s = self.settings
        cap = result_cap(self.context_window, s.recall_budget, self.budget.tokens,
                         s.tool_output_share)
        search = HistorySearch(self._folded_turns, self.counter, cap,
                               self._other_sessions if s.recall_other_sessions else None)
        return WithHistorySearch(search, self.tools)

    def by_meaning(self) -> Meaning | None:
        """What ranks by meaning beside the words, in recall and every search: None while the
        user has recall_by_meaning off."""
        return self.meaning if self.settings.recall_by_meaning else None

    def alike(self) -> Alike | None:
        """What finds a memory entry that says what a text says in other words or the other
        language (recall/alike.py), for the memory's duplicate check; None while the user has
        recall_by_meaning off (then only the same text is a duplicate)."""
        meaning = self.by_meaning()
        return None if meaning is None else functools.partial(alike, meaning)

    def _folded_turns(self, query: str, limit: int) -> list[list[Message]]:
        """For search_history: this session's folded turns that match."""
        return search_covered(self.store, self.conversation.id, self._history, query, limit,
                              self.by_meaning())

    def _other_sessions(self, query: str, limit: int) -> list[tuple[list[Message], str]]:
        """For search_history's all_sessions: the other sessions' turns that match."""
        found = search_sessions(self.store, query, limit, beside=self.conversation.id,
                                scrub=self.beyond_scrub(), meaning=self.by_meaning())
        return [(f.turn, f.where) for f in found]

    def configured_prompt(self) -> str:
        """The configured prompt, and for the bundled model, while it has tools, a sentence on
        when to call them (local_server.py): what the system reserve is for. Tools configured,
        not offered this request: a step past the limit keeps the same front."""
        prompt = self.settings.system_prompt
        if self.settings.model == LOCAL_MODEL_NAME and self.tool_specs():
            return with_tool_sentence(prompt)
        return prompt

    def system_prompt(self) -> str:
        """The prompt the system message starts with, before any summary: the configured one,
        then the user's memory (one system message: strict chat templates refuse a second).
        Every path that builds or weighs a request (the round's fit, the gauge, a compaction's
        prefix) reads it here, so all of them see the same front."""
        return self.basis().system_prompt

    # ---- memory ----------------------------------------------------------------------------

    def memory_budget(self) -> int:
        """The memory section's room: the setting (0: memory off), but never more than a tenth
        of the request's budget, so a small window keeps its room for the conversation."""
        return max(0, min(self.settings.memory_budget, self.budget.tokens // 10))

    def refresh_memory(self) -> bool:
        """Read the memory again when it changed since it was read (here or in another
        jarvis-tui: the store's stamp says) or its budget did; whether the section was built
        anew. Called at the start of each round, not per request or per token: the front of
        the request changes only when memory does, so the provider's prompt cache holds."""
        budget = self.memory_budget()
        try:
            key = (self.store.memory_stamp(), budget)
            if key == self._memory_key:
                return False
            entries = self.store.memories()
        except StoreError:
            return False  # the memory read before stays; a round is not failed over it
        self._memory_key = key
        self._memory = memory_section(entries, self.counter, budget)
        return True

    def memory_sent(self) -> MemorySection:
        """What the next request carries of the memory: the entries sent, those left out for
        the budget, and its tokens as counted now (the counter is calibrated as replies come)."""
        section = self._memory
        if section.text and (tokens := self.counter.text(section.text)) != section.tokens:
            section = replace(section, tokens=tokens)
        return section

    def summary_note(self) -> str:
        return SUMMARY_NOTE if self._searches_history() else ""

    def definitions(self) -> list[dict]:
        return tool_definitions(self.tool_specs())

    def definitions_tokens(self) -> int:
        """Tokens of the tool definitions every request carries (0 without tools)."""
        defs = self.definitions()
        if not defs:
            return 0
        key = (definitions_text(defs), self.counter.factor)
        if self._defs_cache[0] != key:
            self._defs_cache = (key, self.counter.text(key[0]))
        return self._defs_cache[1]

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

    def _tool_timeout(self, spec: ToolSpec) -> float:
        """The box may know a server's own limit; otherwise the setting."""
        seconds = self.tools.timeout_for(spec) if self.tools is not None else None
        return float(seconds) if seconds else self.settings.tool_timeout

    def _save_tool_result(self, message: Message) -> Message:
        self.store.add_message(self.conversation.id, message, wait=STREAM_SAVE_WAIT_S)
        self._history.append(message)
        return message

    async def _store_tool_result(self, message: Message) -> Message:
        """Saved as a reply is: while another program holds the database's write lock, the
        round waits for it."""
        return await stored(functools.partial(self._save_tool_result, message))

    def _answer_interrupted(self) -> None:
        """Calls a killed process left without results get one saying so: a call without its
        result can never be sent, and it would take its question with it."""
        for _, call in unanswered(self.messages):
            with contextlib.suppress(StoreError):
                self._save_tool_result(tool_result_message(call, INTERRUPTED, error=True))

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
            self._answer_interrupted()
            if again:
                chosen = self._asked_again(user)
                if isinstance(chosen, str):
                    yield ev.Failed(chosen)
                    return
                user = chosen
                if self.asks_anew(user):
                    # The turns after it stay on the branch of the version asked before.
                    self._back_to = self.head_id
                    self._anew = anew or Message("user", user.content, pasted=user.pasted)
                    self._anew.parent_id = user.parent_id or ROOT
                    user = self._anew
                elif user.status == FAILED:
                    # Asked before and never answered (the server was down): ask again.
                    user.status = COMPLETE
                    self.store.update_message(user)
                    self._history.changed()
                if user is not self._anew and self.head_id != user.id:
                    self._back_to = self.head_id
                    self.show_branch(user.id)
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
                await self.embed_waiting()
                async with aclosing(self._round(user)) as round_events:
                    async for event in round_events:
                        yield event
                await self.embed_waiting(EMBED_AFTER)
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
        question = question or self.last_question()
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
        before = self.head_id
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
            if self.head_id != before:
                self._history.show(before)
            raise
        self._history.append(user)
        if user.parent_id != before:
            self._branch_changed()

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
                max(self._known_summary, self.summary.id if self.summary else 0), self.head_id)
        if stamp == mine:
            return 0
        count, known = stamp[0], len(stored)
        self._history.reload(self.store.messages(self.conversation.id),
                             self.store.head(self.conversation.id))
        self._load_summary()
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

    async def _round(self, user: Message) -> AsyncIterator[ev.Event]:
        """Answer `user`: make room, then request until a reply asks for no tools. Each
        request is an attempt; a failed one is recovered (recovery.py) or ends the round; a
        reply that asks for tools is a tool step, and the model is asked again."""
        self.replies.streaming = None
        detected = await self.detect_window()
        if detected is not None:
            yield detected
        self.refresh_memory()  # after the window: the memory's room is a share of it
        # aclosing here and below: a caller that stops listening mid-compaction must not
        # leave a suspended generator holding the compaction lock.
        async with aclosing(self._over_threshold()) as making_room:
            async for event in making_room:
                yield event
        state = _RoundState()
        while True:
            # The same plan the "Next request" screen reads (request_plan.py).
            plan = plan_request(self.basis(), user, shrink=state.tried.shrink, gap=state.tried.gap,
                                offer_tools=state.steps < self.settings.tool_max_steps)
            for event in self._announced(plan, state):
                yield event
            attempt, verdict = Attempt(), Verdict()
            async with aclosing(self._attempt(user, plan, attempt, state, verdict)) as trying:
                async for event in trying:
                    yield event
            if verdict.again:
                continue
            if verdict.ended:
                return
            # Calls are taken only when tools were offered: a server that makes one anyway
            # (or a model past the step limit) has its text kept as the answer.
            calls = [c.wire() for c in attempt.calls] if plan.defs else None
            reply = Saved()
            async with aclosing(self._answered(plan, attempt, calls, reply)) as saving:
                async for event in saving:
                    yield event
            if reply.message is None:  # not stored: said, and the round ends
                return
            if not calls:
                yield ev.Finished(reply.message, attempt.finish_reason)
                return
            async with aclosing(self._tool_step(reply.message, state)) as stepping:
                async for event in stepping:
                    yield event

    def _announced(self, plan: Plan, state: _RoundState) -> list[ev.Event]:
        """What the user learns of a request before it goes: the turns recalled for it (once
        per set of turns), and the window as fitted."""
        recalled, fitted = plan.recalled, plan.fitted
        events: list[ev.Event] = []
        if plan.recalled_ids and plan.recalled_ids not in state.told:
            state.told.add(plan.recalled_ids)
            events.append(ev.Recalled(len(recalled.turns), recalled.tokens, plan.recalled_ids,
                                      recalled.sessions))
        if plan.cut_now:
            self.calibration.forget_anchor()  # the server has not seen them cut
        events.append(ev.WindowFitted(replace(plan.usage, recalled=recalled.tokens),
                                      len(fitted.sent), fitted.dropped, fitted.truncated))
        return events

    async def _attempt(self, user: Message, plan: Plan, attempt: Attempt,
                       state: _RoundState, verdict: Verdict) -> AsyncIterator[ev.Event]:
        """One request of the round; a failure recovered (verdict.again) or ended. Cancelled
        (Esc, Ctrl+C, the caller stopped listening): what arrived is kept."""
        try:
            async with aclosing(self.requests.stream(plan.fitted, plan.budget, attempt,
                                                     plan.defs)) as request:
                async for event in request:
                    yield event
        except ProviderError as err:
            failed = Failed(user, attempt, plan.fitted, plan.offered, state.steps > 0,
                            state.tried)
            async with aclosing(self.recovery.after(err, failed, verdict)) as recovering:
                async for event in recovering:
                    yield event
            verdict.ended = not verdict.again
        except BaseException:
            if attempt.parts:
                try:
                    self.replies.save("".join(attempt.parts), PARTIAL, wait=None)
                except StoreError:  # kept in memory, saved before the next round
                    self.replies.keep_in_memory()
            raise

    async def _answered(self, plan: Plan, attempt: Attempt, calls: list[dict] | None,
                        saved: Saved) -> AsyncIterator[ev.Event]:
        """The reply stored with the tool `calls` it asks for (`saved.message`; None when the
        store could not take it, said), and what its request taught: usage, the server's
        count, a silent cut."""
        text = "".join(attempt.parts)
        attempt.parts.clear()  # the reply is held once, not twice (30 MB is 30 MB more)
        try:
            async with aclosing(persisting(
                    functools.partial(self.replies.save, text, COMPLETE, tool_calls=calls),
                    saved)) as saving:
                async for event in saving:
                    yield event
        except StoreError as err:
            saved.message = None
            yield self.replies.not_saved(err)
            return
        reply = saved.message
        if reply is None:
            return
        self.sent.record(plan.fitted.sent_as)
        self.requests.record_usage(reply)
        if attempt.counted is not None:  # no count this time: an earlier anchor may hold
            self.calibration.set_anchor(plan.fitted, attempt.counted, reply,
                                        truncates=self.provider.truncates_silently)
        if attempt.cut is not None:
            # Told before Finished: a caller that stops at Finished still compacts.
            async for event in self.requests.recover_truncation(attempt.cut, plan.fitted):
                yield event

    async def _tool_step(self, reply: Message, state: _RoundState) -> AsyncIterator[ev.Event]:
        """Run what the reply asks for, so the model can be asked again with the results."""
        yield ev.ToolCallsMade(reply)
        async with aclosing(run_calls(
                calls_of(reply), box=self._toolbox(), policy=self.tool_policy,
                approve=self.approve, timeout=self._tool_timeout,
                save=self._store_tool_result, save_now=self._save_tool_result)) as running:
            async for event in running:
                yield event
        state.steps += 1
        if self.tool_outputs.shape(self.budget):  # before the gauge counts them whole
            self.calibration.forget_anchor()
        if state.steps == self.settings.tool_max_steps:
            yield ev.ToolStepLimit(state.steps)
        state.tried.reset()
        async with aclosing(self._over_threshold()) as making_room:
            async for event in making_room:
                yield event

    def session_cost(self) -> Tally:
        """The session's requests so far, chat and summary, with their cost where the config
        prices the model; read from the store, so it counts other processes' rounds too."""
        return tally(self.store.usage_totals(self.conversation.id), self.settings.prices)

    def _withdraw(self, user: Message) -> None:
        if self._back_to is not None and user is not self._anew:
            # A regenerated reply that never came: the question keeps the reply it had.
            self.show_branch(self._back_to)
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
            self.show_branch(self._back_to)
