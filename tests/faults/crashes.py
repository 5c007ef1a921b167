"""Fault-matrix cases from issue 25's hostile run, items 12, 13, 15, 18, 19 and 20: crashes,
leaked processes, limits, wording."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line

REPLY = "Reply to a reader who closed the door: every word of it is stored."
EXIT_NO_OUTPUT = 74  # README: stdout was closed, so nothing could be printed (sysexits' EX_IOERR)


# -- item 12: a standard stream closed before jarvis-tui starts ------------------------------------

def _flags(fake: FakeProvider) -> str:
    return f"--base-url {fake.base_url} --model m"


def _stored_whole(t: Trial, question: str) -> None:
    """The question and the whole reply are in the session, the reply as complete."""
    t.keeps([question, REPLY])
    replies = [m for m in t.messages() if m.role == "assistant"]
    t.expect(replies and replies[-1].content == REPLY and replies[-1].status == "complete",
             f"stored reply {replies[-1].content[:20]!r} ({replies[-1].status})" if replies
             else "no reply stored")


def _one_line_saying(t: Trial, proc: Proc, code: int, *words: str) -> None:
    lines = [line for line in proc.stderr.strip().splitlines()
             if line.strip() and not line.startswith("jarvis-tui: started session")]
    t.expect(proc.returncode == code, f"exit {proc.returncode}, not {code}")
    t.expect(len(lines) == 1, f"{len(lines)} lines on stderr: {proc.stderr.strip()[-120:]!r}")
    t.expect(all(w in proc.stderr for w in words), f"no {words} in {one_line(proc.stderr)!r}")


def stdout_closed(tmp: Path) -> ProcOutcome:
    t = Trial(12, "stdout closed at start (ask >&-, export >&-, sessions >&-)", tmp, issue=25)
    question = "a question whose reply nobody can print"
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        ask = t.shell(f'$JARVIS {_flags(fake)} ask "{question}" >&-')
    _one_line_saying(t, ask, EXIT_NO_OUTPUT, "standard output is closed", "export 1")
    _stored_whole(t, question)
    for command in ("export", "sessions", "search reply"):
        printed = t.shell(f"$JARVIS {command} >&-")
        _one_line_saying(t, printed, EXIT_NO_OUTPUT, "standard output is closed")
    return t.outcome(f"exit {ask.returncode}: {one_line(ask.stderr)}")


def stderr_closed(tmp: Path) -> ProcOutcome:
    """Notices have nowhere to go; they must not end up in the reply on stdout either."""
    t = Trial(12, "stderr closed at start (ask 2>&-)", tmp, issue=25)
    question = "a question asked with stderr closed"
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        ask = t.shell(f'$JARVIS {_flags(fake)} ask --new "{question}" 2>&-')
    t.expect(ask.returncode == 0, f"exit {ask.returncode}")
    t.expect(ask.stdout == REPLY + "\n", f"stdout is not just the reply: {ask.stdout[:80]!r}")
    _stored_whole(t, question)
    return t.outcome(f"exit {ask.returncode}, stdout {ask.stdout.strip()[:30]!r}…")


def stdin_closed(tmp: Path) -> ProcOutcome:
    t = Trial(12, "stdin closed at start (ask <&-, ask - <&-)", tmp, issue=25)
    question = "a question asked with stdin closed"
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        ask = t.shell(f'$JARVIS {_flags(fake)} ask "{question}" <&-')
        t.expect(ask.returncode == 0 and ask.stdout == REPLY + "\n",
                 f"exit {ask.returncode}, stdout {ask.stdout[:60]!r}")
        _stored_whole(t, question)
        dash = t.shell(f"$JARVIS {_flags(fake)} ask - <&-")
    _one_line_saying(t, dash, 2, "standard input is closed")
    return t.outcome(f"ask - <&-: exit {dash.returncode}: {one_line(dash.stderr)}")


CASES: list[ProcCase] = [
    ProcCase(12, "stdout closed at start (ask >&-, export >&-, sessions >&-)", stdout_closed,
             issue=25),
    ProcCase(12, "stderr closed at start (ask 2>&-)", stderr_closed, issue=25),
    ProcCase(12, "stdin closed at start (ask <&-, ask - <&-)", stdin_closed, issue=25),
]
