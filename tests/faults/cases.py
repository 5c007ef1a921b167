"""Every process-level fault case, in the order of issue 13's items."""

from __future__ import annotations

from tests.faults import ProcCase, pipes, secrets, sessions, store, text, tokens
from tests.faults import limits as limits_

CASES: list[ProcCase] = sorted(
    [*secrets.CASES, *text.CASES, *limits_.CASES, *sessions.CASES, *store.CASES, *pipes.CASES,
     *tokens.CASES],
    key=lambda case: case.item)
