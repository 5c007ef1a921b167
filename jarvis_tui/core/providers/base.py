"""What every provider yields and returns, whatever its wire protocol.

Messages going in are already in OpenAI chat shape (``{"role": ..., "content": ...}``); a provider
with another wire format translates them itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ChatDelta:
    """A piece of reply text, in arrival order."""

    text: str


@dataclass(frozen=True)
class ChatUsage:
    """Token counts the server reported for the request (at most once, before ChatDone)."""

    prompt_tokens: int  # the whole prompt, cached or not
    completion_tokens: int
    # Of prompt_tokens, read from the provider's prompt cache (None: the server does not say).
    cached_tokens: int | None = None
    # Of prompt_tokens, written to the cache this time (Anthropic bills these dearer).
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class ChatToolCall:
    """One tool call the reply asks for, whole (streamed fragments already joined), yielded
    after the reply's text and before ChatUsage / ChatDone. `arguments` is the JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatDone:
    """The reply finished cleanly; always the last item of a stream."""

    finish_reason: str | None


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    tool_calls: tuple[ChatToolCall, ...] = ()

    def events(self) -> list[ChatEvent]:
        """What a stream of this answer would have been (a server that ignored stream=true)."""
        events: list[ChatEvent] = [ChatDelta(self.text)] if self.text else []
        events.extend(self.tool_calls)
        if self.prompt_tokens is not None:
            events.append(ChatUsage(self.prompt_tokens, self.completion_tokens or 0,
                                    self.cached_tokens, self.cache_write_tokens))
        events.append(ChatDone(self.finish_reason))
        return events


ChatEvent = ChatDelta | ChatToolCall | ChatUsage | ChatDone


class Provider(Protocol):
    name: str
    # True for servers that cut an over-long prompt themselves instead of refusing it (Ollama):
    # the engine then compares the reported prompt tokens with what it sent.
    truncates_silently: bool

    def stream_chat(
        self, messages: list[dict], *, model: str, max_tokens: int,
        context_window: int | None = None, tools: list[dict] | None = None,
    ) -> AsyncIterator[ChatEvent]:
        """`tools`: ToolSpec.wire() dicts (name, description, parameters), translated to the
        protocol's own shape; None or empty sends none. Messages may hold OpenAI-shape tool
        calls (assistant `tool_calls`) and results (role `tool`, `tool_call_id`)."""
        ...

    async def complete(
        self, messages: list[dict], *, model: str, max_tokens: int,
        context_window: int | None = None, tools: list[dict] | None = None,
    ) -> Completion: ...

    async def detect_context_window(self, model: str) -> int | None:
        """The window the server runs the model with, if it says (None when it does not)."""
        ...

    async def aclose(self) -> None: ...
