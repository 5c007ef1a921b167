"""Fault-matrix rows for suggestions only from what the user typed, withdrawn when their source is excluded (issue 39, items 2 and 3)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
