"""Every fault a provider can throw at a conversation, each run through the real engine against a
fake server on a loopback socket, and what became of it: survived, messages lost, retries, time.

Shared by tests/faults/test_fault_matrix.py (which asserts every row) and bench/faults/faults.py
(which prints them). A row survives when the round ends the way the fault allows (a reply, or for
faults that cannot be recovered a clear error) with no exception, and nothing the user or the
model wrote is missing from the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.store.store import Store
from tests.budget_client import BudgetClient
from tests.engine_helpers import BASE, is_summary_request, summary_material
from tests.fake_anthropic import FakeAnthropic, text_of
from tests.fake_ollama import FakeOllama
from tests.fakeserver import FakeProvider, overflow_answer

LONG = "The deploy log says the collector restarted twice; keep the port 8443 in mind. " * 6
CHINESE = "请记住：日志服务迁移到新集群，端口 8443，先备份 /var/log/app。" * 6


@dataclass
class Outcome:
    name: str
    expect: str  # "reply" or "error"
    survived: bool
    lost: int
    retries: int
    seconds: float
    result: str  # what the user saw in the end, one line


@dataclass
class Case:
    name: str
    expect: str
    run: Callable[[Path, Callable[[float], Awaitable[object]]], Awaitable[Outcome]]
    # The same fault against the plain client (`plain_client`), for the bench's side-by-side;
    # None where there is no OpenAI-compatible endpoint, or the fault hits a summary request,
    # which that client never makes.
    run_plain: Callable[[Callable[[float], Awaitable[object]]], Awaitable[Outcome]] | None = None


def summaries_or_prose(body: dict) -> str:
    """A model: a short summary for summary requests, a short answer otherwise."""
    if is_summary_request(body):
        return "Summary: " + " ".join(summary_material(body).split()[:30])
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return "Noted: " + " ".join(text_of(users[-1].get("content")).split()[:12]) if users else "ok"


async def converse(name: str, expect: str, engine: Engine, prefill: list[str],
                   arm: Callable[[], None], question: str) -> Outcome:
    """Talk (`prefill`), arm the fault, ask `question`, then check the store lost nothing."""
    for text in prefill:
        await _drain(engine, text)
    arm()
    start = time.monotonic()
    try:
        events = await _drain(engine, question)
    except Exception as err:  # the point of the matrix: this must never happen
        return Outcome(name, expect, False, -1, 0, time.monotonic() - start,
                       f"crashed: {type(err).__name__}: {err}")
    seconds = time.monotonic() - start
    end = events[-1]
    stored = engine.store.messages(engine.conversation.id)
    contents = [m.content for m in stored]
    lost = sum(1 for text in [*prefill, question] if text not in contents)
    replies = [e.message for e in events if isinstance(e, ev.Finished | ev.Failed)
               and e.message is not None]
    lost += sum(1 for r in replies if r.id is None or r.content not in contents)
    retries = sum(isinstance(e, ev.WindowFitted) for e in events) - 1
    if isinstance(end, ev.Finished):
        result = f"reply ({len(end.message.content)} chars)"
        ok = expect == "reply"
    elif isinstance(end, ev.Failed):
        kept = f"; partial reply kept ({len(end.message.content)} chars)" if end.message else ""
        result = f"error: {end.error}{kept}"
        ok = expect == "error" and bool(end.error.strip())
    else:
        result, ok = f"ended on {type(end).__name__}", False
    notes = [type(e).__name__ for e in events if isinstance(
        e, ev.ContextLimitLearned | ev.CompactionFailed | ev.ContextTruncated | ev.Trimmed)]
    if notes:
        result += " [" + ", ".join(dict.fromkeys(notes)) + "]"
    return Outcome(name, expect, ok and lost == 0, lost, retries, seconds, result)


async def _drain(engine: Engine, text: str) -> list[ev.Event]:
    return [event async for event in engine.stream_reply(text)]


def _engine(base_url: str, tmp: Path, sleep: Callable[[float], Awaitable[object]],
            **changes: object) -> Engine:
    settings = replace(BASE, base_url=base_url, **changes)
    return Engine(settings, Store(tmp / "sessions.db"), make_provider(settings), sleep=sleep,
                  jitter=lambda: 0.5)


# -- the cases ---------------------------------------------------------------------------------

def _openai_case(name: str, expect: str, arm: Callable[[FakeProvider], None], *,
                 flavor: str = "openai", limit: int = 4096, prefill: int = 3, size: int = 1,
                 question: str = "what port was it?", plain: bool = True,
                 **changes: object) -> Case:
    async def run(tmp: Path, sleep: Callable[[float], Awaitable[object]]) -> Outcome:
        fake = FakeProvider(limit=100_000, flavor=flavor).start()
        fake.reply_fn = summaries_or_prose
        try:
            engine = _engine(fake.base_url, tmp, sleep, **changes)
            talk = [f"{i}: {(LONG if i % 2 else CHINESE) * size}" for i in range(prefill)]

            def armed() -> None:
                fake.limit = limit
                arm(fake)

            outcome = await converse(name, expect, engine, talk, armed, question)
            await engine.provider.aclose()
            return outcome
        finally:
            fake.stop()

    async def run_plain(sleep: Callable[[float], Awaitable[object]]) -> Outcome:
        fake = FakeProvider(limit=100_000, flavor=flavor).start()
        fake.reply_fn = summaries_or_prose
        try:
            talk = [f"{i}: {(LONG if i % 2 else CHINESE) * size}" for i in range(prefill)]

            def armed() -> None:
                fake.limit = limit
                arm(fake)

            return await plain_client(
                name, expect, fake.base_url, talk, armed, question,
                float(changes.get("request_timeout", BASE.request_timeout)),
                int(changes.get("context_window", BASE.context_window)),  # type: ignore[arg-type]
                int(changes.get("response_reserve", BASE.response_reserve)),  # type: ignore[arg-type]
                sleep)
        finally:
            fake.stop()

    return Case(name, expect, run, run_plain if plain else None)


async def plain_client(name: str, expect: str, base_url: str, talk: list[str],
                       arm: Callable[[], None], question: str, timeout: float, window: int,
                       reserve: int, sleep: Callable[[float], Awaitable[object]]) -> Outcome:
    """The best simple alternative (tests/budget_client.py): a token budget filled newest-first,
    the OpenAI SDK's retries, no compaction and no retry after an overflow. Judged as the engine
    is: the round ends the way the fault allows, and nothing typed or replied is missing from its
    history (which it keeps in memory)."""
    async with httpx.AsyncClient(timeout=timeout) as http:
        client = BudgetClient(http, base_url, system=BASE.system_prompt, window=window,
                              reserve=reserve, sleep=sleep)
        for text in talk:
            await client.ask(text)
        arm()
        start = time.monotonic()
        try:
            done = await client.ask(question)
        except Exception as err:  # never expected: the client catches what the SDK would
            return Outcome(name, expect, False, 1, 0, time.monotonic() - start,
                           f"crashed: {type(err).__name__}: {err}"[:120])
        seconds = time.monotonic() - start
        contents = [m["content"] for m in client.history]
        lost = sum(1 for text in [*talk, question] if text not in contents)
        if done.reply is not None:
            ok, result = expect == "reply", f"reply ({len(done.reply)} chars)"
        else:
            ok, result = expect == "error" and bool(done.error), f"error: {done.error}"
        return Outcome(name, expect, ok and lost == 0, lost, done.attempts - 1, seconds,
                       result.splitlines()[0][:120])


def _overflow(flavor: str) -> Case:
    # We believe 16k; the server holds 2,048 and says so (or not) in its own words. The talk
    # before is about 4,000 tokens, so the next request cannot fit.
    return _openai_case(f"context overflow ({flavor})", "reply", lambda fake: None,
                        flavor=flavor, limit=2048, prefill=8, size=3, context_window=16_384,
                        response_reserve=256, system_reserve=128, keep_recent_turns=1)


def _faults(*faults: tuple | None) -> Callable[[FakeProvider], None]:
    return lambda fake: fake.faults.extend(faults)


def _stop(fake: FakeProvider) -> None:
    fake.stop()


def _summary_overflow(fake: FakeProvider) -> None:
    # The threshold compaction runs first; its summary request is refused as too long.
    status, body = overflow_answer("openai", 2048, 5000, 300)
    fake.faults.append(("status", status, {}, body))


def _auth(status: int) -> Callable[[FakeProvider], None]:
    body = {"error": {"message": "Incorrect API key provided: sk-te***1234.", "type":
                      "invalid_request_error", "code": "invalid_api_key"}}
    return _faults(("status", status, {}, body))


ERROR_500 = {"error": {"message": "The server had an error processing your request.",
                       "type": "server_error"}}


def _anthropic_overflow() -> Case:
    async def run(tmp: Path, sleep: Callable[[float], Awaitable[object]]) -> Outcome:
        fake = FakeAnthropic(limit=100_000).start()
        fake.reply_fn = summaries_or_prose
        try:
            engine = _engine(fake.base_url, tmp, sleep, provider="anthropic",
                             model="claude-fake", context_window=16_384, response_reserve=256,
                             system_reserve=128, keep_recent_turns=1)
            talk = [f"{i}: {LONG * 3}" for i in range(8)]

            def arm() -> None:
                fake.limit = 2048

            outcome = await converse("context overflow (Anthropic API)", "reply", engine, talk,
                                     arm, "what port was it?")
            await engine.provider.aclose()
            return outcome
        finally:
            fake.stop()

    return Case("context overflow (Anthropic API)", "reply", run)


def _anthropic_overloaded() -> Case:
    async def run(tmp: Path, sleep: Callable[[float], Awaitable[object]]) -> Outcome:
        fake = FakeAnthropic().start()
        try:
            engine = _engine(fake.base_url, tmp, sleep, provider="anthropic",
                             model="claude-fake")
            body = {"type": "error", "error": {"type": "overloaded_error",
                                               "message": "Overloaded"}}

            def arm() -> None:
                fake.faults.append(("status", 529, {}, body))

            outcome = await converse("529 overloaded (Anthropic API)", "reply", engine,
                                     ["hello"], arm, "again")
            await engine.provider.aclose()
            return outcome
        finally:
            fake.stop()

    return Case("529 overloaded (Anthropic API)", "reply", run)


def _ollama(name: str, *, show_works: bool) -> Case:
    """The user configured 4,096 but the model only has 2,048: Ollama lowers num_ctx itself and
    cuts the oldest messages without a word. With /api/show working the engine learns the real
    window before sending; without it, it must notice the cut from prompt_eval_count."""

    async def run(tmp: Path, sleep: Callable[[float], Awaitable[object]]) -> Outcome:
        fake = FakeOllama(context_length=2048).start()
        fake.reply_fn = summaries_or_prose
        if not show_works:
            fake.show_override = (500, {"error": "show is broken on this server"})
        try:
            engine = _engine(fake.base_url, tmp, sleep, provider="ollama", model="llama3.2",
                             context_window=4096, response_reserve=256, system_reserve=128,
                             keep_recent_turns=1, compact_threshold=1.0)
            talk = [f"{i}: {CHINESE}" for i in range(6)]
            # The seventh message takes the conversation past the model's real 2,048.
            outcome = await converse(name, "reply", engine, talk, lambda: None,
                                     f"6: {CHINESE} 端口是多少？")
            cut = sum(1 for r in fake.requests if getattr(r, "truncated", False))
            if show_works and cut:
                outcome.survived = False
                outcome.result += f" ({cut} requests cut although the window was known)"
            if not show_works and "ContextTruncated" not in outcome.result:
                outcome.survived = False
                outcome.result += " (a cut went unnoticed)" if cut else \
                    " (the fake never cut: the case proves nothing)"
            await engine.provider.aclose()
            return outcome
        finally:
            fake.stop()

    return Case(name, "reply", run)


CASES: list[Case] = [
    *(_overflow(f) for f in ("openai", "vllm", "vllm_new", "llamacpp", "llamacpp_old",
                             "openrouter", "anthropic", "gemini")),
    _anthropic_overflow(),
    _ollama("window smaller than configured (Ollama)", show_works=True),
    _ollama("silent truncation (Ollama, /api/show broken)", show_works=False),
    _openai_case("summariser request overflows", "reply", _summary_overflow, plain=False,
                 limit=100_000, prefill=6, context_window=4096, compact_threshold=0.3),
    _openai_case("summariser fails (500 x3)", "reply",
                 _faults(*[("status", 500, {}, ERROR_500)] * 3), plain=False,
                 limit=100_000, prefill=6, context_window=4096, compact_threshold=0.3),
    _openai_case("429 with Retry-After", "reply",
                 _faults(("status", 429, {"Retry-After": "1"}, {"error": {
                     "message": "Rate limit reached", "type": "requests"}}))),
    _openai_case("429 without Retry-After", "reply",
                 _faults(("status", 429, {}, {"error": {"message": "Rate limit reached"}}))),
    _openai_case("500", "reply", _faults(("status", 500, {}, ERROR_500))),
    _openai_case("502 (HTML from a proxy)", "reply", _faults(
        ("status", 502, {"Content-Type": "text/html"},
         "<html><title>502 Bad Gateway</title></html>"))),
    _openai_case("503", "reply", _faults(("status", 503, {}, {"error": {
        "message": "Service Unavailable"}}))),
    _openai_case("connection refused", "error", _stop),
    _openai_case("read timeout", "reply", _faults(("delay", 2.0)), request_timeout=0.5),
    _openai_case("stream cut mid-reply", "error", _faults(("cut", 6))),
    _openai_case("error event mid-stream", "error", _faults(
        ("stream_error", 4, {"error": {"message": "upstream overloaded", "code": 503}}))),
    _openai_case("malformed SSE line", "reply", _faults(("malformed",))),
    _openai_case("malformed JSON body", "error", _faults(
        ("status", 200, {"Content-Type": "application/json"}, "{not json"))),
    _openai_case("empty reply", "reply", _faults(("empty",))),
    _openai_case("401 bad key", "error", _auth(401)),
    _openai_case("403 forbidden", "error", _auth(403)),
]


async def run_case(case: Case, tmp: Path, sleep: Callable[[float], Awaitable[object]]
                   = asyncio.sleep) -> Outcome:
    tmp.mkdir(parents=True, exist_ok=True)
    return await case.run(tmp, sleep)
