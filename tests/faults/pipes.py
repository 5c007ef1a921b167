"""Fault-matrix cases for pipes (issue 13, item 16): a reader that goes away mid-reply."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial


def _closed_stdout(item: int, name: str, command: str, *, repeat: int = 100,
                   exits: tuple[int, ...] = (141,)) -> ProcCase:
    """`command` (after the connection flags) piped into `head -c 5`: jarvis-tui must keep
    receiving, store the whole reply, and exit quietly with the status of a SIGPIPE death."""
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(item, name, tmp)
        with FakeProvider(limit=1_000_000) as fake:
            # More than a pipe holds (64 KB) when `repeat` is large, so the writer meets EPIPE.
            reply = "a long answer for a reader that stops early " * repeat
            fake.reply_fn = lambda body: reply
            fake.chunk_delay = 0.0005 if command.startswith("ask") else 0.0
            flags = (f"--base-url {fake.base_url} --model m --context-window 400000 "
                     "--response-reserve 100000")
            if not command.startswith("ask"):
                t.run(*flags.split(), "ask", "first, so there is something to export")
            piped = t.shell(f'$JARVIS {flags} {command} | head -c 5 > /dev/null\n'
                            'exit "${PIPESTATUS[0]}"')
        # A reply still streaming meets the closed pipe for sure (141); a whole export may
        # already sit in the pipe's buffer when the reader goes (0). Either way: quietly.
        t.expect(piped.returncode in exits, f"exit {piped.returncode}")
        t.expect(piped.stderr.strip() in ("", "jarvis-tui: started session 1"),
                 f"not quiet: {piped.stderr.strip()[-100:]!r}")
        t.keeps(["read me" if command.startswith("ask") else "first, so", reply.strip()])
        return t.outcome(f"exit {piped.returncode}, stderr {piped.stderr.strip()[-40:]!r}")
    return ProcCase(item, name, run)


CASES: list[ProcCase] = [
    _closed_stdout(16, "stdout closed mid-reply (ask | head -c 5)", 'ask "read me"'),
    _closed_stdout(16, "stdout closed mid-export (export | head -c 5)", "export", repeat=4000,
                   exits=(0, 141)),
]
