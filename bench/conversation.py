"""60 turns of Chinese, English and one pasted 20k-token file against a strict 4,096-token server:
the "last 20 messages" client (the seed's starting point) beside jarvis-tui's engine, same run.

Run from the repository root: python bench/conversation.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.compaction.summarizer import SUMMARY_SYSTEM_PROMPT  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.fakeserver import FakeProvider, count_tokens  # noqa: E402

TURNS = 60
LIMIT = 4096
SYSTEM = "You are Jarvis, a helpful assistant."


def texts() -> list[str]:
    big = "\n".join(f"def handler_{i}(request):\n    return respond(request, code={i})"
                    for i in range(1400))
    out = []
    for i in range(TURNS):
        if i == 20:
            out.append("Please review this file:\n" + big)
        elif i % 2:
            out.append(f"第{i}轮：我们讨论一下上下文窗口的管理方式，"
                       "以及为什么不能只发送最后二十条消息。" * 3)
        else:
            out.append(f"We plan release {i}; the build must pass on Linux and macOS, and the "
                       "changelog should mention the token gauge. " * 3)
    return out


def summarising(fake: FakeProvider) -> None:
    def reply(body: dict) -> str:
        if body["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT:
            return "Summary: " + " ".join(body["messages"][-1]["content"].split()[:60])
        return fake.default_reply(body) + " Here is a considered answer. " * 6
    fake.reply_fn = reply


async def last_twenty(fake: FakeProvider, turns: list[str]) -> dict[str, float]:
    """The naive client: system + messages[-20:], and a 400 is the end of that turn."""
    history: list[dict] = []
    failed = 0
    async with httpx.AsyncClient(timeout=30) as client:
        for text in turns:
            history.append({"role": "user", "content": text})
            resp = await client.post(f"{fake.base_url}/chat/completions", json={
                "model": "fake", "max_tokens": 512,
                "messages": [{"role": "system", "content": SYSTEM}] + history[-20:]})
            if resp.status_code != 200:
                failed += 1
                continue
            history.append({"role": "assistant",
                            "content": resp.json()["choices"][0]["message"]["content"]})
    return {"answered": len(turns) - failed, "failed": failed,
            "forgotten": max(len(history) - 20, 0), "summaries": 0, "overflow_retries": 0}


async def engine(fake: FakeProvider, turns: list[str], db: Path) -> dict[str, float]:
    settings = Settings(base_url=fake.base_url, model="fake", system_prompt=SYSTEM,
                        context_window=LIMIT, response_reserve=512, system_reserve=256)
    failed = compactions = 0
    forgotten = 0
    async with OpenAIProvider(fake.base_url) as provider:
        with Store(db) as store:
            eng = Engine(settings, store, provider)
            for text in turns:
                async for event in eng.stream_reply(text):
                    if isinstance(event, ev.Failed):
                        failed += 1
                    elif isinstance(event, ev.CompactionFinished):
                        compactions += 1
                    elif isinstance(event, ev.WindowFitted):
                        forgotten = event.dropped_messages
            stored = len(store.messages(eng.conversation.id))
    return {"answered": len(turns) - failed, "failed": failed, "forgotten": forgotten,
            "summaries": compactions, "stored": stored}


def prompt_stats(fake: FakeProvider, summaries: bool) -> tuple[int, int, int]:
    chat = [r for r in fake.chat_requests
            if (r.body["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT) == summaries]
    ok = [r.prompt_tokens for r in chat if r.status == 200]
    return len(chat), sum(r.overflowed for r in chat), max(ok, default=0)


async def main() -> None:
    turns = texts()
    print(f"{TURNS} turns, pasted file of {count_tokens(turns[20])} tokens (cl100k), server "
          f"limit {LIMIT} tokens, response reserve 512\n")
    rows = []
    for name in ("last 20 messages", "jarvis-tui engine"):
        with FakeProvider(limit=LIMIT) as fake, tempfile.TemporaryDirectory() as tmp:
            summarising(fake)
            start = time.perf_counter()
            if name == "last 20 messages":
                result = await last_twenty(fake, turns)
            else:
                result = await engine(fake, turns, Path(tmp) / "s.db")
            seconds = time.perf_counter() - start
            requests, overflows, biggest = prompt_stats(fake, summaries=False)
            summary_calls = prompt_stats(fake, summaries=True)[0]
            rows.append((name, result, requests, overflows, biggest, summary_calls, seconds))
    print(f"{'client':20} {'answered':>8} {'failed':>6} {'requests':>8} {'400s':>5} "
          f"{'max prompt':>10} {'summaries':>9} {'sum calls':>9} {'forgotten':>9} {'s':>6}")
    for name, r, requests, overflows, biggest, summary_calls, seconds in rows:
        print(f"{name:20} {r['answered']:>8} {r['failed']:>6} {requests:>8} {overflows:>5} "
              f"{biggest:>10} {r['summaries']:>9} {summary_calls:>9} {r['forgotten']:>9} "
              f"{seconds:>6.2f}")
    print("\nforgotten = messages at the last turn neither sent nor covered by a summary")


if __name__ == "__main__":
    asyncio.run(main())
