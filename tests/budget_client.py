"""The best simple alternative to the engine, for the benches' side-by-sides: a chat client that
keeps a token budget the way a careful one would, and nothing more.

- Each request is filled newest-first with whole messages while the estimate stays under the
  context window minus the response reserve (`max_tokens`), stopping at the first message that
  does not fit, so what it sends is always the system message plus a contiguous tail.
- The estimate is OpenAI's published one (the cookbook's `num_tokens_from_messages`: cl100k, 3
  tokens a message, 3 to prime the reply): exact against the fake servers, whose count is that.
- It streams, and retries what the OpenAI Python SDK retries by default (2 retries on a
  connection error, a timeout, 408, 409, 429 and 5xx; Retry-After honoured up to 60 s, else
  0.5 s doubling to 8 s). A malformed stream event is an error, as in the SDK; a stream that
  ends without a finish_reason is reported as cut, its partial reply kept.
- What the user typed stays in its history whatever happens, and so does a partial reply.
- No summaries, no compaction, no retry after a context overflow: the server's 400 is shown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from tests.fakeserver import count_tokens

RETRIED_STATUSES = {408, 409, 429}
SDK_RETRIES = 2


def estimate(messages: list[dict]) -> int:
    """The cookbook's count: 3 per message plus its text, 3 to prime the reply."""
    return sum(3 + count_tokens(m["content"] or "") for m in messages) + 3


def fill(system: str, history: list[dict], budget: int) -> list[dict]:
    """The system message and the newest messages whose estimate stays within `budget`."""
    sent = [{"role": "system", "content": system}]
    used = estimate(sent)
    tail: list[dict] = []
    for message in reversed(history):
        cost = 3 + count_tokens(message["content"] or "")
        if tail and used + cost > budget:
            break
        tail.append(message)  # the newest message goes even alone over budget: the server says
        used += cost
    return sent + tail[::-1]


@dataclass
class Round:
    reply: str | None  # None when the round ended in an error
    error: str | None
    sent: int  # messages sent on the last attempt (system included)
    dropped: int  # history messages left out of it
    attempts: int


class BudgetClient:
    def __init__(self, client: httpx.AsyncClient, base_url: str, *, system: str, window: int,
                 reserve: int = 512, model: str = "fake-model",
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self.client, self.base_url, self.system = client, base_url, system
        self.window, self.reserve, self.model, self.sleep = window, reserve, model, sleep
        self.history: list[dict] = []

    async def ask(self, text: str) -> Round:
        self.history.append({"role": "user", "content": text})
        messages = fill(self.system, self.history, self.window - self.reserve)
        dropped = len(self.history) - (len(messages) - 1)
        attempt = 0
        while True:
            attempt += 1
            wait = None
            try:
                reply, error, wait = await self._stream(messages)
            except (httpx.TimeoutException, httpx.TransportError) as err:
                reply, error = None, f"{type(err).__name__}: {err}".strip(": ")
                wait = 0.0
            if wait is not None and attempt <= SDK_RETRIES:
                await self.sleep(wait or min(0.5 * 2 ** (attempt - 1), 8.0))
                continue
            if reply:
                self.history.append({"role": "assistant", "content": reply})
            return Round(None if error else reply, error, len(messages), dropped, attempt)

    async def _stream(self, messages: list[dict]) -> tuple[str | None, str | None, float | None]:
        """(reply, error, retry wait): the wait is None when the SDK would not retry, 0.0 for
        its own back-off, else the server's Retry-After."""
        body = {"model": self.model, "max_tokens": self.reserve, "stream": True,
                "messages": messages}
        async with self.client.stream("POST", f"{self.base_url}/chat/completions",
                                      json=body) as resp:
            if resp.status_code != 200:
                text = (await resp.aread()).decode("utf-8", "replace")
                retry = resp.status_code in RETRIED_STATUSES or resp.status_code >= 500
                after = resp.headers.get("retry-after", "")
                wait = float(after) if after.isdigit() and 0 < int(after) <= 60 else 0.0
                return None, f"{resp.status_code}: {text[:200]}", wait if retry else None
            parts: list[str] = []
            finished = False
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    return "".join(parts), "a stream event that is not JSON", None
                if "error" in event:
                    return "".join(parts), f"error event: {event['error']}", None
                for choice in event.get("choices") or []:
                    parts.append((choice.get("delta") or {}).get("content") or "")
                    finished = finished or bool(choice.get("finish_reason"))
            reply = "".join(parts)
            return reply, None if finished else "the reply was cut off", None
