"""Fault-matrix cases (issue 13): see tests/faults/__init__.py for how a case is built."""

from __future__ import annotations

from tests.faults import ProcCase

CASES: list[ProcCase] = []
