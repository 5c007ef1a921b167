"""Fault-matrix cases from issue 25's hostile run, items 10 and 11: one bad tool schema, an overflow a proxy turns into silence."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
