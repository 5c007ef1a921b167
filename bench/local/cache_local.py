"""bench/cost/cache.py --local: the real bundled model, llama-cpp-python's server with the GGUF the
`local` extra installs (jarvis_tui/core/providers/local_server.py), jarvis-tui's engine beside the
append-only client, each against a freshly started server kept running for all its turns.

What the server evaluated comes from its own log. Its `verbose` setting is on by default and
local_server's command leaves it so; then each completion prints llama.cpp's
"prompt eval time = ... ms / M tokens" (M: prompt tokens it evaluated, what its one-slot cache
did not hold), and, when a prefix matched, "Llama.generate: N prefix-match hit, remaining M
prompt tokens to eval". The log is cut by turn at its size before each turn.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.shared.cache_clients import Run, engine, plain, workload
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)

REPLY_TOKENS = 96  # max_tokens / response_reserve: 2 cores write ~20 tokens a second
EVALUATED = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")


@dataclass
class TurnLog:
    evaluated: int  # prompt tokens the server evaluated in this turn, every completion
    reused: int  # prompt tokens its cache served (prefix-match hits)
    completions: int
    seconds: float


async def _serve(name: str, window: int, turns: int, tmp: Path,
                 reply_tokens: int) -> tuple[Run, list[TurnLog]]:
    port = free_port()
    log = tmp / f"{name.split()[0]}.log"
    server = LocalServer(llama_cpp_command(local_model_path(), window, "127.0.0.1", port),
                         port=port, log_path=log)
    await server.start()
    marks: list[tuple[int, float]] = []

    def mark() -> None:
        marks.append((log.stat().st_size, time.perf_counter()))

    work = workload(turns, window)
    try:
        if name == "jarvis-tui engine":
            # The reserves `jarvis-tui --local` would take for this window, reply capped.
            run = await engine(server.base_url, work, mark, db=tmp / "s.db",
                               model=LOCAL_MODEL_NAME, context_window=window,
                               response_reserve=reply_tokens, system_reserve=window // 16)
        else:
            run = await plain(server.base_url, work, mark, keep_last=None,
                              max_tokens=reply_tokens, name=name, model=LOCAL_MODEL_NAME)
        mark()
    finally:
        server.stop()
    text = log.read_bytes()
    turn_logs = []
    for (start, began), (end, ended) in zip(marks, marks[1:], strict=False):
        part = text[start:end].decode("utf-8", errors="replace")
        counts = [int(n) for n in EVALUATED.findall(part)]
        turn_logs.append(TurnLog(sum(counts), sum(int(n) for n in PREFIX_HIT.findall(part)),
                                 len(counts), ended - began))
    return run, turn_logs


async def run_local(turns: int, window: int, reply_tokens: int = REPLY_TOKENS) -> None:
    print(f"the bundled model (llama-cpp-python server, {LOCAL_MODEL_NAME}), context {window:,}, "
          f"{turns} turns, replies capped at {reply_tokens} tokens; a fresh server per client")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("jarvis-tui engine", "append-only"):
            results[name] = await _serve(name, window, turns, Path(tmp), reply_tokens)
    print(f"\n{'turn':>4} | {'jarvis eval':>11} {'reused':>6} {'calls':>5} {'s':>6} | "
          f"{'append eval':>11} {'reused':>6} {'s':>6}")
    (run, logs), (base_run, base_logs) = results["jarvis-tui engine"], results["append-only"]
    for t, ours in enumerate(logs):
        theirs = base_logs[t] if t < len(base_logs) else None
        other = (f"{theirs.evaluated:>11,} {theirs.reused:>6,} {theirs.seconds:>6.1f}"
                 + ("" if base_run.answered[t] else "  refused")) if theirs else f"{'-':>11}"
        print(f"{t + 1:>4} | {ours.evaluated:>11,} {ours.reused:>6,} {ours.completions:>5} "
              f"{ours.seconds:>6.1f} | {other}")
    both = [t for t in range(len(base_run.answered)) if base_run.answered[t] and run.answered[t]]
    ours_eval = sum(logs[t].evaluated for t in both)
    theirs_eval = sum(base_logs[t].evaluated for t in both)
    ratio = ours_eval / max(theirs_eval, 1)
    for name, (r, tl) in results.items():
        print(f"{name:18} answered {sum(r.answered)}/{turns}, errors {r.errors}, evaluated "
              f"{sum(x.evaluated for x in tl):,} tokens, reused {sum(x.reused for x in tl):,}, "
              f"{sum(x.seconds for x in tl):.0f} s"
              + (f", {r.compactions} compactions" if r.compactions is not None else ""))
    print(f"over turns both answered ({len(both)}): jarvis evaluated {ours_eval:,}, append-only "
          f"{theirs_eval:,}: {ratio:.2f}x")
    if not any(x.completions for x in logs + base_logs):
        print("WARNING: the server logged no prompt eval lines (verbose off?): no figures")
    answered = all(run.answered) and len(run.answered) == turns and not run.errors
    print(f"\ntargets: jarvis <= 1.5x append-only evaluated tokens {ratio:>6.2f}x  "
          f"{'PASS' if ratio <= 1.5 else 'FAIL'}")
    print(f"         every turn answered                          {sum(run.answered)}/{turns}  "
          f"{'PASS' if answered else 'FAIL'}")
