"""Compaction loops, provoked: scenarios built to make automatic compaction run again and again
at a 4,096-token window, and how often it did.

Each scenario is a fresh session of 24 turns against the fake OpenAI-compatible server
(tests/fakeserver.py, a strict server: over-long requests get its real 400), with the default
reserves, so the budget is 4096 - 1024 - 512 = 2,560 tokens and the threshold 70% of it, 1,792.
1. The newest turn alone is larger than the threshold: 8 user messages of 1,900 to 9,000
   tokens (the larger ones fit only cut) among ordinary and short turns, each big one right
   after a short one, so its compaction can fold little more than the short turn (frees
   little); the summariser keeps the gist.
2. The summariser answers with more than its input (four copies), on scenario 1's turns: once
   from a server that stops it at max_tokens, once from one that ignores max_tokens (the
   engine's own bound then).
3. The summariser fails every time: an empty summary and a 500 (retried, then given up), on
   scenario 1's turns; a 400 "maximum context length" naming a window just below each summary
   request, on ordinary turns (the summariser's shrink-and-retry then goes its full length).
4. The summariser returns the same text, longer than its cap, every time (scenario 1's turns).
5. The server's window is smaller than the one configured (3,072): chat requests are refused as
   too long, where a second compaction in a turn is allowed (scenario 1's turns).

Per scenario: turns answered (ended without ev.Failed), failures shown, summary requests,
compactions by outcome, the guard's holds, and the loops: turns in which more than one
automatic compaction started while the server refused no chat request as too long, or which
sent more than 4 summary requests while it refused none of them either (a turn over that bound
whose summary requests were refused as too long is shown apart). Beside it, what the guard
prevented: its methods are wrapped here, on the engine's instance, to count each block.

Run from the repository root: python bench/fidelity/fidelity_loops.py
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.engine_helpers import is_summary_request, summary_material  # noqa: E402
from tests.fakeserver import (  # noqa: E402
    FakeProvider,
    RecordedRequest,
    _Handler,
    count_prompt,
    count_tokens,
    overflow_answer,
)

WINDOW = 4096
TURNS = 24  # len(PATTERN)
TURN_TIMEOUT_S = 60.0  # a turn still running after this is reported as a hang
REQUEST_BOUND = 4  # summary requests in one turn beyond which, with no refusal, it is a loop
SYSTEM = "You are Jarvis, a helpful assistant."
# O ordinary, B bigger than the threshold, S short. A big message right after the short turn
# that followed a compaction: that compaction can fold only the short turn, so it frees little.
PATTERN = "OOO" + "BSBSOO" * 3 + "BSB"
BIG = (1900, 2300, 2500, 3200, 6000, 2000, 9000, 2200)  # tokens, in turn order
# Longer than the summary cap (512): every summary is the same text, cut to the same length.
SAME = "".join(f"- The user is planning release {i} and wants the gauge described.\n"
               for i in range(50))


def sized(unit: str, tokens: int) -> str:
    """`unit` repeated to about `tokens` tokens (the server's count)."""
    return unit * max(1, tokens // count_tokens(unit))


def ordinary(i: int) -> str:
    # ~150 tokens and a ~60-token reply: the threshold is crossed every eight turns or so.
    return sized(f"Turn {i}: we talk about the release plan, the build on Linux and macOS, and "
                 "what the changelog should say about the token gauge. ", 180)


def turns(oversize: bool) -> list[str]:
    if not oversize:
        return [ordinary(i) for i in range(TURNS)]
    big = iter(BIG)
    return [sized(f"Log line {i}: the worker handled the queued request and wrote the result "
                  "to the shared cache in 41 ms.\n", next(big)) if kind == "B"
            else "Thanks, noted. Go on." if kind == "S" else ordinary(i)
            for i, kind in enumerate(PATTERN)]


class SummaryFault(_Handler):
    """Answers every summary request with `status` (0: normally); chat requests as usual."""

    status = 0

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if self.status and isinstance(body, dict) and is_summary_request(body):
            prompt = count_prompt(body["messages"])
            # 400: the server's own context-length body, naming a window just below the request.
            answer = (overflow_answer("openai", prompt - 1, prompt, 0)[1] if self.status == 400
                      else {"error": {"message": "internal error", "type": "server_error"}})
            self.fake._record(RecordedRequest(self.path, dict(self.headers), body, prompt,
                                              overflowed=self.status == 400,
                                              status=self.status))
            self._send(self.status, answer)
            return
        self.rfile = io.BytesIO(raw)  # the stock handler reads the body again
        super().do_POST()


@dataclass
class Scenario:
    name: str
    how: str
    summarise: Callable[[dict], str]  # a summary request's body -> the summary
    oversize: bool = False
    status: int = 0  # what summary requests are answered with (SummaryFault)
    ignore_max_tokens: bool = False
    server_limit: int = WINDOW  # the window the server really has


def gist(body: dict) -> str:
    return "Summary: " + " ".join(summary_material(body).split()[:60])


SCENARIOS = [
    Scenario("1 oversize newest", f"turns {PATTERN} (O ordinary, S short, B big: "
             + ", ".join(map(str, BIG)) + " tokens; threshold 1792, budget 2560); gist summaries",
             gist, oversize=True),
    Scenario("2a summary > input", "summary = its input 4x, stopped by the server at max_tokens",
             lambda b: summary_material(b) * 4, oversize=True),
    Scenario("2b summary > input", "summary = its input 4x, the server ignoring max_tokens",
             lambda b: summary_material(b) * 4, oversize=True, ignore_max_tokens=True),
    Scenario("3a summary empty", "every summary request answered with an empty reply",
             lambda b: "", oversize=True),
    # Ordinary turns: each refusal names a window only a little smaller, so the summariser's
    # shrink-and-retry runs longest (with big turns it gives up sooner).
    Scenario("3b summary 400", "every summary request refused as too long (openai body), "
             "naming a window just below it; ordinary turns", gist, status=400),
    Scenario("3c summary 500", "every summary request answered 500 (retried, then given up)",
             gist, oversize=True, status=500),
    Scenario("4 same summary", f"the same {count_tokens(SAME)}-token text for every summary",
             lambda b: SAME, oversize=True),
    Scenario("5 smaller server", "the server's window is 3072, not the 4096 configured",
             gist, oversize=True, server_limit=3072),
]


@dataclass
class Result:
    answered: int = 0
    failures: int = 0
    hangs: int = 0
    summary_requests: int = 0
    summary_refused: int = 0
    chat_refused: int = 0
    events: Counter = field(default_factory=Counter)
    blocked: Counter = field(default_factory=Counter)
    max_summary_turn: int = 0
    max_auto_unrefused: int = 0
    multi_compaction_loops: int = 0
    request_loops: int = 0
    bound_exceeded_refused: int = 0  # turns over REQUEST_BOUND whose requests were refused
    seconds: float = 0.0


def count_blocks(engine: Engine, blocked: Counter) -> None:
    """Wrap the engine's guard (its instance only) so each block it returns is counted."""
    guard = engine.guard
    allows, starting, finished, failed = (guard.allows, guard.starting, guard.finished,
                                          guard.failed)

    def allows_(reason: str) -> bool:
        ok = allows(reason)
        if not ok:
            blocked[f"allows({reason}) refused"] += 1
        return ok

    def held(name: str, notice: ev.CompactionHeld | None) -> ev.CompactionHeld | None:
        if notice is not None:
            blocked[f"{name} held: {notice.why}"] += 1
        return notice

    guard.allows = allows_  # type: ignore[method-assign]
    guard.starting = lambda r, e: held("starting", starting(r, e))  # type: ignore[method-assign]
    guard.finished = (  # type: ignore[method-assign]
        lambda r, e, f, b: held("finished", finished(r, e, f, b)))
    guard.failed = lambda: held("failed", failed())  # type: ignore[method-assign]


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)  # back-off waits are counted by the engine, not slept


async def run(sc: Scenario, tmp: Path) -> Result:
    out = Result()
    fake = FakeProvider(limit=sc.server_limit)
    fake.handler = type("Handler", (SummaryFault,), {"status": sc.status})
    fake.ignore_max_tokens = sc.ignore_max_tokens
    fake.reply_fn = lambda body: (sc.summarise(body) if is_summary_request(body)
                                  else fake.default_reply(body) + " A considered answer." * 12)
    started = time.perf_counter()
    with fake, Store(tmp / f"{sc.name}.db") as store:
        settings = Settings(base_url=fake.base_url, model="fake", system_prompt=SYSTEM,
                            context_window=WINDOW)
        async with OpenAIProvider(fake.base_url) as provider:
            engine = Engine(settings, store, provider, sleep=_no_wait)
            count_blocks(engine, out.blocked)
            for text in turns(sc.oversize):
                first = len(fake.chat_requests)
                seen: list[ev.Event] = []

                async def turn(text: str = text, seen: list[ev.Event] = seen) -> None:
                    async for event in engine.stream_reply(text):
                        seen.append(event)

                try:  # bounds waiting on the server; CPU work in the loop runs to its end
                    await asyncio.wait_for(turn(), TURN_TIMEOUT_S)
                except TimeoutError:
                    out.hangs += 1
                tally(out, seen, fake.chat_requests[first:])
    out.seconds = time.perf_counter() - started
    return out


def tally(out: Result, seen: list[ev.Event], requests: list[RecordedRequest]) -> None:
    failed = sum(isinstance(e, ev.Failed) for e in seen)
    out.failures += failed
    out.answered += not failed and any(isinstance(e, ev.Finished) for e in seen)
    for e in seen:
        key = type(e).__name__
        if isinstance(e, ev.CompactionHeld):
            key += f" ({e.why})"
        elif isinstance(e, ev.CompactionStarted | ev.CompactionFinished | ev.CompactionFailed):
            key += f" ({e.reason})"
        out.events[key] += 1
    summaries = [r for r in requests if is_summary_request(r.body)]
    out.summary_requests += len(summaries)
    out.summary_refused += sum(r.overflowed for r in summaries)
    chat_refused = sum(r.overflowed for r in requests if not is_summary_request(r.body))
    out.chat_refused += chat_refused
    refused = chat_refused or any(r.overflowed for r in summaries)
    auto = sum(isinstance(e, ev.CompactionStarted) and e.reason != "manual" for e in seen)
    out.max_summary_turn = max(out.max_summary_turn, len(summaries))
    if not chat_refused:  # an automatic compaction again is allowed after a chat refusal
        out.max_auto_unrefused = max(out.max_auto_unrefused, auto)
        out.multi_compaction_loops += auto > 1
    if len(summaries) > REQUEST_BOUND:
        if refused:
            out.bound_exceeded_refused += 1
        else:
            out.request_loops += 1


def report(sc: Scenario, r: Result) -> None:
    def by(kind: str) -> str:  # "threshold 3, overflow 1" from keys like "Kind (why)"
        return ", ".join(f"{k.split(' ', 1)[1][1:-1]} {v}" for k, v in sorted(r.events.items())
                         if k.startswith(kind + " ")) or "0"

    loops = r.multi_compaction_loops + r.request_loops
    print(f"\n{sc.name}: {sc.how}" + ("" if sc.name.startswith("1") or not sc.oversize
                                     else "; scenario 1's turns"))
    print(f"  turns {TURNS}, answered {r.answered}, failures shown {r.failures}, "
          f"hangs {r.hangs}, {r.seconds:.2f} s")
    print(f"  summary requests {r.summary_requests} (refused as too long {r.summary_refused}; "
          f"max {r.max_summary_turn} in one turn), chat requests refused as too long "
          f"{r.chat_refused}")
    print(f"  compactions started: {by('CompactionStarted')}; finished: "
          f"{by('CompactionFinished')}; failed: {by('CompactionFailed')}; "
          f"held: {by('CompactionHeld')}")
    print(f"  max automatic compactions started in a turn with no chat refusal: "
          f"{r.max_auto_unrefused}")
    print(f"  loops: {loops} (turns with >1 automatic compaction and no chat refusal "
          f"{r.multi_compaction_loops}; with >{REQUEST_BOUND} summary requests and no refusal "
          f"{r.request_loops}; with >{REQUEST_BOUND} summary requests, refused as too long "
          f"{r.bound_exceeded_refused})")
    blocks = ", ".join(f"{k} {v}" for k, v in sorted(r.blocked.items())) or "none"
    print(f"  guard prevented: {blocks}")


async def main() -> None:
    s = Settings(base_url="http://x", model="fake", context_window=WINDOW)
    budget = WINDOW - s.response_reserve - s.system_reserve
    print(f"window {WINDOW}, response reserve {s.response_reserve}, system reserve "
          f"{s.system_reserve}: budget {budget}, threshold {int(budget * s.compact_threshold)} "
          f"({s.compact_threshold:.0%}), summary cap {min(s.summary_max_tokens, budget // 3)}, "
          f"ordinary turn ~{count_tokens(ordinary(0))} tokens + reply; {TURNS} turns each, "
          f"{TURN_TIMEOUT_S:g} s a turn at most")
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        # --quick: the first scenario alone, to see it runs
        for sc in SCENARIOS[:1] if "--quick" in sys.argv[1:] else SCENARIOS:
            r = await run(sc, Path(tmp))
            report(sc, r)
            total += r.multi_compaction_loops + r.request_loops + r.hangs
    print(f"\nloops and hangs over all scenarios: {total}")


if __name__ == "__main__":
    asyncio.run(main())
