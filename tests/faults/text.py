"""Fault-matrix cases for text that is not valid Unicode (issue 13, items 4 and 5)."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial
from tests.hostile_server import HostileServer, split_emoji


def emoji_split_across_events(tmp: Path) -> ProcOutcome:
    t = Trial(4, "emoji split across two stream events", tmp)
    with HostileServer(split_emoji) as server:
        ask = t.run("--base-url", server.base_url, "--model", "m", "ask", "say hi")
    t.expect(ask.returncode == 0, f"exit {ask.returncode}")
    t.expect("Hi 😀 there \ufffd!" in ask.stdout, f"printed {ask.stdout[:40]!r}")
    t.keeps(["say hi", "Hi 😀 there \ufffd!"])
    return t.outcome(f"reply {ask.stdout.strip()!r}")


def invalid_utf8_on_stdin(tmp: Path) -> ProcOutcome:
    t = Trial(5, "invalid UTF-8 on standard input", tmp)
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "-",
                    stdin=b"x \xff y caf\xe9\n")
    t.expect(ask.returncode == 0, f"exit {ask.returncode}")
    t.expect(ask.stderr.count("not valid UTF-8") == 1, "no single line about the bad bytes")
    t.keeps(["x \ufffd y caf\ufffd"])
    said = [line for line in ask.stderr.splitlines() if "UTF-8" in line]
    return t.outcome(said[0] if said else "")


def invalid_utf8_in_an_argument(tmp: Path) -> ProcOutcome:
    t = Trial(5, "invalid UTF-8 in the message argument", tmp)
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask",
                    b"caf\xe9 ok".decode("utf-8", "surrogateescape"))
    t.expect(ask.returncode == 0, f"exit {ask.returncode}")
    t.keeps(["caf\ufffd ok"])
    said = [line for line in ask.stderr.splitlines() if "UTF-8" in line]
    return t.outcome(said[0] if said else "")


CASES: list[ProcCase] = [
    ProcCase(4, "emoji split across two stream events", emoji_split_across_events),
    ProcCase(5, "invalid UTF-8 on standard input", invalid_utf8_on_stdin),
    ProcCase(5, "invalid UTF-8 in the message argument", invalid_utf8_in_an_argument),
]
