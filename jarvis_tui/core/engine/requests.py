"""One request of a round: streamed from the provider, checked for an overflow the server hid
(an empty reply, a silent cut), recovered from when the context was full, and its usage kept
with the reply it brought.

Held by the engine, which fits the request and decides what a round does next; this piece needs
only the provider, the store, the window limit, the calibration, the reply being written and
the tool outputs, and never the round's loop. The engine's settings, provider and budget
change between requests (the settings screen, a new connection, a learned limit), so they are
read from a basis taken at each use (request_basis.py). What a recovery or a failure asks of
the session (a compaction under its hold, taking back an unanswered question) is handed in as
the engine's own calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget
from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.engine.empty_reply import may_be_over, overflow_behind
from jarvis_tui.core.engine.reply_log import ReplyLog
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.retry_policy import OVERFLOW_CALIBRATION_STEP
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.engine.window_limit import SERVERS_WORD, WindowLimit
from jarvis_tui.core.messages import PARTIAL, Message
from jarvis_tui.core.providers.base import ChatDelta, ChatToolCall, ChatUsage
from jarvis_tui.core.providers.errors import ContextOverflow, ProviderError, StreamCut
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.results import definitions_text
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.fit import FittedWindow

# Silent truncation (Ollama): the server read clearly fewer prompt tokens than we sent, and the
# request was large enough for the window to be the reason (a small reading of a small request
# is the server's prompt cache, not a cut).
TRUNCATED_BELOW = 0.85
TRUNCATION_POSSIBLE_FROM = 0.5
# A reply this far past max_tokens comes from a server that ignores the limit: it is stopped.
RUNAWAY_FACTOR = 2
RUNAWAY_SLACK = 256


@dataclass
class Attempt:
    """What one request of a round brought back: the reply's pieces, how it ended, the
    server's counts, and a silent cut it revealed."""

    parts: list[str] = field(default_factory=list)
    finished: bool = False
    finish_reason: str | None = None
    counted: ChatUsage | None = None  # the server's count, when it is the request's own
    cut: ev.ContextTruncated | None = None
    calls: list[ToolCall] = field(default_factory=list)  # the tools the reply asks for


class Requests:
    """Sends a round's requests and learns from what comes back. Keeps the server's counts of
    the latest request that reported any (`last_usage`, the gauge's "last turn"), and of the
    request in flight, kept with its reply once the reply is stored."""

    def __init__(self, basis: Callable[[], RequestBasis], store: Store, conversation_id: int,
                 limit: WindowLimit, calibration: Calibration, replies: ReplyLog,
                 tool_outputs: ToolOutputShaper, *,
                 compact: Callable[..., AsyncIterator[ev.Event]],
                 withdraw: Callable[[Message], None]) -> None:
        self._basis = basis
        self._store = store
        self._conversation_id = conversation_id
        self._limit = limit
        # The calibration rather than its counter: a new model brings a new counter.
        self._calibration = calibration
        self._replies = replies
        self._tool_outputs = tool_outputs
        self._compact = compact
        self._withdraw = withdraw
        self.last_usage: ev.Usage | None = None
        self._usage: ev.Usage | None = None

    async def stream(self, fitted: FittedWindow, budget: Budget, attempt: Attempt,
                     defs: list[dict] | None = None) -> AsyncIterator[ev.Event]:
        """Stream one request; what it brings back goes into `attempt`."""
        terms, counter = self._basis(), self._calibration.counter
        # Without tools the call is the one every provider has always had.
        more = {"tools": defs} if defs else {}
        if defs:  # the server counts the definitions as prompt
            fitted.estimated_raw += counter.raw_text(definitions_text(defs))
        stream = terms.provider.stream_chat(fitted.wire, model=terms.settings.model,
                                            max_tokens=budget.response_reserve,
                                            context_window=self._limit.size, **more)
        # A server that ignores max_tokens would otherwise write until a deadline: counted
        # piece by piece (the sum of the pieces' estimates is near enough).
        runaway = budget.response_reserve * RUNAWAY_FACTOR + RUNAWAY_SLACK
        written = 0
        self._usage = None  # an earlier attempt's counts are not this reply's
        async with aclosing(stream):
            async for chunk in stream:
                if isinstance(chunk, ChatDelta):
                    attempt.parts.append(chunk.text)
                    self._replies.flush(attempt.parts)
                    yield ev.Delta(chunk.text)
                    written += counter.raw_text(chunk.text)
                    if written > runaway:
                        raise ProviderError(
                            f"the server kept writing past the reply limit (max_tokens "
                            f"{budget.response_reserve}; about {written} tokens so far), so the "
                            "reply was stopped there")
                elif isinstance(chunk, ChatToolCall):
                    attempt.calls.append(ToolCall(chunk.id, chunk.name, chunk.arguments))
                elif isinstance(chunk, ChatUsage):
                    sent = int(fitted.estimated_raw * counter.factor)
                    if self._silently_cut(sent, chunk.prompt_tokens):
                        attempt.cut = ev.ContextTruncated(sent, chunk.prompt_tokens)
                    else:
                        self._calibration.calibrate(fitted.estimated_raw, chunk.prompt_tokens)
                        attempt.counted = chunk
                    usage = ev.Usage(chunk.prompt_tokens, chunk.completion_tokens,
                                     fitted.estimated_raw, chunk.cached_tokens,
                                     chunk.cache_write_tokens)
                    self.last_usage = self._usage = usage
                    yield usage
                elif not attempt.finished:
                    attempt.finished = True
                    attempt.finish_reason = chunk.finish_reason
        if not attempt.finished:
            raise StreamCut("the stream ended before the reply was complete")
        if not attempt.parts and not attempt.calls:
            await self._overflow_behind_empty(fitted, budget, defs)

    async def _overflow_behind_empty(self, fitted: FittedWindow, budget: Budget,
                                     defs: list[dict] | None) -> None:
        """An empty reply to a request that may be over the real window is asked again once,
        unstreamed, whoever the server is: a proxy's silence is raised as the overflow it is."""
        window = self._limit.size
        estimated = (int(fitted.estimated_raw * self._calibration.counter.factor)
                     + budget.response_reserve)
        if not may_be_over(self._limit.source in SERVERS_WORD, estimated, window):
            return
        basis = self._basis()
        hidden = await overflow_behind(basis.provider, fitted.wire, model=basis.settings.model,
                                       context_window=window, tools=defs)
        if hidden is not None:
            raise hidden

    def record_usage(self, reply: Message) -> None:
        """Keep what the answered request cost with its reply. Like what is learned, a database
        that is locked or full for now loses only this count, never the round."""
        usage, self._usage = self._usage, None
        if usage is None or reply.id is None:
            return  # the server did not count this request
        with contextlib.suppress(StoreError):
            self._store.add_usage(
                self._conversation_id, kind="chat", model=self._basis().settings.model,
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens,
                message_id=reply.id, wait=STREAM_SAVE_WAIT_S)

    def _silently_cut(self, sent: int, read: int) -> bool:
        return (self._basis().provider.truncates_silently and 0 < read
                and read < sent * TRUNCATED_BELOW
                and sent >= self._limit.size * TRUNCATION_POSSIBLE_FROM)

    async def recover_truncation(self, cut: ev.ContextTruncated,
                                 fitted: FittedWindow) -> AsyncIterator[ev.Event]:
        yield cut
        # It did not fit, so the real prompt was at least the window: count higher from now on.
        window = self._limit.size
        if window > cut.sent_tokens:
            self._calibration.calibrate(fitted.estimated_raw, window)
        async with aclosing(self._compact_for_overflow()) as compaction:
            async for event in compaction:
                yield event

    async def recover_overflow(self, err: ContextOverflow,
                               fitted: FittedWindow) -> AsyncIterator[ev.Event]:
        factor = self._calibration.counter.factor
        if err.limit and err.limit < self._limit.size:
            yield self._limit.learn(err.limit)
        elif err.requested and err.requested > 0:
            # The server counted more than we estimated: correct our counts, by a bounded step.
            # A refusal far above the estimate is mostly one message we misjudge (100,000
            # newlines, a blob), while the factor prices every message of the session and is
            # saved with it; the round's retries count the rest of the gap in (overflow_gap).
            most = fitted.estimated_raw * factor * OVERFLOW_CALIBRATION_STEP
            self._calibration.calibrate(fitted.estimated_raw, min(err.requested, int(most)))
        else:
            # Refused without a number (old llama.cpp): the window is at most what was sent
            # with the reply's room. A bound, not a guess: each refusal brings it down.
            sent = int(fitted.estimated_raw * factor)
            bound = sent + self._basis().budget.response_reserve - 1
            if bound < self._limit.size:
                yield self._limit.learn(bound)
        pruned = self._tool_outputs.prune() or self._tool_outputs.prune(deeper=True)
        if pruned is not None:
            yield pruned  # old tool outputs go first; the retry may fit without a summary
            return
        async with aclosing(self._compact_for_overflow()) as compaction:
            async for event in compaction:
                yield event

    def _compact_for_overflow(self) -> AsyncIterator[ev.Event]:
        keep = min(self._basis().settings.keep_recent_turns, 1)
        return self._compact(reason="overflow", keep_recent_turns=keep)

    def fail(self, user: Message, parts: list[str], why: str, *,
             answered: bool = False) -> ev.Failed:
        """A round that cannot finish: a partial reply is kept; with no reply at all the user
        message is marked failed so it is kept in the store but left out of later requests,
        unless tool steps already answered it in part (`answered`: they stay with it)."""
        if answered and not parts:
            return ev.Failed(why)
        if parts:
            try:
                return ev.Failed(why, self._replies.save("".join(parts), PARTIAL, wait=None))
            except StoreError as err:
                unsaved = self._replies.not_saved(err)
                return ev.Failed(f"{why}; and {unsaved.error}", unsaved.message, saved=False)
        self._withdraw(user)
        return ev.Failed(why)
