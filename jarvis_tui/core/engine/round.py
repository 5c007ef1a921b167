"""One round: a user message answered. Make room, then request until a reply asks for no
tools. Each request is an attempt; a failed one is recovered (recovery.py) or ends the round; a
reply that asks for tools is a tool step (tool_round.py), and the model is asked again.

A round receives what it works through as `RoundParts`, each a collaborator the engine holds,
so what a round may touch is read in one place; what the next request is made of it takes from
`basis` at each attempt, since a compaction or an overflow inside the round changes it.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.front import RequestFront
from jarvis_tui.core.engine.recovery import Failed, Recovery, Verdict
from jarvis_tui.core.engine.reply_log import ReplyLog
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.request_plan import Plan, plan_request
from jarvis_tui.core.engine.requests import Attempt, Requests
from jarvis_tui.core.engine.retry_policy import RoundRetries
from jarvis_tui.core.engine.session_sync import Saved, persisting
from jarvis_tui.core.engine.tool_round import ToolPolicy, ToolResults, run_calls
from jarvis_tui.core.engine.window_limit import WindowLimit
from jarvis_tui.core.messages import COMPLETE, PARTIAL, Message
from jarvis_tui.core.providers.errors import ProviderError
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.tools.results import calls_of
from jarvis_tui.core.tools.specs import Approve
from jarvis_tui.core.window.calibration import Calibration


@dataclass(frozen=True)
class RoundParts:
    """What a round works through."""

    basis: Callable[[], RequestBasis]  # what the next request is made of, taken per attempt
    front: RequestFront  # the memory read anew, the tools offered and their time limits
    limit: WindowLimit  # the window, detected before the first request
    calibration: Calibration  # the server's count of a request, learned from its reply
    replies: ReplyLog  # the reply being written
    requests: Requests  # one request, and what it teaches
    recovery: Recovery  # a failed request's step
    results: ToolResults  # where a tool's result is stored
    policy: ToolPolicy
    approve: Approve | None
    make_room: Callable[[], AsyncIterator[ev.Event]]  # past the threshold: prune, compact


@dataclass
class RoundState:
    """What a round keeps across its requests: the steps that ended in tool calls, what it
    has tried since the last answered one, and the recalled turns it told of."""

    steps: int = 0
    tried: RoundRetries = field(default_factory=RoundRetries)
    told: set[tuple[int, ...]] = field(default_factory=set)


class Round:
    """One round's steps, in the order they run (run, then per request: announced, attempt,
    answered, tool step)."""

    def __init__(self, parts: RoundParts) -> None:
        self._p = parts

    async def run(self, user: Message) -> AsyncIterator[ev.Event]:
        """Answer `user`: make room, then request until a reply asks for no tools. Each
        request is an attempt; a failed one is recovered (recovery.py) or ends the round; a
        reply that asks for tools is a tool step, and the model is asked again."""
        self._p.replies.streaming = None
        detected = await self._p.limit.detect(self._p.basis().provider)
        if detected is not None:
            yield detected
        self._p.front.refresh_memory()  # after the window: the memory's room is a share of it
        # aclosing here and below: a caller that stops listening mid-compaction must not
        # leave a suspended generator holding the compaction lock.
        async with aclosing(self._p.make_room()) as making_room:
            async for event in making_room:
                yield event
        state = RoundState()
        while True:
            # The same plan the "Next request" screen reads (request_plan.py).
            basis = self._p.basis()
            plan = plan_request(basis, user, shrink=state.tried.shrink, gap=state.tried.gap,
                                offer_tools=state.steps < basis.settings.tool_max_steps)
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

    def _announced(self, plan: Plan, state: RoundState) -> list[ev.Event]:
        """What the user learns of a request before it goes: the turns recalled for it (once
        per set of turns), and the window as fitted."""
        recalled, fitted = plan.recalled, plan.fitted
        events: list[ev.Event] = []
        if plan.recalled_ids and plan.recalled_ids not in state.told:
            state.told.add(plan.recalled_ids)
            events.append(ev.Recalled(len(recalled.turns), recalled.tokens, plan.recalled_ids,
                                      recalled.sessions))
        if plan.cut_now:
            self._p.calibration.forget_anchor()  # the server has not seen them cut
        events.append(ev.WindowFitted(replace(plan.usage, recalled=recalled.tokens),
                                      len(fitted.sent), fitted.dropped, fitted.truncated))
        return events

    async def _attempt(self, user: Message, plan: Plan, attempt: Attempt,
                       state: RoundState, verdict: Verdict) -> AsyncIterator[ev.Event]:
        """One request of the round; a failure recovered (verdict.again) or ended. Cancelled
        (Esc, Ctrl+C, the caller stopped listening): what arrived is kept."""
        try:
            async with aclosing(self._p.requests.stream(plan.fitted, plan.budget, attempt,
                                                     plan.defs)) as request:
                async for event in request:
                    yield event
        except ProviderError as err:
            failed = Failed(user, attempt, plan.fitted, plan.offered, state.steps > 0,
                            state.tried)
            async with aclosing(self._p.recovery.after(err, failed, verdict)) as recovering:
                async for event in recovering:
                    yield event
            verdict.ended = not verdict.again
        except BaseException:
            if attempt.parts:
                try:
                    self._p.replies.save("".join(attempt.parts), PARTIAL, wait=None)
                except StoreError:  # kept in memory, saved before the next round
                    self._p.replies.keep_in_memory()
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
                    functools.partial(self._p.replies.save, text, COMPLETE, tool_calls=calls),
                    saved)) as saving:
                async for event in saving:
                    yield event
        except StoreError as err:
            saved.message = None
            yield self._p.replies.not_saved(err)
            return
        reply = saved.message
        if reply is None:
            return
        self._p.front.sent.record(plan.fitted.sent_as)
        self._p.requests.record_usage(reply)
        if attempt.counted is not None:  # no count this time: an earlier anchor may hold
            self._p.calibration.set_anchor(plan.fitted, attempt.counted, reply,
                                        truncates=plan.basis.provider.truncates_silently)
        if attempt.cut is not None:
            # Told before Finished: a caller that stops at Finished still compacts.
            async for event in self._p.requests.recover_truncation(attempt.cut, plan.fitted):
                yield event

    async def _tool_step(self, reply: Message, state: RoundState) -> AsyncIterator[ev.Event]:
        """Run what the reply asks for, so the model can be asked again with the results."""
        yield ev.ToolCallsMade(reply)
        async with aclosing(run_calls(
                calls_of(reply), box=self._p.front.toolbox(), policy=self._p.policy,
                approve=self._p.approve, timeout=self._p.front.tool_timeout,
                save=self._p.results.store, save_now=self._p.results.save)) as running:
            async for event in running:
                yield event
        state.steps += 1
        front = self._p.front
        if front.tool_outputs.shape(front.budget):  # before the gauge counts them whole
            self._p.calibration.forget_anchor()
        if state.steps == front.settings.tool_max_steps:
            yield ev.ToolStepLimit(state.steps)
        state.tried.reset()
        async with aclosing(self._p.make_room()) as making_room:
            async for event in making_room:
                yield event
