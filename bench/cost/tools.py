"""Issue 17: tools over MCP, the seed's case (one call returned a whole file and twenty messages
overflowed the window). 30 turns where the model reads the log, commits and diffs of a
repository through the real mcp-server-git (outputs of 70 to ~19k tokens; turns without tools
and turns with two calls mixed in), against a strict fake server whose limit is the window,
through three clients one after another in this run, on the same turns and the same hub:

  jarvis-tui         the real Engine (OpenAIProvider over loopback, a SQLite store), the hub as
                     its tool box, every git tool allowed, default settings but the window
  last 20 messages   system + the last 20 messages (calls and results count as messages, so a
                     cut can split a pair: the strict server then refuses it)
  append everything  the whole history every time

The plain clients run the same tool loop, one attempt per request, no retries, no compaction:
a refused request ends its turn, and the next turn goes on from the history as it stands.

    python bench/cost/tools.py            30 turns at 4,096 and 16,384 tokens
    python bench/cost/tools.py --quick    10 turns at 4,096
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.shared.tools_clients import (  # noqa: E402
    COMMITS,
    Recorder,
    Run,
    engine,
    plain,
    reply_fn,
    split_pair,
    workload,
)
from jarvis_tui.core.providers.toolcalls import openai_tools  # noqa: E402
from jarvis_tui.core.settings.mcp import McpServerConfig  # noqa: E402
from jarvis_tui.core.tools.mcp_client import McpHub  # noqa: E402
from jarvis_tui.core.tools.outputs import CUT_MARKER  # noqa: E402
from jarvis_tui.core.tools.results import tool_definitions  # noqa: E402
from tests.fake_tools import openai_problem  # noqa: E402
from tests.fakeserver import FakeProvider, count_tokens  # noqa: E402
from tests.mcp_servers import make_git_repo  # noqa: E402

CLIENTS = ("jarvis-tui", "last 20 messages", "append everything")
MAX_TOKENS = 1024  # the engine's default response_reserve; the plain clients ask for as much
CUT_MARK = CUT_MARKER.split("{n}")[1][:40]


def p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else 0


async def run_client(name: str, window: int, work: list, hub: McpHub) -> dict:
    box = Recorder(hub)
    with FakeProvider(limit=window) as fake, tempfile.TemporaryDirectory() as tmp:
        fake.reply_fn = reply_fn
        starts: list[int] = []

        def mark() -> None:
            starts.append(len(fake.requests))

        if name == "jarvis-tui":
            run = await engine(fake.base_url, work, box, mark, db=Path(tmp) / "s.db",
                               window=window)
        else:
            run = await plain(fake.base_url, work, box, mark, max_tokens=MAX_TOKENS, name=name,
                              keep_last=20 if name == "last 20 messages" else None)
        requests = list(fake.chat_requests)
    # Per turn, from the fake's own reports: a refused request was not evaluated (0 fresh).
    bounds = [*starts, len(requests)]
    fresh = [sum(r.prompt_tokens - (r.cached_tokens or 0)
                 for r in requests[a:b] if r.status == 200)
             for a, b in zip(bounds, bounds[1:], strict=False)]
    answered_fresh = [f for f, ok in zip(fresh, run.answered, strict=False) if ok]
    cut = {m.get("tool_call_id") for r in requests for m in r.body.get("messages", [])
           if m.get("role") == "tool" and CUT_MARK in (m.get("content") or "")}
    return {
        "run": run,
        "requests": len(requests),
        "overflow": sum(r.overflowed for r in requests),
        "split400": sum(r.status == 400 and problem(r.body) == "split" for r in requests),
        "other400": sum(r.status == 400 and problem(r.body) == "other" for r in requests),
        "split": sum(split_pair(r.body.get("messages", [])) for r in requests),
        "sent": sum(r.prompt_tokens for r in requests),
        "fresh_mean": sum(answered_fresh) / len(answered_fresh) if answered_fresh else 0.0,
        "fresh_p95": p95(answered_fresh),
        "fresh": fresh,
        "cut": len(cut),
        "outputs": [count_tokens(r.text) for _, r in box.outputs],
        # The engine's summary requests are its only unstreamed ones (provider.complete).
        "summaries": [r for r in requests if r.status == 200 and not r.body.get("stream")],
    }


def problem(body: dict) -> str | None:
    """Why the strict fake refused a body on its form: "split" (a call and its results apart,
    OpenAI's two messages for it), "other", or None (it was not refused on its form)."""
    refused = openai_problem(body)
    if refused is None:
        return None
    text = refused["error"]["message"]
    return "split" if "tool_call" in text or "role 'tool'" in text else "other"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


async def scenario(window: int, work: list, hub: McpHub) -> dict:
    results = {name: await run_client(name, window, work, hub) for name in CLIENTS}
    sizes = results["jarvis-tui"]["outputs"]
    tool_turns = sum(bool(t.calls) for t in work)
    two = sum(len(t.calls) == 2 for t in work)
    defs = count_tokens(json.dumps(openai_tools(tool_definitions(hub.specs())),
                                   ensure_ascii=False))
    print(f"window {window:,} tokens, {len(work)} turns: {len(work) - tool_turns} without tools, "
          f"{tool_turns - two} with one call, {two} with two; {len(sizes)} tool outputs of "
          f"{min(sizes):,}-{max(sizes):,} tokens (sum {sum(sizes):,}); the "
          f"{len(hub.specs())} git tools' definitions: {defs:,} tokens in every request; "
          f"max_tokens {MAX_TOKENS}")
    print(f"\n{'client':18} {'answered':>8} {'failed':>6} {'400 overflow':>12} "
          f"{'400 split':>9} {'other':>5} {'split reqs':>10} {'requests':>8} "
          f"{'sent tokens':>11} {'fresh/turn':>10} {'p95':>6}")
    for name, r in results.items():
        run: Run = r["run"]
        n = sum(run.answered)
        print(f"{name:18} {f'{n}/{len(work)}':>8} {len(work) - n:>6} {r['overflow']:>12} "
              f"{r['split400']:>9} {r['other400']:>5} {r['split']:>10} {r['requests']:>8} "
              f"{r['sent']:>11,} {r['fresh_mean']:>10,.0f} {r['fresh_p95']:>6,}")
    both = [t for t in range(len(work)) if all(r["run"].answered[t] for r in results.values())]
    if both:
        means = ", ".join(f"{name} {sum(r['fresh'][t] for t in both) / len(both):,.0f}"
                          for name, r in results.items())
        print(f"fresh/turn over the turns every client answered ({len(both)}): {means}")
    r = results["jarvis-tui"]
    run = r["run"]
    whole, outputs = run.export_whole or (0, 0)
    print(f"\njarvis-tui: {run.compactions} compactions, {run.stub_events} stubbing events "
          f"({run.stubbed} outputs stubbed), {r['cut']} outputs sent head and tail, recall in "
          f"{run.recalls} turns; {run.tool_errors} tool errors;\n  {len(r['summaries'])} summary "
          f"requests of {sum(q.prompt_tokens for q in r['summaries']):,} prompt tokens, "
          f"{sum(q.cached_tokens or 0 for q in r['summaries']):,} of them from the cache")
    targets = [
        ("every turn answered", f"{sum(run.answered)}/{len(work)}", all(run.answered)),
        ("0 errors shown", f"{run.errors}", run.errors == 0),
        ("no request with a call/result pair split", f"{r['split']}",
         r["split"] == 0 and r["split400"] == 0),
        ("nothing lost in the export", f"{whole}/{outputs} outputs whole",
         outputs > 0 and whole == outputs),
    ]
    print(f"targets at {window:,}:")
    for what, figure, ok in targets:
        print(f"  {what:42} {figure:>24}  {verdict(ok)}")
    print()
    return results


LEGEND = """\
failed = turns whose final reply never came; 400 overflow / 400 split = refusals for the context
length / for a call and its results apart (OpenAI's bodies); other = any other 400; split reqs
= requests whose messages hold a call without all its results after it or a result without its
call (checked on every request body the fake logged); sent tokens = prompt tokens of every
request, refused ones too; fresh/turn = prompt tokens the fake did not read from its prefix
cache, per answered turn (all its requests, the engine's summary requests included), mean and
p95"""


async def main_async(windows: tuple[int, ...], turns: int) -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_git_repo(Path(tmp) / "repo", commits=COMMITS)
        git = McpServerConfig("git", "stdio", command=sys.executable, allow=("*",),
                              args=("-m", "mcp_server_git", "--repository", str(repo)))
        async with McpHub([git], start_timeout=120.0) as hub:
            (status,) = await hub.start()
            if status.state != "ready":
                sys.exit(f"mcp-server-git did not start: {status.error}")
            work = workload(turns, repo)
            for window in windows:
                await scenario(window, work, hub)
    print(LEGEND)
    print(f"\nwall time {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 turns at 4,096 tokens")
    parser.add_argument("--turns", type=int, help="turns per window (default 30)")
    parser.add_argument("--window", type=int, action="append", help="a window (repeatable)")
    args = parser.parse_args()
    windows = tuple(args.window or ((4096,) if args.quick else (4096, 16384)))
    asyncio.run(main_async(windows, args.turns or (10 if args.quick else 30)))


if __name__ == "__main__":
    main()
