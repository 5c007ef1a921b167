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
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.anchor import Anchor
from jarvis_tui.core.budget import MIN_BUDGET, Budget, BudgetUsage, resolve_context_window
from jarvis_tui.core.compaction import (
    PREFIX_INSTRUCTION,
    PROMPT_SLACK,
    Summarizer,
    SummaryError,
    plan_compaction,
)
from jarvis_tui.core.config import Settings
from jarvis_tui.core.costs import Tally, tally
from jarvis_tui.core.history import History
from jarvis_tui.core.messages import COMPLETE, FAILED, PARTIAL, Message
from jarvis_tui.core.providers.base import ChatDelta, ChatUsage, Provider
from jarvis_tui.core.providers.errors import (
    ContextOverflow,
    ProviderError,
    ReadTimedOut,
    RetryableError,
    StreamCut,
)
from jarvis_tui.core.recall import RECALL_HEADER, Recalled, recall
from jarvis_tui.core.store import Store, StoreError, StoreLocked, Summary
from jarvis_tui.core.tokens import MESSAGE_OVERHEAD, TokenCounter
from jarvis_tui.core.window import FittedWindow, fit_window, system_text, with_recalled

MAX_OVERFLOW_RETRIES = 3
FLUSH_S = 0.5  # a streaming reply reaches the store this often, so a killed process loses little
# Silent truncation (Ollama): the server read clearly fewer prompt tokens than we sent, and the
# request was large enough for the window to be the reason (a small reading of a small request
# is the server's prompt cache, not a cut).
TRUNCATED_BELOW = 0.85
TRUNCATION_POSSIBLE_FROM = 0.5
SHRINK_PER_OVERFLOW = 0.75  # each overflow retry sends a window this much smaller...
# ...or, when the refusal names a size above our estimate, counts that gap in and sends a window
# this much smaller, for what the gap's spreading gets wrong.
OVERFLOW_MARGIN = 0.9
OVERFLOW_CALIBRATION_STEP = 1.5  # one refusal raises the calibration factor at most this much
META_LIMIT = "context_limit"
META_SUSPECT = "context_limit_suspect"  # a limit that looked wrong, seen once
META_CALIBRATION = "calibration"
# A learned limit this small, or this many times below the configured window, is more likely a
# misbehaving proxy's error than the model's window: it is kept only once seen twice.
SANE_LIMIT = 1024
FAR_BELOW = 8
MAX_TIMEOUT_RETRIES = 1  # a server that sent nothing for request_timeout is asked once more
# A reply this far past max_tokens comes from a server that ignores the limit: it is stopped.
RUNAWAY_FACTOR = 2
RUNAWAY_SLACK = 256
STREAM_SAVE_WAIT_S = 0.05  # a save while streaming waits this long for a lock, then tries later
SAVE_WAIT_S = 120.0  # a finished reply waits this long for another program's lock
SAVE_POLL_S = 0.25
SESSION_WAIT_S = 600.0  # a round waits this long for another jarvis-tui's round on the session
SESSION_POLL_S = 0.2
FRAMING_MAX = 64.0  # tokens a template may add per message; beyond that something else changed


class Engine:
    # The server's counts of the latest request that reported any (the gauge's "last turn"),
    # and of the request in flight, kept with its reply once the reply is stored.
    last_usage: ev.Usage | None = None
    _request_usage: ev.Usage | None = None

    def __init__(self, settings: Settings, store: Store, provider: Provider,
                 conversation_id: int | None = None, *, counter: TokenCounter | None = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 jitter: Callable[[], float] = random.random,
                 forget_learned_limit: bool = False):
        self.settings = settings
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
        if forget_learned_limit:
            # The window was given on the command line: it says what the server has now.
            self._forget_limit()
        self._session = store.session_lock(conv.id)
        self._unsaved: Message | None = None  # a reply the store could not take (a full disk)
        self._history = History(store.messages(conv.id))
        self.messages: list[Message] = self._history.all
        self.summary: Summary | None = store.latest_summary(conv.id)
        self._resolve_window()
        self.counter = counter or self._make_counter()
        self._detected = False  # the server was asked for its window (setting 0) once
        self.streaming_reply: Message | None = None  # the reply being written, already stored
        self._flushed_at = 0.0
        self._saved_parts = 0  # how many of the streaming reply's pieces the store holds
        self.anchor: Anchor | None = None  # the server's count of the last request
        self._counted: ChatUsage | None = None  # the count for the request in flight
        self.framing: float | None = None  # template tokens per message beyond our estimate
        # Message id -> the text a request sent instead of its content (cut to fit, or with
        # recalled turns): later requests send the same bytes, so each one starts with the one
        # before and the provider's prompt cache serves all but the new turn.
        self._sent_as: dict[int, str] = {}
        self._carried: dict[int, frozenset[int]] = {}  # user message id -> the ids it recalled

    def _resolve_window(self) -> None:
        self.context_window, self.window_source = resolve_context_window(
            self.settings.context_window, self.settings.model)
        learned = self.store.get_meta(self.conversation.id, META_LIMIT)
        if isinstance(learned, int) and 0 < learned < self.context_window:
            self.context_window, self.window_source = learned, "learned from the server"

    def _forget_limit(self) -> None:
        self._remember(META_LIMIT, None)
        self._remember(META_SUSPECT, None)

    def _remember(self, key: str, value: object) -> None:
        """Keep something learned (a limit, a calibration) for later sessions. What is learned
        holds in memory for this one anyway, so a database that is locked or full for now
        neither stops the round nor holds up a streaming reply."""
        with contextlib.suppress(StoreError):
            self.store.set_meta(self.conversation.id, key, value, wait=STREAM_SAVE_WAIT_S)

    def _learn_limit(self, limit: int) -> ev.ContextLimitLearned:
        """Adopt a limit a server named or implied for this session; keep it for later ones
        unless it looks wrong and has not been seen before."""
        previous, self.context_window = self.context_window, limit
        self.window_source = "learned from the server"
        configured = self.settings.context_window
        suspect = limit < SANE_LIMIT or (configured > 0 and limit * FAR_BELOW < configured)
        if suspect and self.store.get_meta(self.conversation.id, META_SUSPECT) != limit:
            self._remember(META_SUSPECT, limit)
            return ev.ContextLimitLearned(limit, previous, suspect=True)
        self._remember(META_LIMIT, limit)
        self._remember(META_SUSPECT, None)
        return ev.ContextLimitLearned(limit, previous)

    @property
    def _calibration_key(self) -> str:
        # Per provider and model: the same model name can be tokenised differently elsewhere.
        return f"{self.settings.provider}:{self.settings.model}"

    def _make_counter(self) -> TokenCounter:
        factors = self.store.get_meta(self.conversation.id, META_CALIBRATION) or {}
        factor = factors.get(self._calibration_key, factors.get(self.settings.model, 1.0))
        return TokenCounter(self.settings.model, factor=float(factor))

    async def detect_window(self) -> ev.WindowDetected | None:
        """With context_window 0, ask the server once what window it runs the model with.

        A limit the server already taught us by refusing a request is smaller and stays."""
        silent = getattr(self.provider, "truncates_silently", False)
        # A server that cuts instead of refusing is asked even when a window is configured:
        # it would quietly run the model with its own smaller one.
        if self._detected or (self.settings.context_window > 0 and not silent):
            return None
        self._detected = True
        ask = getattr(self.provider, "detect_context_window", None)
        size = await ask(self.settings.model) if ask is not None else None
        if not size or size <= 0:
            return None
        if (self.window_source in ("learned from the server", "configured")
                and self.context_window <= size):
            return None
        self.context_window, self.window_source = size, "detected from the server"
        return ev.WindowDetected(size)

    def apply_settings(self, settings: Settings) -> None:
        """New settings take effect from the next request (the settings screen's Save)."""
        model_changed = (settings.model, settings.provider) != (self.settings.model,
                                                                 self.settings.provider)
        if settings.context_window != self.settings.context_window:
            # The user says what the window is now (a bigger server, a new model): a limit
            # learned from the old one's errors no longer holds.
            self._forget_limit()
        self.settings = settings
        self._resolve_window()
        self._detected = False  # a new model or address may run with another window
        if model_changed:
            self.counter = self._make_counter()
            self.anchor = self.framing = None  # another model, another tokenizer and template

    # ---- numbers -------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        """The budget; when a learned limit is small, the reserves shrink so some room is left."""
        s = self.settings
        response, system = s.response_reserve, s.system_reserve
        if self.context_window - response - system < MIN_BUDGET:
            response = min(response, self.context_window // 4)
            system = min(system, self.context_window // 8)
        return Budget(self.context_window, response, system, s.compact_threshold)

    @property
    def summary_max_tokens(self) -> int:
        """The summary's length cap: the setting, but never a third of a small budget or more."""
        return min(self.settings.summary_max_tokens, max(self.budget.tokens // 3, 64))

    def history(self) -> list[Message]:
        """What the request is built from: messages no summary covers, and covered ones the
        user pinned back (from /recall); failed ones left out. Kept up to date, not rebuilt:
        the caller must not change the list."""
        return self._history.active

    def usage(self, pending: str = "") -> BudgetUsage:
        """What the next request would need without windowing: what the gauge shows."""
        c = self.counter
        summary = self.summary.content if self.summary else None
        sys_tokens = c.text(self.settings.system_prompt)
        sys_text = system_text(self.settings.system_prompt, summary)
        summary_tokens = c.text(sys_text) - sys_tokens if summary else 0
        anchored = (self.anchor.total(sys_text, self.history(), c, self.framing or 0.0)
                    if self.anchor else None)
        history = (max(0, anchored - sys_tokens - summary_tokens) if anchored is not None
                   else self._history.tokens(c))
        pending_tokens = c.text(pending) + MESSAGE_OVERHEAD if pending else 0
        if pending and anchored is not None:
            pending_tokens += round(self.framing or 0.0)  # framed like the others
        recalled = self._recall(pending).tokens if pending and summary else 0
        return self.budget.usage(system=sys_tokens, summary=summary_tokens, history=history,
                                 pending=pending_tokens, source=c.source,
                                 window_source=self.window_source, recalled=recalled)

    def _recall(self, text: str, shrink: float = 1.0, user: Message | None = None) -> Recalled:
        budget = int(self.context_window * self.settings.recall_budget * shrink)
        # Turns an earlier message still in the request carries are there already.
        present = frozenset().union(*(ids for mid, ids in self._carried.items()
                                      if user is None or mid != user.id))
        return recall(self.store, self.conversation.id, self._history, text, self.counter,
                      budget, present)

    # ---- layer 2 -------------------------------------------------------------------------

    async def compact(self, *, reason: str = "manual", focus: str | None = None,
                      keep_recent_turns: int | None = None) -> AsyncIterator[ev.Event]:
        """Fold older turns into the summary. Yields Started/Finished/Failed (or nothing when
        there is nothing to fold and the compaction was not asked for by the user)."""
        took = not self._session.held
        if took and not self._session.try_acquire():
            # Another jarvis-tui is answering in this session; it compacts for itself.
            if reason == "manual":
                yield ev.CompactionFailed(self._busy_text(), reason)
            return
        try:
            if took and (added := self.catch_up()):
                yield ev.SessionChanged(added)
            async with self._lock, aclosing(self._compact(reason, focus,
                                                          keep_recent_turns)) as it:
                async for event in it:
                    yield event
        finally:
            if took:
                self._session.release()

    def _busy_text(self) -> str:
        pid = self._session.holder()
        who = f"another jarvis-tui (process {pid})" if pid else "another jarvis-tui"
        return (f"session {self.conversation.id} is busy: {who} is answering in it; try again "
                "when it is done")

    async def _compact(self, reason: str, focus: str | None,
                       keep_recent_turns: int | None) -> AsyncIterator[ev.Event]:
        keep = self.settings.keep_recent_turns if keep_recent_turns is None else keep_recent_turns
        history = self.history()
        plan = plan_compaction(history, keep)
        # Down to the low-water mark, not just under the threshold: each compaction changes the
        # front of the request (the provider's cache then re-reads all of it), so the next one
        # should be many turns away. Recent turns that would not fit under it with the summary
        # are folded in too, all but the newest, which stays verbatim however large.
        usage = self.usage()  # a pass over the history: once, for the mark and the notice
        room = (int(self.budget.tokens * self.settings.compact_low_water)
                - self.summary_max_tokens - usage.system_overflow)
        while keep > 1 and sum(self.counter.message(m) for m in plan.keep) > room:
            keep -= 1
            plan = plan_compaction(history, keep)
        if not plan.evict:
            if reason == "manual":
                yield ev.CompactionFailed(
                    f"nothing to compact yet: the last {keep} turns are always kept verbatim",
                    reason)
            return
        yield ev.CompactionStarted(reason, len(plan.evict))
        before = usage.used
        summarizer = Summarizer(
            self.provider, model=self.settings.summary_model or self.settings.model,
            max_tokens=self.summary_max_tokens,
            window=self.context_window, counter=self.counter,
            retries=min(self.settings.max_retries, 2), backoff=self._backoff, sleep=self._sleep)
        previous = self.summary.content if self.summary else None
        prefix = self._summary_prefix(plan.evict)
        try:
            text = None
            if prefix is not None:
                # Too big for the server after all: the small prompt goes in chunks. Any other
                # failure is the summariser's, and asking again another way would not help.
                with contextlib.suppress(ContextOverflow):
                    text = await summarizer.summarize_prefix(prefix, focus)
            if text is None:
                prefix = None
                text = await summarizer.summarize(previous, plan.evict, focus)
        except (SummaryError, ProviderError) as err:
            message = err.message if isinstance(err, ProviderError) else str(err)
            yield ev.CompactionFailed(f"could not summarise: {message}", reason)
            return
        kind = "manual" if reason == "manual" else "auto"
        self.summary = self.store.add_summary(
            self.conversation.id, text, plan.evict, kind=kind, focus=focus,
            model=summarizer.model)
        self._history.changed()
        # The front changed anyway: recalled turns a kept message carried are let go (they
        # would fill the window for good); a message cut to fit is still sent cut.
        self._sent_as = {m.id: text for m in self.history()
                         if (text := self._sent_as.get(m.id)) is not None
                         and not text.startswith(RECALL_HEADER)}
        self._carried.clear()
        after = self.usage().used
        with contextlib.suppress(StoreError):  # the summary is kept; only its bill is not
            self.store.add_usage(
                self.conversation.id, kind="summary", model=summarizer.model,
                prompt_tokens=summarizer.prompt_tokens,
                completion_tokens=summarizer.completion_tokens,
                cached_tokens=summarizer.cached_tokens if summarizer.cached_seen else None,
                summary_id=self.summary.id, freed_tokens=max(0, before - after),
                wait=STREAM_SAVE_WAIT_S)
        yield ev.CompactionFinished(
            self.summary.id, len(plan.evict), before, after, reason,
            cost_prompt_tokens=summarizer.prompt_tokens,
            cost_completion_tokens=summarizer.completion_tokens, calls=summarizer.calls,
            cached_prefix=prefix is not None)

    def _summary_prefix(self, evict: list[Message]) -> list[dict] | None:
        """The chat request's own front up to the last message to fold in (system message with
        the summary so far, then the turns as they were sent), when the summary model is the
        chat model and that front fits its window with the summary's room: the provider's
        prompt cache (llama.cpp's KV cache) already holds it, so the summary request costs the
        instruction only, and the cache stays warm. None: use the small summary prompt."""
        s = self.settings
        if s.summary_model not in ("", s.model) or not evict:
            return None
        if any(m.content not in self._sent_as.get(m.id, m.content) for m in evict):
            return None  # sent cut to fit: the summary is made from the stored original
        active = self.history()
        ids = {m.id for m in evict}
        last = max((i for i, m in enumerate(active) if m.id in ids), default=-1)
        summary = self.summary.content if self.summary else None
        fitted = fit_window(active[:last + 1], budget=self.context_window * 4,
                            counter=self.counter, system_prompt=s.system_prompt,
                            summary=summary, sent_as=self._sent_as)
        wire = fitted.wire
        if len(fitted.sent) != last + 1 or not wire or wire[-1].get("role") != "assistant":
            return None  # a message cut or left out, or no reply to end on: not the chat front
        system = self.counter.text(wire[0]["content"]) if wire[0]["role"] == "system" else 0
        need = (system + fitted.history_tokens + self.counter.text(PREFIX_INSTRUCTION)
                + self.summary_max_tokens + PROMPT_SLACK)
        return wire if need <= self.context_window else None

    def edit_summary(self, text: str) -> Summary:
        if self.summary is None:
            raise ValueError("there is no summary to edit yet")
        self.summary = self.store.edit_summary(self.summary.id, text)
        return self.summary

    # ---- a round -------------------------------------------------------------------------

    async def stream_reply(self, user_text: str | Message) -> AsyncIterator[ev.Event]:
        """Answer one user message; the message is stored before any request leaves.

        A round holds the session's lock (another jarvis-tui's round on it is waited for), so
        each reply stays with its question; what another process added meanwhile is read first.
        A Message may be passed so the caller's record (already on screen) is the stored one."""
        user = user_text if isinstance(user_text, Message) else Message("user", user_text)
        async with aclosing(self._waiting_for_session()) as waiting:
            async for event in waiting:
                yield event
        if not self._session.held:
            yield ev.Failed(f"{self._busy_text()} (waited {SESSION_WAIT_S:g}s)")
            return
        try:
            if added := self.catch_up():
                yield ev.SessionChanged(added)
            self._save_unsaved()
            saved: list[Message] = []
            async with aclosing(self._persisting(
                    lambda: self.store.add_message(self.conversation.id, user,
                                                   wait=STREAM_SAVE_WAIT_S), saved)) as saving:
                async for event in saving:
                    yield event
            self._history.append(user)
            try:
                async with self._lock:  # a background compaction finishes before the request
                    pass
                # aclosing: when the caller stops listening (Esc), the round is closed at once,
                # so the partial reply is stored now rather than whenever the generator is
                # collected.
                async with aclosing(self._round(user)) as round_events:
                    async for event in round_events:
                        yield event
            except BaseException:
                if self.messages[-1] is user and user.status != FAILED:
                    # Stopped before any reply text: like a failed round, the message stays in
                    # the store but is not sent again as if it had been answered.
                    self._withdraw(user)
                raise
        finally:
            self._session.release()

    async def _waiting_for_session(self) -> AsyncIterator[ev.Event]:
        if self._session.try_acquire():
            return
        yield ev.SessionBusy(self._session.holder())
        end = time.monotonic() + SESSION_WAIT_S
        while time.monotonic() < end:
            await asyncio.sleep(SESSION_POLL_S)
            if self._session.try_acquire():
                return

    def catch_up(self) -> int:
        """Read the session again if another process added to it since it was loaded; how
        many messages it added (0: nothing changed). Between rounds only: while another
        process's round holds the session, its reply is still being written."""
        if self._session.held:
            return self._read_again()
        if not self._session.try_acquire():
            return 0
        try:
            return self._read_again()
        finally:
            self._session.release()

    def _read_again(self) -> int:
        count, newest, summary = self.store.stamp(self.conversation.id)
        mine = self._history.all
        if (count, newest, summary) == (len(mine), mine[-1].id if mine else 0,
                                        self.summary.id if self.summary else 0):
            return 0
        self._history = History(self.store.messages(self.conversation.id))
        self.messages = self._history.all
        self.summary = self.store.latest_summary(self.conversation.id)
        self.anchor = None  # another process's requests: our count of the last one is stale
        self._sent_as.clear()
        self._carried.clear()
        return max(1, count - len(mine))

    @property
    def unsaved(self) -> Message | None:
        """The last reply, when the store could not take it: only memory holds it."""
        return self._unsaved

    async def _persisting(self, save: Callable[[], Message],
                          out: list[Message]) -> AsyncIterator[ev.Event]:
        """Run `save` until the store takes it: while another program holds the database's
        write lock, wait (saying so once) up to SAVE_WAIT_S. Other store errors are raised."""
        told = False
        end = time.monotonic() + SAVE_WAIT_S
        while True:
            try:
                out.append(save())
                return
            except StoreLocked as err:
                if time.monotonic() >= end:
                    raise
                if not told:
                    told = True
                    yield ev.SaveDelayed(str(err))
                await asyncio.sleep(SAVE_POLL_S)

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
        self.streaming_reply = None
        detected = await self.detect_window()
        if detected is not None:
            yield detected
        if self.usage().over_threshold:
            # aclosing here and below: a caller that stops listening mid-compaction must not
            # leave a suspended generator holding the compaction lock.
            async with aclosing(self.compact(reason="threshold")) as compaction:
                async for event in compaction:
                    yield event
        overflows = retries = timeouts = 0
        shrink = 1.0
        gap = 0.0  # tokens a character the server counted beyond our estimate, this round
        told: set[tuple[int, ...]] = set()
        while True:
            budget = self.budget
            usage = self.usage()  # a pass over the history: once per attempt, not twice
            room = int(budget.tokens * shrink) - usage.system_overflow
            # Again on each attempt: an overflow's compaction may have covered more turns.
            recalled = self._recall(user.content, shrink, user)
            ids = tuple(m.id for turn in recalled.turns for m in turn if m.id is not None)
            if ids and ids not in told:
                told.add(ids)
                yield ev.Recalled(len(recalled.turns), recalled.tokens, ids)
            summary = self.summary.content if self.summary else None
            if recalled.block and user.id is not None:
                self._sent_as[user.id] = with_recalled(recalled.block, user.content)
                self._carried[user.id] = frozenset(ids)
            elif user.id is not None:
                self._sent_as.pop(user.id, None)
                self._carried.pop(user.id, None)
            fitted = fit_window(self.history(), budget=max(room, 64),
                                counter=self.counter.surcharged(gap),
                                system_prompt=self.settings.system_prompt, summary=summary,
                                pinned=self._history.pinned, sent_as=self._sent_as)
            yield ev.WindowFitted(replace(usage, recalled=recalled.tokens), len(fitted.sent),
                                  fitted.dropped, fitted.truncated)
            parts: list[str] = []
            self._counted = None
            done: list[str | None] = []
            cut: list[ev.ContextTruncated] = []
            try:
                async with aclosing(self._request(fitted, budget, parts, done, cut)) as request:
                    async for event in request:
                        yield event
            except ContextOverflow as err:
                overflows += 1
                if parts or overflows > MAX_OVERFLOW_RETRIES:
                    yield self._fail(user, parts, f"the conversation does not fit the model's "
                                     f"context window even after compacting: {err.message}")
                    return
                async for event in self._recover_overflow(err, fitted):
                    yield event
                more = self._overflow_gap(err, fitted, gap)
                gap += more
                shrink *= OVERFLOW_MARGIN if more else SHRINK_PER_OVERFLOW
                continue
            except RetryableError as err:
                retries += 1
                timeouts += isinstance(err, ReadTimedOut)
                if (parts or retries > self.settings.max_retries
                        or timeouts > MAX_TIMEOUT_RETRIES):
                    why = err.message if not parts else f"the reply was cut off: {err.message}"
                    yield self._fail(user, parts, why)
                    return
                delay = self._backoff(retries, err.retry_after)
                yield ev.Retrying(err.message, retries, delay)
                await self._sleep(delay)
                continue
            except ProviderError as err:
                yield self._fail(user, parts, err.message)
                return
            except BaseException:
                # Cancelled (Esc, Ctrl+C, the caller stopped listening): keep what arrived.
                if parts:
                    try:
                        self._save_reply("".join(parts), PARTIAL, wait=None)
                    except StoreError:  # kept in memory, saved before the next round
                        self._unsaved, self.streaming_reply = self.streaming_reply, None
                raise
            saved: list[Message] = []
            text = "".join(parts)
            parts.clear()  # the reply is held once, not twice (a 30 MB reply is 30 MB more)
            try:
                async with aclosing(self._persisting(
                        functools.partial(self._save_reply, text, COMPLETE), saved)) as saving:
                    async for event in saving:
                        yield event
            except StoreError as err:
                yield self._not_saved(err)
                return
            reply = saved[0]
            self._sent_as.update(fitted.sent_as)
            self._record_usage(reply)
            self._set_anchor(fitted, reply)
            if cut:
                # Told before Finished: a caller that stops at Finished still compacts.
                async for event in self._recover_truncation(cut[0], fitted):
                    yield event
            yield ev.Finished(reply, done[0] if done else None)
            return

    async def _request(self, fitted: FittedWindow, budget: Budget, parts: list[str],
                       done: list[str | None],
                       cut: list[ev.ContextTruncated]) -> AsyncIterator[ev.Event]:
        """Stream one request; text goes into `parts`, the finish reason into `done`, a
        silent truncation into `cut`."""
        stream = self.provider.stream_chat(fitted.wire, model=self.settings.model,
                                           max_tokens=budget.response_reserve,
                                           context_window=self.context_window)
        # A server that ignores max_tokens would otherwise write until a deadline: counted
        # piece by piece (the sum of the pieces' estimates is near enough).
        runaway = budget.response_reserve * RUNAWAY_FACTOR + RUNAWAY_SLACK
        written = 0
        self._request_usage = None  # an earlier attempt's counts are not this reply's
        async with aclosing(stream):
            async for chunk in stream:
                if isinstance(chunk, ChatDelta):
                    parts.append(chunk.text)
                    self._flush(parts)
                    yield ev.Delta(chunk.text)
                    written += self.counter.raw_text(chunk.text)
                    if written > runaway:
                        raise ProviderError(
                            f"the server kept writing past the reply limit (max_tokens "
                            f"{budget.response_reserve}; about {written} tokens so far), so the "
                            "reply was stopped there")
                elif isinstance(chunk, ChatUsage):
                    sent = int(fitted.estimated_raw * self.counter.factor)
                    if self._silently_cut(sent, chunk.prompt_tokens):
                        cut.append(ev.ContextTruncated(sent, chunk.prompt_tokens))
                    else:
                        self._calibrate(fitted.estimated_raw, chunk.prompt_tokens)
                        self._counted = chunk
                    usage = ev.Usage(chunk.prompt_tokens, chunk.completion_tokens,
                                     fitted.estimated_raw, chunk.cached_tokens,
                                     chunk.cache_write_tokens)
                    self.last_usage = self._request_usage = usage
                    yield usage
                else:
                    done.append(chunk.finish_reason)
        if not done:
            raise StreamCut("the stream ended before the reply was complete")

    def _record_usage(self, reply: Message) -> None:
        """Keep what the answered request cost with its reply. Like _remember, a database that
        is locked or full for now loses only this count, never the round."""
        usage, self._request_usage = self._request_usage, None
        if usage is None or reply.id is None:
            return  # the server did not count this request
        with contextlib.suppress(StoreError):
            self.store.add_usage(
                self.conversation.id, kind="chat", model=self.settings.model,
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens,
                message_id=reply.id, wait=STREAM_SAVE_WAIT_S)

    def session_cost(self) -> Tally:
        """The session's requests so far, chat and summary, with their cost where the config
        prices the model; read from the store, so it counts other processes' rounds too."""
        return tally(self.store.usage_totals(self.conversation.id), self.settings.prices)

    def _set_anchor(self, fitted: FittedWindow, reply: Message) -> None:
        """The server's count of this request becomes the base of the next estimate, when it
        counted the messages as stored (none cut to fit) and counts the whole prompt."""
        counted, self._counted = self._counted, None
        if counted is None:
            return  # no count this time: an earlier anchor may still hold
        if fitted.truncated or getattr(self.provider, "truncates_silently", False):
            self.anchor = None
            return
        first = fitted.wire[0] if fitted.wire else {}
        system = first.get("content") or "" if first.get("role") == "system" else ""
        seen = self.anchor.framing_seen(system, fitted.sent, self.counter,
                                        counted.prompt_tokens) if self.anchor else None
        if seen is not None:
            # Chat templates frame each message in a few tokens more or less than we count
            # (chatml on Gemma: about 16); learned like the calibration factor.
            seen = min(FRAMING_MAX, max(-FRAMING_MAX, seen))
            self.framing = seen if self.framing is None else (self.framing + seen) / 2
        self.anchor = Anchor(system=system, ids=tuple(m.id for m in fitted.sent),
                             prompt_tokens=counted.prompt_tokens, reply_id=reply.id,
                             reply_tokens=counted.completion_tokens)

    def _silently_cut(self, sent: int, read: int) -> bool:
        return (getattr(self.provider, "truncates_silently", False) and 0 < read
                and read < sent * TRUNCATED_BELOW
                and sent >= self.context_window * TRUNCATION_POSSIBLE_FROM)

    async def _recover_truncation(self, cut: ev.ContextTruncated,
                                  fitted: FittedWindow) -> AsyncIterator[ev.Event]:
        yield cut
        # It did not fit, so the real prompt was at least the window: count higher from now on.
        if self.context_window > cut.sent_tokens:
            self._calibrate(fitted.estimated_raw, self.context_window)
        keep = min(self.settings.keep_recent_turns, 1)
        async with aclosing(self.compact(reason="overflow", keep_recent_turns=keep)) as compaction:
            async for event in compaction:
                yield event

    def _flush(self, parts: list[str]) -> None:
        """Store the reply as it streams (status partial until it ends): a killed process
        leaves the user's question and most of the answer in the session. Only the new text is
        written each time. A save the store cannot take now (another program's lock, a full
        disk) is tried again at the next flush; the text waits in `parts`."""
        now = time.monotonic()
        reply = self.streaming_reply
        if reply is None:
            reply = self.streaming_reply = Message("assistant", "", status=PARTIAL)
            self._saved_parts = 0
        elif now - self._flushed_at < FLUSH_S:
            return
        self._flushed_at = now
        new = "".join(parts[self._saved_parts:])
        try:
            if reply.id is None:
                reply.content = new
                self.store.add_message(self.conversation.id, reply, wait=STREAM_SAVE_WAIT_S)
                self._history.append(reply)
            else:
                self.store.append_text(reply, new, wait=STREAM_SAVE_WAIT_S)
                reply.content += new
        except StoreError:
            if reply.id is None:
                reply.content = ""
            return
        self._saved_parts = len(parts)

    async def _recover_overflow(self, err: ContextOverflow,
                                fitted: FittedWindow) -> AsyncIterator[ev.Event]:
        if err.limit and err.limit < self.context_window:
            yield self._learn_limit(err.limit)
        elif err.requested and err.requested > 0:
            # The server counted more than we estimated: correct our counts, by a bounded step.
            # A refusal far above the estimate is mostly one message we misjudge (100,000
            # newlines, a blob), while the factor prices every message of the session and is
            # saved with it; the round's retries count the rest of the gap in (_overflow_gap).
            most = fitted.estimated_raw * self.counter.factor * OVERFLOW_CALIBRATION_STEP
            self._calibrate(fitted.estimated_raw, min(err.requested, int(most)))
        else:
            # Refused without a number (old llama.cpp): the window is at most what was sent
            # with the reply's room. A bound, not a guess: each refusal brings it down.
            sent = int(fitted.estimated_raw * self.counter.factor)
            bound = sent + self.budget.response_reserve - 1
            if bound < self.context_window:
                yield self._learn_limit(bound)
        compacted = False
        keep = min(self.settings.keep_recent_turns, 1)
        async with aclosing(self.compact(reason="overflow", keep_recent_turns=keep)) as compaction:
            async for event in compaction:
                compacted = compacted or isinstance(event, ev.CompactionFinished)
                yield event
        if not compacted:
            yield ev.Trimmed(int(self.budget.tokens * SHRINK_PER_OVERFLOW))

    def _overflow_gap(self, err: ContextOverflow, fitted: FittedWindow, gap: float) -> float:
        """Tokens a character the server counted in the refused request beyond our estimate of
        it (calibrated, `gap` a character already added), or 0 when it counted no more.

        The retry counts every character that much dearer, so the shrink follows the measured
        ratio where it was measured: a request underestimated 10x fits on the first retry, and
        one message we misjudge (100,000 newlines) is cut, not sent whole again because we
        think it small. Spread by characters, not tokens: what we underestimate is what we
        thought cheap for its length."""
        chars = sum(len(m.get("content") or "") for m in fitted.wire)
        ours = fitted.estimated_raw * self.counter.factor + gap * chars
        counted = err.requested or 0
        return (counted - ours) / chars if chars and counted > ours else 0.0

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        s = self.settings
        if retry_after is not None:
            return min(max(retry_after, 0.0), max(s.retry_max_delay, 60.0))
        # "Equal jitter": half the exponential step fixed, half random, so clients spread out.
        step = min(s.retry_max_delay, s.retry_base_delay * 2 ** (attempt - 1))
        return step / 2 + step / 2 * self._jitter()

    def _calibrate(self, estimated_raw: int, reported: int) -> None:
        if estimated_raw <= 0 or reported <= 0:
            return
        self.counter.observe(estimated_raw, reported)
        factors = self.store.get_meta(self.conversation.id, META_CALIBRATION) or {}
        factors[self._calibration_key] = self.counter.factor
        self._remember(META_CALIBRATION, factors)

    def _save_reply(self, text: str, status: str, *,
                    wait: float | None = STREAM_SAVE_WAIT_S) -> Message:
        """Store the reply whole; on a StoreError the reply stays `streaming_reply`, with the
        whole text in memory, for the caller to try again or report."""
        reply = self.streaming_reply
        if reply is None:  # an empty reply, or no flush got it stored
            reply = self.streaming_reply = Message("assistant", "", status=status)
        reply.content, reply.status = text, status
        if reply.id is None:
            self.store.add_message(self.conversation.id, reply, wait=wait)
            self._history.append(reply)
        else:
            self.store.update_message(reply, wait=wait)
        self.streaming_reply = None
        return reply

    def _not_saved(self, err: StoreError) -> ev.Failed:
        """The reply arrived but the store cannot take it (a full disk, a lock held for
        minutes): it is kept in memory, tried again before the next round, and handed to the
        caller, which shows it for copying."""
        reply, self.streaming_reply = self.streaming_reply, None
        self._unsaved = reply
        return ev.Failed(f"the reply could not be saved: {err}", reply, saved=False)

    def _save_unsaved(self) -> None:
        """Before a new round: store a reply an earlier round could not (the disk has room
        again), so the conversation stays in order; if it still cannot be, it stays here."""
        reply = self._unsaved
        if reply is None:
            return
        try:
            if reply.id is None:
                self.store.add_message(self.conversation.id, reply)
                self._history.append(reply)
            else:
                self.store.update_message(reply)
        except StoreError:
            return
        self._unsaved = None

    def _fail(self, user: Message, parts: list[str], why: str) -> ev.Failed:
        """A round that cannot finish: a partial reply is kept; with no reply at all the user
        message is marked failed so it is kept in the store but left out of later requests."""
        if parts:
            try:
                return ev.Failed(why, self._save_reply("".join(parts), PARTIAL, wait=None))
            except StoreError as err:
                unsaved = self._not_saved(err)
                return ev.Failed(f"{why}; and {unsaved.error}", unsaved.message, saved=False)
        self._withdraw(user)
        return ev.Failed(why)

    def _withdraw(self, user: Message) -> None:
        user.status = FAILED
        if user.id is not None:
            self._sent_as.pop(user.id, None)
            self._carried.pop(user.id, None)
        self._history.changed()
        # The store may be what failed; the message is left out of this session's requests
        # in any case.
        with contextlib.suppress(StoreError):
            self.store.update_message(user)
