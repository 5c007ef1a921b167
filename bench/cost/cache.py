"""Issue 14: how much of each request a provider's prefix cache can serve.

A provider (OpenAI, Anthropic, vLLM, llama.cpp) caches the front of a request; when request N+1
begins with request N, only the new turn is read again. The same mixed turns (prose in English
and Chinese, code and JSON pastes, pastes larger than the window) go through three clients
against a strict fake server that logs every request whole, one after another in this run:

  append-only        the whole history every time; it stops at its first 400 (the floor while
                     it lasts: every request starts with the one before)
  last 20 messages   system + the last 20 messages (bench/cost/conversation.py's baseline)
  jarvis-tui engine  the real Engine, OpenAIProvider over loopback HTTP, a SQLite store
  engine + memory    the same with the user's memory (issue 29: eight entries in both languages)
                     at the front of every request; its reuse must stay within a point

Fresh tokens, reuse and breaks are computed here from the logged bodies
(bench/cost/cache_metrics.py), and (issue 26) the tokens evaluated anew, chat and summary requests
alike, over the new content: each turn's message as sent and its reply.

    python bench/cost/cache.py                     both scenarios below
    python bench/cost/cache.py --window 4096 --turns 40
    python bench/cost/cache.py --local             the real embedded model (minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.cost.cache_metrics import Stats, measure  # noqa: E402
from bench.shared import cache_clients  # noqa: E402
from bench.shared.cache_clients import MEMORY, Run, Turn, engine, plain, reply_fn, workload  # noqa: E402
from tests.fakeserver import FakeProvider, count_tokens  # noqa: E402

SCENARIOS = ((16384, 60), (4096, 40))
RESERVE = 512  # the reply's room (bench/cost/conversation.py's); the plain clients ask for as much
CLIENTS = ("append-only", "last 20 messages", "jarvis-tui engine", "engine + memory")
MEMORY_ON = "engine + memory"


async def run_client(name: str, window: int, work: list[Turn]) -> tuple[Run, Stats, list[int]]:
    with FakeProvider(limit=window) as fake, tempfile.TemporaryDirectory() as tmp:
        fake.reply_fn = reply_fn
        starts: list[int] = []

        def mark() -> None:
            starts.append(len(fake.requests))

        if name in ("jarvis-tui engine", MEMORY_ON):
            run = await engine(fake.base_url, work, mark, db=Path(tmp) / "s.db", model="fake",
                               context_window=window, response_reserve=RESERVE,
                               system_reserve=256, memory=MEMORY if name == MEMORY_ON else ())
        else:
            run = await plain(fake.base_url, work, mark, max_tokens=RESERVE, name=name,
                              keep_last=None if name == "append-only" else 20)
        requests = list(fake.requests)
    replies = [r.completion_tokens for r in requests if r.status == 200 and r.body.get("stream")]
    return run, measure(requests, starts, len(work)), replies


def mean_fresh(stats: Stats, turns: list[int]) -> float:
    return sum(stats.fresh[t] for t in turns) / len(turns) if turns else 0.0


LABELS = (("chat", "chat"), ("prefix", "summary at the chat prefix"),
          ("small prompt", "summary, small prompt"), ("chunk", "chunks"), ("merge", "merges"),
          ("repair", "repairs"), ("probe", "probes"))


def by_request(stats: Stats) -> str:
    """Where the evaluated tokens go, as multiples of the new content."""
    totals = stats.by_label()
    new = max(stats.new_turns, 1)
    return ", ".join(f"{name} {totals[label]:,} ({totals[label] / new:.2f})"
                     for label, name in LABELS if totals.get(label))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


async def scenario(window: int, turns: int) -> None:
    work = workload(turns, window)
    kinds = [t.kind for t in work]
    huge = [count_tokens(t.text) for t in work if t.kind == "huge"]
    results = {name: await run_client(name, window, work) for name in CLIENTS}
    replies = results["jarvis-tui engine"][2]
    print(f"window {window:,} tokens, {turns} turns: {kinds.count('prose')} prose (English and "
          f"Chinese), {kinds.count('code')} code and {kinds.count('json')} JSON pastes, "
          f"{len(huge)} larger than the window ({', '.join(f'{h:,}' for h in huge)} tokens); "
          f"replies {min(replies)}-{max(replies)} tokens (mean "
          f"{sum(replies) / len(replies):.0f}), max_tokens {RESERVE}")
    print(f"\n{'client':18} {'answered':>8} {'400s':>4} {'errors':>6} {'sum req':>7} "
          f"{'fresh/turn':>10} {'reuse':>6} {'vs chat':>7} {'breaks':>6} {'unexpl':>6} "
          f"{'sent tokens':>11} {'eval/new':>8}")
    for name, (run, st, _) in results.items():
        answered = sum(run.answered)
        print(f"{name:18} {f'{answered}/{turns}':>8} {st.refused:>4} {run.errors:>6} "
              f"{st.summaries:>7} {sum(st.fresh) / max(answered, 1):>10,.0f} "
              f"{st.pct(st.reuse_any):>5.1f}% {st.pct(st.reuse_chat):>6.1f}% "
              f"{len(st.broke):>6} {len(st.unexplained):>6} {st.sent:>11,} "
              f"{st.evaluated_per_new:>8.2f}")

    run, st, _ = results["jarvis-tui engine"]
    base_run, base, _ = results["append-only"]
    prose = kinds.count("prose")
    compactions = run.compactions or 0
    summary_share = 100.0 * st.summary_fresh / max(st.chat_fresh, 1)
    both = [t for t in range(len(base_run.answered)) if base_run.answered[t] and run.answered[t]]
    ratio = mean_fresh(st, both) / max(mean_fresh(base, both), 1)
    intact, expected = run.stored or (0, 0)
    print(f"\njarvis-tui: {compactions} compactions ({compactions / turns:.2f} per turn, "
          f"{compactions / max(prose, 1) * 4:.2f} per 4 prose turns) in {st.summaries} summary "
          f"requests; recall in {run.recalls} turns;\n  summary requests' fresh tokens "
          f"{st.summary_fresh:,} = {summary_share:.1f}%"
          f" of chat requests' {st.chat_fresh:,};\n    of them {st.small_prompt_fresh:,} "
          f"({100.0 * st.small_prompt_fresh / max(st.chat_fresh, 1):.1f}%) in "
          f"{st.small_prompt_requests} requests with the small summary prompt, not the chat "
          f"prefix;\n  over the {len(both)} turns both answered, "
          f"fresh/turn {mean_fresh(st, both):,.0f} vs append-only's {mean_fresh(base, both):,.0f}"
          f";\n  the new messages and replies alone are {st.pct(st.new_content):.1f}% of the chat "
          f"tokens: no client could reuse more than {100 - st.pct(st.new_content):.1f}% of them")
    print(f"  evaluated anew {sum(st.fresh):,} tokens = {st.evaluated_per_new:.2f}x the new "
          f"content ({st.new_turns:,}: each turn's message as sent and its reply); by request:"
          f"\n    {by_request(st)}")
    if compactions and not st.summaries:
        print("  WARNING: compactions but no summary request recognised (not unstreamed any more?)")
    targets = [(f"every turn answered, 0 errors, {expected} messages stored",
                f"{sum(run.answered)}/{turns}, {run.errors} errors, {intact} stored",
                all(run.answered) and len(run.answered) == turns and not run.errors
                and intact == expected)]
    if window >= 8192:
        targets += [("reuse (vs previous request) >= 85%", f"{st.pct(st.reuse_any):.1f}%",
                     st.pct(st.reuse_any) >= 85),
                    ("prefix breaks only at compactions", f"{len(st.unexplained)} others",
                     not st.unexplained),
                    ("fresh/turn <= 1.3x append-only's", f"{ratio:.2f}x", ratio <= 1.3),
                    ("evaluated anew / new content near 1.1", f"{st.evaluated_per_new:.2f}",
                     st.evaluated_per_new <= 1.2)]
    else:
        targets += [("summary fresh <= 25% of chat fresh", f"{summary_share:.1f}%",
                     summary_share <= 25),
                    ("compactions <= one per 4 prose turns",
                     f"{compactions} for {prose} prose turns", compactions * 4 <= prose),
                    ("evaluated anew / new content <= 1.5", f"{st.evaluated_per_new:.2f}",
                     st.evaluated_per_new <= 1.5)]
    targets.append(memory_target(results))
    print(f"\ntargets at {window:,}:")
    for what, figure, ok in targets:
        print(f"  {what:44} {figure:>28}  {verdict(ok)}")
    print()


def memory_target(results: dict[str, tuple[Run, Stats, list[int]]]) -> tuple[str, str, bool]:
    """What the memory costs: its tokens in each request, and the reuse it leaves."""
    without, with_memory = results["jarvis-tui engine"][1], results[MEMORY_ON][1]
    run = results[MEMORY_ON][0]
    tokens = sorted(set(run.memory_tokens))
    span = f"{tokens[0]}" if len(tokens) == 1 else f"{tokens[0]}-{tokens[-1]}"
    gap = without.pct(without.reuse_any) - with_memory.pct(with_memory.reuse_any)
    print(f"  memory: {len(MEMORY)} entries, {span} tokens"
          f" in every request; reuse {with_memory.pct(with_memory.reuse_any):.1f}% with "
          f"it, {without.pct(without.reuse_any):.1f}% without; {with_memory.summaries} summary "
          f"requests with it, {without.summaries} without; prefix breaks with no compaction "
          f"between: {len(with_memory.unexplained)} with, {len(without.unexplained)} without")
    return ("reuse with memory within 1 point of without", f"{gap:+.1f} points",
            gap <= 1.0 and len(with_memory.unexplained) <= len(without.unexplained))


LEGEND = """\
fresh = prompt tokens minus the longest common prefix with the request just before (a one-slot
cache; a refused request is not evaluated and leaves the slot as it was); reuse = sum of the chat
requests' common prefixes / their tokens, vs the request just before of any kind (vs chat: the
chat request before); breaks = turns whose request does not start with the whole chat request
before; unexpl = breaks with no summary request between; sum req = summary requests;
eval/new = fresh tokens of every request evaluated (chat and summary) / the new content: each
answered turn's user message as sent (a paste cut to fit as cut) plus its reply (1.0: a cache
that never reads anything twice)"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, help="one scenario: this context window")
    parser.add_argument("--turns", type=int, help="... with this many turns")
    parser.add_argument("--no-huge", action="store_true",
                        help="leave out the two pastes larger than the window (they are cut to "
                             "be sent, so they are fresh for every client)")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: 12 turns at 4,096 (--local: one at 1,024, "
                             "an 8-token reply)")
    parser.add_argument("--local", action="store_true",
                        help="the real embedded model instead (bench/local/cache_local.py)")
    args = parser.parse_args()
    if args.local:
        from bench.local.cache_local import run_local

        if args.quick:
            asyncio.run(run_local(turns=args.turns or 1, window=args.window or 1024,
                                  reply_tokens=8))
        else:
            asyncio.run(run_local(turns=args.turns or 16, window=args.window or 4096))
        return
    if args.no_huge:
        cache_clients.HUGE_AT = ()
    chosen = ((4096, 12),) if args.quick else SCENARIOS
    if args.window or args.turns:
        defaults = dict(SCENARIOS)
        window = args.window or 16384
        chosen = ((window, args.turns or defaults.get(window, 40)),)
    for window, turns in chosen:
        asyncio.run(scenario(window, turns))
    print(LEGEND)


if __name__ == "__main__":
    main()
