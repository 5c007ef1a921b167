"""Fault-matrix cases for the session store under hostile conditions (issue 13, items 9, 11, 13,
14): many processes creating it at once, a directory it may not write, a damaged search index,
stored fields that are not JSON, and session ids no SQLite integer can hold."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, command, one_line
from tests.readonly import read_only

PARALLEL = 10
ROUNDS = 3
HUGE_ID = str(2**70)


def parallel_first_open(tmp: Path) -> ProcOutcome:
    t = Trial(9, f"{PARALLEL} parallel `ask --new` on a new data directory", tmp)
    with FakeProvider() as fake:
        for round_ in range(ROUNDS):
            env = {**t.env, "XDG_DATA_HOME": str(tmp / f"data-{round_}")}
            db = tmp / f"data-{round_}" / "jarvis-tui" / "sessions.db"
            started = time.monotonic()
            creating = _creating(db) if round_ == 0 else None
            running = [subprocess.Popen(
                command("--base-url", fake.base_url, "--model", "m", "ask", "--new",
                        f"question {i} of round {round_}"),
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for i in range(PARALLEL)]
            if creating is not None:
                _until_some_arrive(running, db)
                creating.execute("ROLLBACK")
                creating.close()
            for i, p in enumerate(running):
                out, err = p.communicate(timeout=120)
                proc = t.add(Proc(["ask", "--new", f"question {i}"], p.returncode,
                                  out.decode(), err.decode(), time.monotonic() - started))
                t.expect(proc.returncode == 0, f"round {round_}: exit {proc.returncode}: "
                                               f"{one_line(proc.stderr)}")
            with sqlite3.connect(db) as raw:
                sessions = raw.execute("SELECT count(*) FROM conversations").fetchone()[0]
                whole = raw.execute(
                    "SELECT count(*) FROM (SELECT conversation_id FROM messages "
                    "GROUP BY conversation_id HAVING count(*) = 2 AND "
                    "sum(role = 'user') = 1 AND sum(role = 'assistant') = 1)").fetchone()[0]
                asked = {row[0] for row in raw.execute(
                    "SELECT content FROM messages WHERE role = 'user'")}
            t.expect(sessions == PARALLEL and whole == PARALLEL,
                     f"round {round_}: {sessions} sessions, {whole} whole")
            missing = [i for i in range(PARALLEL) if f"question {i} of round {round_}" not in asked]
            t.lost += len(missing)
            t.expect(not missing, f"round {round_}: lost questions {missing}")
    return t.outcome(f"{ROUNDS} x {PARALLEL} sessions, each question and reply stored")


def _creating(db: Path) -> sqlite3.Connection:
    """The new file's write lock held, as by a process creating the store: the race is won or
    lost in microseconds, so plain parallel rounds rarely show it, but every process that
    opens the store meanwhile meets it (the switch to WAL used to fail at once then)."""
    db.parent.mkdir(parents=True)
    creating = sqlite3.connect(db, isolation_level=None)
    creating.execute("BEGIN IMMEDIATE")
    return creating


def _until_some_arrive(running: list[subprocess.Popen], db: Path) -> None:
    """Until one process ended or two hold the database open (well within their 5 s wait)."""
    def holds(p: subprocess.Popen) -> bool:
        try:
            fds = Path(f"/proc/{p.pid}/fd")
            return any(os.readlink(fds / fd) == str(db) for fd in os.listdir(fds))
        except OSError:
            return False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in running) or sum(map(holds, running)) >= 2:
            return
        time.sleep(0.005)


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


def damaged_search_index(tmp: Path) -> ProcOutcome:
    t = Trial(11, "the full-text index is damaged", tmp)
    with FakeProvider() as fake:
        base = asked(t, fake, "the deploy port is 8080", "我家的猫叫咪咪")
        with sqlite3.connect(t.db) as raw:
            raw.execute("UPDATE message_index_data SET block = randomblob(length(block))")
        ask = t.run(*base, "ask", "what port?")
        t.expect(ask.returncode == 0, f"ask on the damaged index: exit {ask.returncode}")
        told = ask.stderr.count("the search index was damaged")
        t.expect(told == 1 and "rebuilt from the stored messages" in ask.stderr,
                 f"told {told} times: {one_line(ask.stderr)!r}")
        found = t.run("search", "deploy port")
        t.expect(found.returncode == 0 and "the deploy port is 8080" in found.stdout,
                 f"search: exit {found.returncode}, {found.stdout[:60]!r}")
        t.expect("damaged" not in found.stderr, "told again on the next command")
        zh = t.run("search", "猫叫什么")
        t.expect("我家的猫叫咪咪" in zh.stdout, f"search in Chinese found {zh.stdout[:60]!r}")
    t.keeps(["the deploy port is 8080", "我家的猫叫咪咪", "what port?"])
    return t.outcome(one_line(ask.stderr))


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
    ProcCase(9, f"{PARALLEL} parallel `ask --new` on a new data directory", parallel_first_open),
    ProcCase(11, "the data directory is read-only", read_only_data_directory),
    ProcCase(11, "the full-text index is damaged", damaged_search_index),
    ProcCase(13, "stored meta and tool_calls that are not JSON", fields_that_are_not_json),
    ProcCase(14, "a session id beyond 64 bits", session_id_beyond_64_bits),
]
