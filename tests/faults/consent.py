"""Fault-matrix cases from issue 25's hostile run, items 1, 2, 3 and 14: a tool runs only when the user meant it to."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
