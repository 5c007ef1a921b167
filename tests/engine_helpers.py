"""Building an engine wired to a fake server, and running rounds through it."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import (
    PLAIN_PREFIX_INSTRUCTIONS,
    PLAIN_SMALL_INSTRUCTIONS,
    PREFIX_INSTRUCTION,
    SUMMARY_SYSTEM_PROMPT,
)
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.store import Store
from tests.fake_anthropic import text_of
from tests.fakeserver import FakeProvider

BASE = Settings(
    model="fake-model",
    context_window=4096,
    response_reserve=512,
    system_reserve=256,
    compact_threshold=0.7,
    keep_recent_turns=3,
    summary_max_tokens=300,
    max_retries=3,
    retry_base_delay=0.01,
    retry_max_delay=0.05,
    request_timeout=10,
    connect_timeout=2,
)


class Sleeps:
    """Records the back-off delays the engine asks for and really waits (briefly)."""

    def __init__(self, cap: float = 0.05):
        self.delays: list[float] = []
        self.cap = cap

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(min(delay, self.cap))


def is_prefix_summary(body: dict) -> bool:
    """A summary asked at the end of the chat request's own prefix (its cache reused), in
    either style (the bundled local model's "plain" or the standard one)."""
    msgs = body.get("messages", [])
    return bool(msgs) and text_of(msgs[-1].get("content")).startswith(
        (PREFIX_INSTRUCTION, *PLAIN_PREFIX_INSTRUCTIONS.values()))


def plain_small_instruction(body: dict) -> str | None:
    """The instruction of a plain-style small prompt (one user turn, the material then the
    instruction), None for any other request."""
    msgs = body.get("messages", [])
    if len(msgs) != 1:
        return None
    content = text_of(msgs[0].get("content"))
    return next((i for i in PLAIN_SMALL_INSTRUCTIONS.values() if f"\n\n{i}" in content), None)


def is_summary_request(body: dict) -> bool:
    """Either summary request, in OpenAI's shape or Anthropic's (system apart, blocks)."""
    msgs = body.get("messages", [])
    system = text_of(body["system"]) if "system" in body else (
        text_of(msgs[0].get("content")) if msgs else "")
    return bool(msgs) and (system == SUMMARY_SYSTEM_PROMPT or is_prefix_summary(body)
                           or plain_small_instruction(body) is not None)


def summary_material(body: dict) -> str:
    """What a summary request asks to fold in: the transcript of the small prompt, or the
    whole front of a prefix summary request."""
    msgs = body["messages"]
    if is_prefix_summary(body):
        return "\n\n".join(text_of(m.get("content")) for m in msgs[:-1])
    if (instruction := plain_small_instruction(body)) is not None:
        return text_of(msgs[-1]["content"]).rpartition(f"\n\n{instruction}")[0]
    return text_of(msgs[-1]["content"])


def summarising_replies(fake: FakeProvider, chat_words: int = 30) -> None:
    """Replies like a model would: a compact summary for summary requests, prose otherwise."""

    def reply(body: dict) -> str:
        if is_summary_request(body):
            material = summary_material(body)
            return "Summary: " + " ".join(material.split()[:40])
        return fake.default_reply(body) + " " + "more words in the answer" * (chat_words // 5)

    fake.reply_fn = reply


def make_engine(fake: FakeProvider | str, tmp_path: Path, *, sleep: Sleeps | None = None,
                conversation_id: int | None = None, store: Store | None = None,
                **changes: object) -> Engine:
    base_url = fake if isinstance(fake, str) else fake.base_url
    tools, approve = changes.pop("tools", None), changes.pop("approve", None)
    settings = replace(BASE, base_url=base_url, **changes)
    store = store or Store(tmp_path / "sessions.db")
    provider = OpenAIProvider(base_url, "", timeout=settings.request_timeout,
                              connect_timeout=settings.connect_timeout)
    return Engine(settings, store, provider, conversation_id, sleep=sleep or Sleeps(),
                  jitter=lambda: 0.5, tools=tools, approve=approve)  # type: ignore[arg-type]


async def send(engine: Engine, text: str) -> list[ev.Event]:
    return [event async for event in engine.stream_reply(text)]


async def until(condition: Callable[[], object], what: str, limit_s: float = 10.0) -> None:
    """Let the event loop run until `condition()` holds; fail with `what` if it never does (a
    bare wait on a broken condition would hang the suite)."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for: {what}")
        await asyncio.sleep(0.01)


def kinds(events: list[ev.Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def final(events: list[ev.Event]) -> ev.Event:
    return events[-1]


def running(pid: int) -> bool:
    """Whether process `pid` still runs; one that exited but is not yet reaped (a zombie) does
    not, for every practical purpose."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
