"""Driving a provider's stream in tests: every event collected, the reply text, a huge prompt."""

from __future__ import annotations

from typing import Any

from jarvis_tui.core.providers.base import ChatDelta


async def stream_events(provider: Any, messages: list[dict], max_tokens: int = 256,
                        sink: list | None = None, *, model: str,
                        context_window: int | None = None) -> list:
    """Every event of one streamed request; `sink` collects them as they come (to inspect
    what arrived before an error)."""
    events = sink if sink is not None else []
    async for event in provider.stream_chat(messages, model=model, max_tokens=max_tokens,
                                            context_window=context_window):
        events.append(event)
    return events


def text_of(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, ChatDelta))


def huge(n_words: int) -> list[dict]:
    return [{"role": "user", "content": " ".join(f"word{i}" for i in range(n_words))}]


def shared(a: list[int], b: list[int]) -> int:
    """Leading tokens two prompts have in common, counted one by one
    (apart from the fakes' own cache, so the tests check it)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
