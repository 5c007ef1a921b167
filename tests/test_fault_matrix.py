"""The fault matrix: every fault ends in a reply or a clear error, and nothing is lost."""

from __future__ import annotations

import pytest

from tests.engine_helpers import Sleeps
from tests.fault_matrix import CASES, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_fault(case, tmp_path):
    outcome = await run_case(case, tmp_path, Sleeps(cap=0.05))
    assert outcome.lost == 0, outcome
    assert outcome.survived, outcome
