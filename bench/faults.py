"""The fault matrix, one row per fault: did the conversation survive, how many messages were
lost, how many retries, how long until it recovered (or gave its clear error). Beside each
OpenAI-compatible row, the same fault against a plain client (last 20 messages, one attempt,
history in memory), in the same run.

Run from the repository root in the test environment: python bench/faults.py
Back-off waits are real here (the test settings' 0.01-0.05 s back-off, and the 1 s a server's
Retry-After asks for), so the times are what a user would wait with those settings.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fault_matrix import CASES, Outcome, run_case  # noqa: E402


def cell(o: Outcome | None) -> str:
    if o is None:
        return "-"
    return "survived" if o.survived else "FAILED"


async def main() -> int:
    rows: list[tuple[Outcome, Outcome | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(CASES):
            ours = await run_case(case, Path(tmp) / str(n))
            plain = await case.run_plain() if case.run_plain else None
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
    print(f"plain client: {sum(p.survived for p in plain_rows)}/{len(plain_rows)} survived, "
          f"{sum(p.lost for p in plain_rows)} messages lost")
    return 0 if survived == len(rows) and lost == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
