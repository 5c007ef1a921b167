"""Fault-matrix rows for a start killed while assembling the offline model, and a models folder
that cannot be written (issue 39, item 11)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
