"""Fault-matrix cases for the session store under hostile conditions (issue 13, items 11, 13,
14): a directory it may not write, stored fields that are not JSON, and session ids no SQLite
integer can hold."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial, one_line
from tests.readonly import read_only

HUGE_ID = str(2**70)


def asked(t: Trial, fake: FakeProvider, *texts: str) -> tuple[str, ...]:
    """The flags that reach `fake`, once each text was asked in the session the case works on."""
    base = ("--base-url", fake.base_url, "--model", "m")
    for text in texts:
        t.expect(t.run(*base, "ask", text).returncode == 0, f"ask {text!r} failed")
    return base


def read_only_data_directory(tmp: Path) -> ProcOutcome:
    t = Trial(11, "the data directory is read-only", tmp)
    with FakeProvider() as fake:
        base = asked(t, fake, "remember 4711")
        before = t.db.read_bytes()
        with read_only(t.db.parent):
            for args in (["ask", "hello again"], ["sessions"], ["export"]):
                done = t.run(*base, *args)
                said = done.stderr.strip()
                t.expect(done.returncode == 2, f"{args[0]}: exit {done.returncode}")
                t.expect(len(said.splitlines()) == 1, f"{args[0]}: not one line: {said[:80]!r}")
                t.expect(f"cannot write to {t.db.parent}: permission denied" in said
                         and "corrupt" not in said and "move it away" not in said.lower(),
                         f"{args[0]} said {said[:100]!r}")
        t.expect(t.db.read_bytes() == before, "the database changed")
        again = t.run(*base, "ask", "writable again")
        t.expect(again.returncode == 0, f"ask once writable: exit {again.returncode}")
    t.keeps(["remember 4711", "writable again"])
    return t.outcome(one_line(t.procs[1].stderr))


def fields_that_are_not_json(tmp: Path) -> ProcOutcome:
    t = Trial(13, "stored meta and tool_calls that are not JSON", tmp)
    with FakeProvider() as fake:
        base = asked(t, fake, "first question")
        with sqlite3.connect(t.db) as raw:
            raw.execute("UPDATE conversations SET meta = '{\"context_limit\": 81'")
            reply_id = raw.execute(
                "SELECT id FROM messages WHERE role = 'assistant'").fetchone()[0]
            raw.execute("UPDATE messages SET tool_calls = '[{\"id\": \"call_1\", ' "
                        "WHERE id = ?", (reply_id,))
        bad_calls = f"session 1, message {reply_id}: tool_calls is not valid JSON"
        bad_meta = "session 1: meta is not valid JSON"
        as_json = t.run("export", "--format", "json")
        t.expect(as_json.returncode == 0, f"export json: exit {as_json.returncode}")
        try:
            data = json.loads(as_json.stdout)
        except ValueError:
            data = {}
        t.expect(len(data.get("messages", [])) == 2, "the export lost messages")
        problems = [p["problem"] for p in data.get("problems", [])]
        t.expect(any(bad_calls in p for p in problems) and any(bad_meta in p for p in problems),
                 f"problems: {problems}")
        t.expect(bad_calls in as_json.stderr and bad_meta in as_json.stderr,
                 f"export said {as_json.stderr[:100]!r}")
        as_md = t.run("export")
        t.expect(as_md.returncode == 0 and "first question" in as_md.stdout
                 and bad_calls in as_md.stdout, f"export md: exit {as_md.returncode}")
        ask = t.run(*base, "ask", "second question")
        t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
        with sqlite3.connect(t.db) as raw:
            meta = raw.execute("SELECT meta FROM conversations").fetchone()[0]
        t.expect('{"context_limit": 81' in json.loads(meta).get("unreadable_meta", ""),
                 f"the stored meta text was not kept: {meta[:80]!r}")
    t.keeps(["first question", "second question"])
    return t.outcome(one_line(as_json.stderr))


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
    ProcCase(11, "the data directory is read-only", read_only_data_directory),
    ProcCase(13, "stored meta and tool_calls that are not JSON", fields_that_are_not_json),
    ProcCase(14, "a session id beyond 64 bits", session_id_beyond_64_bits),
]
