"""Where the test suite's time goes, and the developers' loop beside the full run.

Runs every test but the e2e ones on 2 workers with tests/cpu_cost.py (README's former developers'
loop, the baseline), sums each test's CPU (its own process, and the processes it started) and
wall time by folder, names the costliest, and calls slow every test over SLOW_CPU seconds of CPU.
Then times the loop README gives (the same tests without the slow ones, on twice the cores'
workers) in the same run. `--write` stores the slow list in tests/slow_tests.txt first.

    .venv/bin/python bench/dev/test_loop.py [--write] [--workers N]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLOW_LIST = ROOT / "tests" / "slow_tests.txt"
SLOW_CPU = 1.5  # seconds of CPU, the test's process and its children together
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
QUICK_TESTS = "tests/cli/test_provider_plugins.py"  # three tests: --quick shows the loop runs
HEADER = """\
# Tests over {cpu} s of CPU (their own and their child processes') on the project's 2-core VM,
# as bench/dev/test_loop.py measured them; conftest.py marks them `slow`, and the developers' loop
# (README) leaves them to README's test command. Regenerate: python bench/dev/test_loop.py --write
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    if done.returncode != 0:
        print(done.stdout[-4000:], file=sys.stderr)
        raise SystemExit(f"pytest exited {done.returncode}: {summary}")
    return time.monotonic() - started, summary


def costs(where: Path) -> list[dict[str, float | str]]:
    return [json.loads(line) for f in sorted(where.glob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def folder(test_id: str) -> str:
    parts = test_id.split("::")[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def cpu(cost: dict) -> float:  # type: ignore[type-arg]
    return cost["cpu"] + cost["children"]


def report(rows: list[dict]) -> list[str]:  # type: ignore[type-arg]
    total = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in rows:
        t = total[folder(r["id"])]
        t[0] += 1
        t[1] += r["cpu"]
        t[2] += r["children"]
        t[3] += r["wall"]
    print(f"{'folder':<14} {'tests':>6} {'CPU s':>8} {'children':>9} {'wall s':>8}")
    for name, (n, own, kids, wall) in sorted(total.items(), key=lambda kv: -kv[1][3]):
        print(f"{name:<14} {n:>6} {own:>8.0f} {kids:>9.0f} {wall:>8.0f}")
    all_cpu, all_wall = sum(map(cpu, rows)), sum(r["wall"] for r in rows)
    print(f"{'all':<14} {len(rows):>6} {sum(r['cpu'] for r in rows):>8.0f} "
          f"{sum(r['children'] for r in rows):>9.0f} {all_wall:>8.0f}")
    print("\ncostliest (CPU s, wall s):")
    for r in sorted(rows, key=cpu, reverse=True)[:12]:
        print(f"  {cpu(r):5.1f} {r['wall']:5.1f}  {r['id'][:100]}")
    slow = sorted(r["id"] for r in rows if cpu(r) >= SLOW_CPU)
    slow_cpu = sum(cpu(r) for r in rows if cpu(r) >= SLOW_CPU)
    print(f"\nslow (>= {SLOW_CPU} s CPU): {len(slow)} of {len(rows)} tests "
          f"({len(slow) / len(rows):.0%}), {slow_cpu:.0f} s of {all_cpu:.0f} s CPU "
          f"({slow_cpu / all_cpu:.0%})")
    return slow


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the slow list first")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1),
                        help="the loop's xdist workers (default: twice the cores)")
    parser.add_argument("--quick", action="store_true",
                        help=f"to see it runs: both measurements over {QUICK_TESTS} alone")
    args = parser.parse_args()
    if args.quick and args.write:
        parser.error("--write needs the whole suite: a quick run would list too few")
    # --quick: no workers either (starting them is most of a run this small)
    only = [QUICK_TESTS] if args.quick else []
    full_n, loop_n = ([], []) if args.quick else (["-n", "2"], ["-n", str(args.workers)])
    with tempfile.TemporaryDirectory() as where:
        env = {**os.environ, "JARVIS_TEST_COST_DIR": where}
        full_s, full_said = timed([*PYTEST, *full_n, "-m", "not e2e", "-p", "tests.cpu_cost",
                                   *only], env)
        slow = report(costs(Path(where)))
    if args.write:
        SLOW_LIST.write_text(HEADER.format(cpu=SLOW_CPU) + "".join(f"{t}\n" for t in slow),
                             encoding="utf-8")
        print(f"wrote {len(slow)} tests to {SLOW_LIST.relative_to(ROOT)}")
    loop_s, loop_said = timed([*PYTEST, *loop_n, "-m", "not e2e and not slow",
                               *only], dict(os.environ))
    full_w, loop_w = " ".join(full_n) or "no workers", " ".join(loop_n) or "no workers"
    print(f"\nbaseline, every test but e2e, {full_w}: {full_s:6.0f} s  ({full_said})")
    print(f"the developers' loop, {loop_w}:      {loop_s:6.0f} s  ({loop_said})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
