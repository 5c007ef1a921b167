"""What a round does when one of its requests fails: one step per kind of failure.

- The window overflowed (ContextOverflow): compact or stub tool outputs, fit the next attempt
  smaller, and try again; a second refusal after that, or one that came mid-reply, ends it.
- A tool's definition was refused (RequestError pointing at a tool, or search_history offered
  to a server without tools): the tool is left out and the round tries again without it.
- A fault that may pass (RetryableError: a timeout, 429, 5xx): wait and try again, up to
  max_retries; mid-reply, it ends.
- Any other refusal (ProviderError) ends the round.

A round that ends keeps what arrived (Requests.fail). Each step yields the events the user
sees, and says in `Verdict` whether the round tries again; the round (Engine._round) reads
it, since an async generator returns nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.requests import Attempt, Requests
from jarvis_tui.core.engine.retry_policy import RoundRetries
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.errors import (
    ContextOverflow,
    ImagesRefused,
    ProviderError,
    RequestError,
    RetryableError,
    ToolsRefused,
    provider_message,
)
from jarvis_tui.core.tools.attachment_tool import ATTACHMENT_SPEC
from jarvis_tui.core.tools.history_tool import HISTORY_SPEC, refused_alone
from jarvis_tui.core.tools.refused import RefusedTools
from jarvis_tui.core.window.fit import FittedWindow

# The tools jarvis-tui offers itself: a server without tools refuses them alike.
BUILTIN_SPECS = (HISTORY_SPEC, ATTACHMENT_SPEC)


@dataclass
class Verdict:
    """What became of a request: it failed and the round tries again (`again`), or it
    failed and the round has ended (`ended`), or neither: it was answered."""

    again: bool = False
    ended: bool = False


@dataclass(frozen=True)
class Failed:
    """The attempt that failed, as the recovery needs it."""

    user: Message
    attempt: Attempt
    fitted: FittedWindow
    offered: list[ToolSpec]  # the tools the request offered
    answered: bool  # an earlier step of the round was answered (its reply is stored)
    tried: RoundRetries


class Recovery:
    """The steps, with what they act through: the round's requests, the tools left out, how
    long to wait before a retry and the waiting itself, and what to keep when search_history
    is refused (so a later run does not offer it to that model again)."""

    def __init__(self, requests: Requests, refused_tools: RefusedTools,
                 basis: Callable[[], RequestBasis], *,
                 backoff: Callable[[int, float | None], float],
                 sleep: Callable[[float], Awaitable[object]],
                 search_refused: Callable[[], None],
                 images_refused: Callable[[], None] = lambda: None) -> None:
        self._requests = requests
        self._refused_tools = refused_tools
        # Taken as each step runs, not before: a refusal for size may teach the window (and
        # so the room) while it is recovered.
        self._basis = basis
        self._backoff = backoff
        self._sleep = sleep
        self._search_refused = search_refused
        self._images_refused = images_refused  # the model takes none: kept with the session

    def after(self, err: ProviderError, failed: Failed,
              verdict: Verdict) -> AsyncIterator[ev.Event]:
        """The step for `err`'s kind."""
        if isinstance(err, ContextOverflow):
            return self.overflowed(err, failed, verdict)
        if isinstance(err, RequestError):
            return self.refused(err, failed, verdict)
        if isinstance(err, RetryableError):
            return self.faulted(err, failed, verdict)
        return self.ended(err.message, failed)

    async def ended(self, why: str, failed: Failed) -> AsyncIterator[ev.Event]:
        yield self._requests.fail(failed.user, failed.attempt.parts, why,
                                  answered=failed.answered)

    async def overflowed(self, err: ContextOverflow, failed: Failed,
                         verdict: Verdict) -> AsyncIterator[ev.Event]:
        tried = failed.tried
        too_many = tried.overflowed()
        if failed.attempt.parts or too_many:
            yield self._requests.fail(
                failed.user, failed.attempt.parts, "the conversation does not fit the model's "
                f"context window even after compacting; the server said: {err.said}",
                answered=failed.answered)
            return
        relieved = False  # a summary or stubbed tool outputs made room
        async for event in self._requests.recover_overflow(err, failed.fitted):
            relieved = relieved or isinstance(
                event, ev.CompactionFinished | ev.ToolOutputsPruned)
            yield event
        tried.narrow(err, failed.fitted, self._basis().counter.factor)
        if not relieved:  # the size the next attempt is fitted to, smaller each time
            yield ev.Trimmed(int(self._basis().budget.tokens * tried.shrink))
        verdict.again = True

    async def refused(self, err: RequestError, failed: Failed,
                      verdict: Verdict) -> AsyncIterator[ev.Event]:
        # One tool's schema must not stop the conversation: without it the request is good.
        # A refusal that points at none of the tools sent is final, as before. A server
        # without tools refuses the built-in tools offered alone: left out alike.
        refused = (err if isinstance(err, ToolsRefused)
                   else refused_alone(err, failed.offered, BUILTIN_SPECS))
        left = (None if failed.attempt.parts or refused is None
                else self._refused_tools.leave_out(refused, failed.offered))
        if left is None:
            if isinstance(err, ImagesRefused):
                self._images_refused()
            yield self._requests.fail(failed.user, failed.attempt.parts, err.message,
                                      answered=failed.answered)
            return
        if left == HISTORY_SPEC:  # kept with the session: not asked again next run
            self._search_refused()
        yield ev.ToolLeftOut(left.name, left.server, provider_message(err.body) or err.message)
        verdict.again = True

    async def faulted(self, err: RetryableError, failed: Failed,
                      verdict: Verdict) -> AsyncIterator[ev.Event]:
        tried = failed.tried
        too_many = tried.faulted(err, self._basis().settings.max_retries)
        if failed.attempt.parts or too_many:
            why = (err.message if not failed.attempt.parts
                   else f"the reply was cut off: {err.message}")
            yield self._requests.fail(failed.user, failed.attempt.parts, why,
                                      answered=failed.answered)
            return
        delay = self._backoff(tried.retries, err.retry_after)
        yield ev.Retrying(err.message, tried.retries, delay)
        await self._sleep(delay)
        verdict.again = True
