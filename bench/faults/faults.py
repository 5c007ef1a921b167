"""The fault matrix, one row per fault: did the conversation survive, how many messages were
lost, how many retries, how long until it recovered (or gave its clear error). Beside each
OpenAI-compatible row, the same fault against the plain client, in the same run: the best simple
alternative (tests/budget_client.py), a token budget filled newest-first under the window minus
the response reserve, the OpenAI SDK's default retries, no compaction and no retry after an
overflow, judged by the same rule. Rows whose fault hits a summary request show "-" for it: it
makes none.

Then the hostile half (issue 13): each fault through real jarvis-tui processes, with what they
printed searched for tracebacks and secrets: survived, replies and messages lost, tracebacks,
secrets printed, and the time the case took (the deadline cases run with deadlines of seconds).

Run from the repository root in the test environment: python bench/faults/faults.py
[--only provider|process] [--issue N] [--wide]. Back-off waits are real here (the test settings'
0.01-0.05 s back-off, and the 1 s a server's Retry-After asks for), so the times are what a user
would wait with those settings.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fault_matrix import CASES, Outcome, run_case  # noqa: E402
from tests.faults.cases import CASES as PROCESS_CASES  # noqa: E402


def cell(o: Outcome | None) -> str:
    if o is None:
        return "-"
    return "survived" if o.survived else "FAILED"


QUICK_CASES = 4  # --quick: the first provider rows


async def provider_faults(quick: bool = False) -> bool:
    rows: list[tuple[Outcome, Outcome | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(CASES[:QUICK_CASES] if quick else CASES):
            ours = await run_case(case, Path(tmp) / str(n))
            plain = await case.run_plain(asyncio.sleep) if case.run_plain else None
            rows.append((ours, plain))
    width = max(len(o.name) for o, _ in rows)
    print(f"{'fault':{width}}  {'jarvis-tui':10} {'lost':>4} {'retries':>7} {'time s':>7}  "
          f"{'plain client':12} {'lost':>4}  what the user saw (jarvis-tui)")
    for ours, plain in rows:
        print(f"{ours.name:{width}}  {cell(ours):10} {ours.lost:>4} {ours.retries:>7} "
              f"{ours.seconds:>7.2f}  {cell(plain):12} {plain.lost if plain else '-':>4}  "
              f"{ours.result[:90]}")
    survived = sum(o.survived for o, _ in rows)
    lost = sum(max(o.lost, 0) for o, _ in rows)
    plain_rows = [p for _, p in rows if p is not None]
    print(f"\njarvis-tui: {survived}/{len(rows)} survived, {lost} messages lost")
    print(f"plain client (token budget, SDK retries): {sum(p.survived for p in plain_rows)}/"
          f"{len(plain_rows)} survived, {sum(p.lost for p in plain_rows)} messages lost")
    failed = [p for p in plain_rows if not p.survived]
    if failed:
        print("where the plain client failed, what its user saw:")
        for p in failed:
            print(f"  {p.name:{width}}  {p.result[:90]}")
    return survived == len(rows) and lost == 0


width_seen = 80  # of what the user saw; --wide prints it whole
if "--wide" in sys.argv:
    width_seen = 10_000


def process_faults(issue: int | None = None, quick: bool = False) -> bool:
    cases = [c for c in PROCESS_CASES if issue is None or c.issue == issue]
    cases = cases[:1] if quick else cases
    with tempfile.TemporaryDirectory() as tmp:
        rows = [case.run(Path(tmp) / str(n)) for n, case in enumerate(cases)]
    width = max(len(o.name) for o in rows)
    print(f"{'item':>5}  {'fault (real processes)':{width}}  {'':8} {'lost':>4} {'tracebacks':>10} "
          f"{'secrets':>7} {'time s':>7}  what the user saw")
    for o in rows:
        print(f"{o.label:>5}  {o.name:{width}}  {'survived' if o.survived else 'FAILED':8} "
              f"{o.lost:>4} {o.tracebacks:>10} {o.secrets:>7} {o.seconds:>7.1f}  "
              f"{o.result[:width_seen]}")
    survived = sum(o.survived for o in rows)
    lost, tracebacks, secrets = (sum(getattr(o, k) for o in rows)
                                 for k in ("lost", "tracebacks", "secrets"))
    print(f"\nhostile faults: {survived}/{len(rows)} survived, {lost} replies or messages lost, "
          f"{tracebacks} tracebacks, {secrets} secrets printed")
    return survived == len(rows) and lost == tracebacks == secrets == 0


async def main() -> int:
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    # --issue 39: only the hostile rows that issue's run found (run against an older checkout's
    # jarvis_tui, what each of them saw before its fix)
    issue = int(sys.argv[sys.argv.index("--issue") + 1]) if "--issue" in sys.argv else None
    if issue is not None:
        only = "process"
    quick = "--quick" in sys.argv  # to see it runs: a few provider rows, one process row
    ok = True
    if only in ("", "provider"):
        ok = await provider_faults(quick) and ok
        print()
    if only in ("", "process"):
        ok = process_faults(issue, quick) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
