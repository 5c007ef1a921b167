"""60 turns of Chinese, English and one pasted 20k-token file against a strict 4,096-token server:
the "last 20 messages" client (the seed's starting point), the token-budget client (the best
simple alternative, tests/budget_client.py) and jarvis-tui's engine, same turns, same fake.

The fake answers every summary request the engine sends (the prefix form, the small prompt, the
plain style's, the repair; recognised by the tests' own `is_summary_request`) with a summary of
what it was asked to fold in, and counts them. A run that compacted without one recognised
summary request measured nothing and exits 1, as does a request the summariser sent (they do not
stream) that the recogniser missed.

Run from the repository root: python bench/cost/conversation.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.budget_client import BudgetClient  # noqa: E402
from tests.engine_helpers import is_summary_request, summary_material  # noqa: E402
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
    """A model that summarises when asked to: a few words of each part of the material (the
    previous summary, each turn), at most 150 words, and chats otherwise."""
    def reply(body: dict) -> str:
        if is_summary_request(body):
            parts = [" ".join(p.split()[:8]) for p in summary_material(body).split("\n\n")
                     if p.strip() and p.strip() != SYSTEM]
            return "Summary: " + " ".join("; ".join(parts).split()[-150:])
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
    chat = [r for r in fake.chat_requests if is_summary_request(r.body) == summaries]
    ok = [r.prompt_tokens for r in chat if r.status == 200]
    return len(chat), sum(r.overflowed for r in chat), max(ok, default=0)


def unrecognised(fake: FakeProvider) -> int:
    """Requests that did not stream (the summariser's way) yet are no summary request we know."""
    return sum(1 for r in fake.chat_requests
               if not r.body.get("stream") and not is_summary_request(r.body))


async def budget(fake: FakeProvider, turns: list[str]) -> dict[str, float]:
    """The best simple alternative: a token budget filled newest-first, SDK retries, no
    summaries; a 400 is the end of that turn."""
    failed = forgotten = 0
    async with httpx.AsyncClient(timeout=30) as http:
        client = BudgetClient(http, fake.base_url, system=SYSTEM, window=LIMIT, reserve=512)
        for text in turns:
            done = await client.ask(text)
            failed += done.reply is None
            forgotten = done.dropped
    return {"answered": len(turns) - failed, "failed": failed, "forgotten": forgotten,
            "summaries": 0}


async def main() -> int:
    global TURNS
    if "--quick" in sys.argv[1:]:  # to see it runs: still past the paste at turn 20
        TURNS = 24
    turns = texts()
    print(f"{TURNS} turns, pasted file of {count_tokens(turns[20])} tokens (cl100k), server "
          f"limit {LIMIT} tokens, response reserve 512\n")
    rows = []
    problems: list[str] = []
    for name in ("last 20 messages", "token budget", "jarvis-tui engine"):
        with FakeProvider(limit=LIMIT) as fake, tempfile.TemporaryDirectory() as tmp:
            summarising(fake)
            start = time.perf_counter()
            if name == "last 20 messages":
                result = await last_twenty(fake, turns)
            elif name == "token budget":
                result = await budget(fake, turns)
            else:
                result = await engine(fake, turns, Path(tmp) / "s.db")
            seconds = time.perf_counter() - start
            requests, overflows, biggest = prompt_stats(fake, summaries=False)
            summary_calls = prompt_stats(fake, summaries=True)[0]
            if result["summaries"] and not summary_calls:
                problems.append(f"{name}: {result['summaries']} compactions but 0 recognised "
                                "summary requests: the fake answered them as chat")
            if name == "jarvis-tui engine" and (missed := unrecognised(fake)):
                problems.append(f"{name}: {missed} unstreamed requests that are no recognised "
                                "summary request")
            rows.append((name, result, requests, overflows, biggest, summary_calls, seconds))
    print(f"{'client':20} {'answered':>8} {'failed':>6} {'requests':>8} {'400s':>5} "
          f"{'max prompt':>10} {'summaries':>9} {'sum calls':>9} {'forgotten':>9} {'s':>6}")
    for name, r, requests, overflows, biggest, summary_calls, seconds in rows:
        print(f"{name:20} {r['answered']:>8} {r['failed']:>6} {requests:>8} {overflows:>5} "
              f"{biggest:>10} {r['summaries']:>9} {summary_calls:>9} {r['forgotten']:>9} "
              f"{seconds:>6.2f}")
    print("\nrequests, 400s, max prompt: chat requests; summaries: compactions finished; sum calls:"
          " summary requests the fake recognised and answered with a summary; forgotten ="
          " messages at the last turn neither sent nor covered by a summary")
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
