"""Fault-matrix rows for secrets in plain prose, in recall across sessions and in session titles (issue 39, items 4 and 5)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
