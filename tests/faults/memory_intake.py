"""Fault-matrix rows for invisible characters and near-copies on the way into memory, and a large import (issue 39, items 1, 9, 10 and 14)."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
