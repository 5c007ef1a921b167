"""Every process-level fault case, in the order of issue 13's items, then issue 25's, 39's
and 42's."""

from __future__ import annotations

from tests.faults import (
    ProcCase,
    attach,
    consent,
    crashes,
    excluded,
    leaks,
    memory,
    memory_intake,
    memory_origin,
    partial_model,
    pipes,
    proxy,
    secret_recall,
    secrets,
    sessions,
    store,
    text,
    tokens,
    turns,
)
from tests.faults import limits as limits_

CASES: list[ProcCase] = sorted(
    [*secrets.CASES, *text.CASES, *limits_.CASES, *sessions.CASES, *store.CASES, *pipes.CASES,
     *tokens.CASES, *consent.CASES, *leaks.CASES, *turns.CASES, *proxy.CASES, *crashes.CASES,
     *memory.CASES, *memory_intake.CASES, *memory_origin.CASES, *secret_recall.CASES,
     *excluded.CASES, *partial_model.CASES, *attach.CASES],
    key=lambda case: (case.issue, case.item))
