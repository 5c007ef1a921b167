"""Fault-matrix rows for nothing the user took out comes back through search, and bad limits to the search tool (issue 39, items 6 and 8)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
