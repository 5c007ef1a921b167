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


@pytest.mark.parametrize("case", PROCESS_CASES, ids=[f"{c.label}: {c.name}" for c in PROCESS_CASES])
def test_process_fault(case, tmp_path):
    outcome = case.run(tmp_path)
    assert (outcome.lost, outcome.tracebacks, outcome.secrets) == (0, 0, 0), outcome
    assert outcome.survived, outcome
