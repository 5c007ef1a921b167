"""Fault-matrix cases for the session store under hostile conditions (issue 13, item 14):
session ids no SQLite integer can hold."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial, one_line

HUGE_ID = str(2**70)


def asked(t: Trial, fake: FakeProvider, *texts: str) -> tuple[str, ...]:
    """The flags that reach `fake`, once each text was asked in the session the case works on."""
    base = ("--base-url", fake.base_url, "--model", "m")
    for text in texts:
        t.expect(t.run(*base, "ask", text).returncode == 0, f"ask {text!r} failed")
    return base


def session_id_beyond_64_bits(tmp: Path) -> ProcOutcome:
    t = Trial(14, "a session id beyond 64 bits", tmp)
    with FakeProvider() as fake:
        base = asked(t, fake, "hello")
        sent = len(fake.chat_requests)
        for session, args in ((HUGE_ID, ["export", HUGE_ID]),
                              (HUGE_ID, ["ask", "--session", HUGE_ID, "hi again"]),
                              (HUGE_ID, ["search", "hello", "--session", HUGE_ID]),
                              ("0", ["export", "0"]), ("-1", ["ask", "--session", "-1", "hi"])):
            done = t.run(*base, *args)
            said = done.stderr.strip()
            t.expect(done.returncode == 2 and len(said.splitlines()) == 1
                     and f"there is no session {session};" in said,
                     f"{' '.join(args)[:40]}: exit {done.returncode}, {said[-80:]!r}")
        t.expect(len(fake.chat_requests) == sent, "a request went out for a session that is not")
    t.keeps(["hello"])
    return t.outcome(one_line(t.procs[1].stderr))


CASES: list[ProcCase] = [
    ProcCase(14, "a session id beyond 64 bits", session_id_beyond_64_bits),
]
