"""The tool half of a round: who allows a call, running it, and storing what it gave back.

A call and its result are a pair the providers never accept split (an OpenAI 400, an Anthropic
400), so every call the model made gets a stored result, whatever happens: denied, unknown,
malformed, failed, timed out, cancelled by Esc, or interrupted by a killed process (answered
before the next round). The model then reads the error and can try another way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.engine.session_sync import stored
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.store.session_meta import STREAM_SAVE_WAIT_S
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.results import (
    CANCELLED,
    INTERRUPTED,
    tool_result_message,
    unanswered,
)
from jarvis_tui.core.tools.rules import Rule, allow_flag, key_of, matches
from jarvis_tui.core.tools.specs import ALWAYS, ONCE, Approve, ToolBox
from jarvis_tui.core.window.history import History


@dataclass
class ToolPolicy:
    """Which calls run without asking: the tools the config's servers allow, the rules given
    with --allow-tool, and those the user said "always" to in this session; every rule a
    (server, tool) pair (core/tools/rules.py), so consent to one server's tool never reaches
    another server's tool of the same name."""

    allowed: set[Rule] = field(default_factory=set)
    always: set[Rule] = field(default_factory=set)

    def allows(self, spec: ToolSpec, box: ToolBox | None) -> bool:
        if matches(self.allowed | self.always, spec):
            return True
        return box is not None and box.allowed(spec)


class NoTools(ToolBox):
    """The box of a round without tools: it offers none, so every call is of an unknown
    tool and answered so before it could run."""

    def specs(self) -> list[ToolSpec]:
        return []

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        return ToolResult(f"there is no tool named {call.name!r}", True)


async def run_calls(calls: list[ToolCall], *, box: ToolBox | None, policy: ToolPolicy,
                    approve: Approve | None, timeout: Callable[[ToolSpec], float],
                    save: Callable[[Message], Awaitable[Message]],
                    save_now: Callable[[Message], object]) -> AsyncIterator[ev.Event]:
    """Run the calls of one reply in order, each stored (`save`, which may wait for a locked
    database) as a tool message once it ends. If the caller is cancelled (Esc), the call
    running and those after it get a "cancelled" result (`save_now`, at once) before the
    cancellation goes on, so the request stays sendable."""
    box = box if box is not None else NoTools()
    specs = {s.name: s for s in box.specs()}
    pending = list(calls)
    try:
        while pending:
            call = pending[0]
            spec = specs.get(call.name)
            started = time.monotonic()
            result, outcome = None, "ok"
            if spec is None:
                names = ", ".join(sorted(specs)) or "none"
                result, outcome = ToolResult(f"there is no tool named {call.name!r}; the tools "
                                             f"are: {names}", True), "unknown"
            else:
                try:
                    call.parsed()
                except ValueError as err:
                    result, outcome = ToolResult(f"the arguments for {call.name} could not be "
                                                 f"read: {err}", True), "bad_arguments"
            if result is None and not policy.allows(spec, box):
                if approve is None:
                    result, outcome = ToolResult(
                        f"{call.name} is not allowed to run without asking, and this run "
                        f"cannot ask: run it with --allow-tool {allow_flag(spec)}, or list "
                        f"it in the server's allow in the config", True), "denied"
                else:
                    yield ev.ToolApproval(call, spec)
                    decision = await approve(call, spec)
                    if decision == ALWAYS:
                        policy.always.add(key_of(spec))
                    elif decision != ONCE:  # DENY, or a dialog closed without an answer
                        result, outcome = ToolResult(
                            f"the user did not allow this call of {call.name}", True), "denied"
            if result is None:
                yield ev.ToolStarted(call, spec)
                started = time.monotonic()
                result = await _run_bounded(box, call, spec, timeout(spec))
                outcome = "error" if result.is_error else "ok"
            stored = await save(tool_result_message(call, result.text, error=result.is_error))
            pending.pop(0)
            yield ev.ToolFinished(call, stored, outcome, time.monotonic() - started)
    except BaseException:
        # Esc or Ctrl+C: every call still without a result gets one, synchronously, before the
        # cancellation travels on.
        for call in pending:
            save_now(tool_result_message(call, CANCELLED, error=True))
        raise


async def _run_bounded(box: ToolBox, call: ToolCall, spec: ToolSpec,
                       seconds: float) -> ToolResult:
    try:
        async with asyncio.timeout(seconds):
            return await box.run(call, spec)
    except TimeoutError:
        return ToolResult(f"{call.name} did not finish within {seconds:g} s", True)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # a box that broke its promise not to raise
        return ToolResult(str(err) or type(err).__name__, True)


class ToolResults:
    """Where a session's tool results go: stored with it, and on the branch shown at once."""

    def __init__(self, store: Store, conversation_id: int, history: History) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._history = history

    def save(self, message: Message) -> Message:
        self._store.add_message(self._conversation_id, message, wait=STREAM_SAVE_WAIT_S)
        self._history.append(message)
        return message

    async def store(self, message: Message) -> Message:
        """Saved as a reply is: while another program holds the database's write lock, the
        round waits for it."""
        return await stored(functools.partial(self.save, message))

    def answer_interrupted(self) -> None:
        """Calls a killed process left without results get one saying so: a call without its
        result can never be sent, and it would take its question with it."""
        for _, call in unanswered(self._history.all):
            with contextlib.suppress(StoreError):
                self.save(tool_result_message(call, INTERRUPTED, error=True))
