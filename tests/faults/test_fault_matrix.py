"""The fault matrix: every fault ends in a reply or a clear error, and nothing is lost.

Two halves: provider faults run through the engine against the fake servers (tests/fault_matrix.py),
and hostile faults run through real `jarvis-tui` processes (tests/faults/), where a traceback or a
printed secret fails the row too.
"""

from __future__ import annotations

import pytest

from tests.engine_helpers import Sleeps
from tests.fault_matrix import CASES, run_case
from tests.faults.cases import CASES as PROCESS_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_fault(case, tmp_path):
    outcome = await run_case(case, tmp_path, Sleeps(cap=0.05))
    assert outcome.lost == 0, outcome
    assert outcome.survived, outcome


# The bench's baseline (tests/budget_client.py) has no answer to these: an overflow (no
# compaction, no retry after it) and a malformed stream event (an error, as in the OpenAI SDK).
PLAIN_FAILS = {c.name for c in CASES if c.name.startswith("context overflow (")} | {
    "malformed SSE line"}


@pytest.mark.parametrize("case", [c for c in CASES if c.run_plain],
                         ids=[c.name for c in CASES if c.run_plain])
async def test_plain_client(case):
    """The figures bench/faults/faults.py prints for the plain client: it fails where it has no
    answer and nowhere else (a baseline that failed everywhere would be a strawman), losing
    nothing."""
    outcome = await case.run_plain(Sleeps(cap=0.05))
    assert outcome.lost == 0, outcome
    assert outcome.survived == (case.name not in PLAIN_FAILS), outcome


@pytest.mark.parametrize("case", PROCESS_CASES, ids=[f"{c.label}: {c.name}" for c in PROCESS_CASES])
def test_process_fault(case, tmp_path):
    outcome = case.run(tmp_path)
    assert (outcome.lost, outcome.tracebacks, outcome.secrets) == (0, 0, 0), outcome
    assert outcome.survived, outcome
