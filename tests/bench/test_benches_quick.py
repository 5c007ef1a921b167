"""Every bench in its quick mode, as a real process from the repository root: a bench whose code
drifted from what it measures (bench/ui/ui.py's stand-in once did) fails here, not on the next
person who runs it. Each checks the bench's headline figures are printed, label and number,
not only that it exited 0. The figures themselves are not asserted: quick runs are too small to
mean anything, and the benches' timings move with the machine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = "tests/data/locomo"  # made-up conversations in LoCoMo's layout (never the dataset)
N = r"[\d,.]+"  # a figure as the benches print them


@dataclass(frozen=True)
class Bench:
    argv: tuple[str, ...]  # the script and its flags
    expect: tuple[str, ...]  # patterns (multiline) each of which must be found in the output

    @property
    def name(self) -> str:
        return " ".join(self.argv).removeprefix("bench/")


def bench(*argv: str, expect: tuple[str, ...]) -> Bench:
    return Bench(argv, expect)


BENCHES = [
    bench("bench/cost/window.py", "--quick",
          expect=(rf"^\s+1000\s+8192\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}$",)),
    bench("bench/cost/store.py", "--quick",
          expect=(rf"^jarvis-tui \(WAL.*\)\s+{N}ms\s+{N}ms\s+{N}ms$",
                  rf"^baseline \(rollback journal, FULL\)\s+{N}ms")),
    bench("bench/cost/branches.py", "--quick",
          expect=(rf"^\s+100\s+line\s+{N}\s+{N}\s+{N}", rf"^\s+100\s+branchy\s+{N}\s+{N}\s+{N}")),
    bench("bench/cost/conversation.py", "--quick",
          expect=(rf"^jarvis-tui engine\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}",
                  rf"^last 20 messages\s+{N}\s+{N}", rf"^token budget\s+{N}\s+{N}")),
    bench("bench/cost/cache.py", "--quick",
          expect=(rf"^jarvis-tui engine\s+{N}", rf"^append-only\s+{N}")),
    bench("bench/cost/tokens.py", "--quick",
          expect=(rf"^all\s+{N}\s+{N}\s+{N}$",
                  rf"^ours \(count cached on message\)\s+{N}\s+{N}\s+{N}%$")),
    bench("bench/cost/tools.py", "--quick", expect=(rf"^jarvis-tui\s+{N}/10\s+{N}",
                                                    rf"^last 20 messages\s+{N}/10\s+{N}")),
    bench("bench/cost/memory_import.py", "--quick",
          expect=(rf"^jarvis-tui memory import \(all\)\s+10,000\s+{N}s\s+{N}ms\s+{N}ms$",)),
    bench("bench/fidelity/fidelity.py", "--quick",
          expect=(rf"^jarvis-tui: {N} turns, {N} failed, {N} summary requests",
                  rf"after 1: summary {N}, ledger {N}, recall {N}")),
    bench("bench/fidelity/fidelity_loops.py", "--quick",
          expect=(rf"loops and hangs over all scenarios: {N}$",)),
    # The ledger-room sweep of bench/README.md ("After issue 26") is this flag, not a code edit
    bench("bench/fidelity/fidelity_work.py", "--quick", "--ledger-room", "384",
          expect=(rf"jarvis-tui / tuning: ledger per request mean {N}, max {N} of budget 384\b",
                  rf"jarvis-tui / tuning: summary {N}, ledger {N}, recall {N}")),
    bench("bench/fidelity/repair.py", "--quick",
          expect=(rf"^\s+summary requests\s+{N}$", rf"^\s+of them repairs\s+{N}$")),
    bench("bench/recall/recall.py", "--quick",
          expect=(rf"^jarvis-tui recall@3\s+{N}\s+{N}\s+{N}\s+{N}$",
                  rf"^search latency: p50 {N} ms, p95 {N} ms")),
    bench("bench/recall/cross_session.py", "--quick",
          expect=(rf"^all ordinary messages\s+{N}/{N}\s+{N}%$",)),
    bench("bench/recall/locomo.py", LOCOMO, "--quick",
          expect=(rf"^conv-1: {N} sessions, {N} turns, {N} questions",)),
    bench("bench/recall/locomo_ranks.py", LOCOMO, "--quick",
          expect=(rf"^conv-1: {N} questions, {N} tokens$",)),
    bench("bench/faults/faults.py", "--quick",
          expect=(rf"^jarvis-tui: {N}/{N} survived, {N} messages lost$",
                  rf"^hostile faults: {N}/{N} survived, {N} replies or messages lost")),
    bench("bench/faults/huge_reply.py", "--quick",
          expect=(rf"^load\s+ours \(cut\)\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}$",
                  rf"^\s+2\s+{N}\s+{N}$")),
    bench("bench/ui/ui.py", "--quick", "--imports",
          expect=(rf"^jarvis-tui, new session\s+{N}\s+{N}",
                  rf"^jarvis-tui, first frame\s+{N}\s+{N}\s+{N}",
                  rf"^Imports of the start .*: {N} modules, {N} s$",
                  rf"^jarvis-tui\s+100\s+{N}")),
    bench("bench/attach/attach.py", "--quick",
          expect=(rf"^OpenAI\s+Chinese prose\s+{N}\s+{N}\s+[-+]{N}%\s+{N}\s+[-+]{N}%"
                  rf"\s+{N}\s+[-+]{N}%$", rf"^OpenAI\s+JSON tool output\s+{N}",
                  rf"^Anthropic\s+code\s+{N}\s+{N}\s+[-+]{N}%",
                  rf"^Ollama\s+photo 4000x3000\s+{N}\s+{N}\s+[-+]{N}%",
                  rf"^first list, walking in a thread \(ours\)\s+{N}\s+{N}$",
                  rf"^a keystroke, filtering every path \(baseline\)\s+{N}\s+{N}$",
                  rf"^attached \(digest \+ read_attachment\)\s+{N}\s+0\s+{N}\s+0\s+{N}\s+{N}"
                  rf"\s+{N}$", rf"^pasted whole \(baseline\)\s+{N}\s+{N}\s+{N}\s+{N}")),
    bench("bench/dev/layout.py", "--quick",
          expect=(r"^bench/: \d+ files", r"^  bench/fidelity\s+\d+$",
                  r"^bench/'s import circles: 0$")),
    bench("bench/dev/settings_library.py", "--quick",
          expect=(r"^settings in the schema: \d+ .*with an environment variable: \d+$",
                  rf"^import, fresh interpreter .*: the settings {N} ms; pydantic-settings on top "
                  rf"{N} ms", rf"^load \d+ variables \(median\): schema {N} ms, "
                  rf"pydantic-settings {N} ms$", r"^  schema \(1 line\): environment variable")),
    bench("bench/dev/test_loop.py", "--quick",
          expect=(rf"^the developers' loop, no workers:\s+{N} s",
                  rf"^baseline, every test but e2e, no workers:\s+{N} s")),
]

# The bundled model's benches: one question, a few tokens each (tests/bench/conftest.py).
LOCAL = [
    bench("bench/local/local_answers.py", "--quick",
          expect=(rf": {N}/1 right, {N} s a question$", rf"^\| .+ \| {N}/1 \({N}%\) \|")),
    bench("bench/local/local_speed.py", "--quick",
          expect=(rf"^\| .+ \| {N} \| {N} \| {N} \| {N} \| - \|",)),
    bench("bench/local/summary_local.py", "--quick",
          expect=(rf"^small\s+en\s+{N}%\s+{N}%\s+{N}/1\s+{N}/1",)),
    bench("bench/local/search_tool_local.py", "--quick",
          expect=(rf"^search_history on\s+(yes|no)\s+{N}/1\s+{N}\s+{N}\s+{N}/1",)),
    bench("bench/local/tools_local.py", "--quick",
          expect=(rf"^with the sentence\s+{N}/1 ", rf"wall time {N} s")),
    bench("bench/cost/cache.py", "--local", "--quick",
          expect=(rf"^jarvis-tui engine\s+answered {N}/1", r"^over turns both answered")),
    bench("bench/fidelity/fidelity.py", "--demo", "--quick",
          expect=(rf"summarising: {N} turns, {N} failed, {N} summary requests",)),
]


def run(b: Bench, timeout: float) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JARVIS_", "ANTHROPIC_", "OLLAMA_"))}
    done = subprocess.run([sys.executable, *b.argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{b.name} exited {done.returncode}:\n{out[-3000:]}"
    missing = [p for p in b.expect if not re.search(p, out, re.M)]
    assert not missing, f"{b.name} printed no {missing}:\n{out[-3000:]}"
    return out


@pytest.mark.parametrize("b", BENCHES, ids=lambda b: b.name)
def test_bench_quick(b: Bench) -> None:
    run(b, timeout=240)


@pytest.mark.e2e
@pytest.mark.parametrize("b", LOCAL, ids=lambda b: b.name)
def test_local_bench_quick(b: Bench) -> None:
    run(b, timeout=420)
