"""Fault-matrix cases for sessions shared and stored under pressure (issue 13, items 8, 10, 12
and 15): two processes on one session, a write lock held mid-reply, a full disk, a bogus limit."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from tests.fakeserver import FakeProvider, overflow_answer
from tests.faults import ProcCase, ProcOutcome, Trial, wait_for
from tests.hostile_server import HostileServer, flood


def two_writers_on_one_session(tmp: Path) -> ProcOutcome:
    t = Trial(8, "two ask --session 1 at once", tmp)
    with FakeProvider(limit=100_000) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m")
        t.run(*flags, "ask", "first question")
        fake.reply_fn = lambda body: "slow answer " * 150
        fake.chunk_delay = 0.005  # about 2 s a reply
        a = t.start(*flags, "ask", "--session", "1", "question A")
        t.expect(wait_for(lambda: len(t.messages()) >= 3), "A never stored its question")
        b = t.run(*flags, "ask", "--session", "1", "question B")
        a_done = t.finish(a)
        requests = [r.body["messages"] for r in fake.chat_requests]
    t.expect((a_done.returncode, b.returncode) == (0, 0),
             f"exits {a_done.returncode}, {b.returncode}")
    t.expect("waiting for it to finish" in b.stderr, "B did not say it was waiting")
    roles = [m.role for m in t.messages()]
    t.expect(roles == ["user", "assistant"] * 3, f"stored roles {roles}")
    asked = [m.content for m in t.messages() if m.role == "user"]
    t.expect(asked == ["first question", "question A", "question B"], f"asked in order {asked}")
    for sent in requests:
        pairs = zip(sent, sent[1:], strict=False)
        t.expect(not any(x["role"] == y["role"] == "user" for x, y in pairs),
                 "a request with two user messages in a row")
    t.keeps(["first question", "question A", "question B"])
    return t.outcome(f"both answered in turn; B waited {b.seconds:.1f}s, each reply after its "
                     "question")


def write_lock_held_mid_reply(tmp: Path) -> ProcOutcome:
    t = Trial(10, "database write lock held 8 s mid-reply", tmp)
    reply = "streamed while the database was locked " * 120
    with FakeProvider(limit=100_000) as fake:
        fake.reply_fn = lambda body: reply
        fake.chunk_delay = 0.003  # about 3.5 s of streaming
        child = t.start("--base-url", fake.base_url, "--model", "m", "ask", "lock test")
        t.expect(wait_for(lambda: any(m.role == "assistant" for m in t.messages())),
                 "the reply never reached the store")
        with sqlite3.connect(t.db, timeout=10) as other:
            other.execute("BEGIN IMMEDIATE")  # what another program's long write does
            time.sleep(8)
            other.execute("COMMIT")
        ask = t.finish(child)
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {ask.stderr.strip()[-100:]}")
    t.expect("locked by another program" in ask.stderr, f"not explained: {ask.stderr!r}")
    stored = [m for m in t.messages() if m.role == "assistant"]
    t.expect(stored and stored[-1].status == "complete", "the reply is not stored complete")
    t.keeps(["lock test", reply.strip()])
    return t.outcome()


def disk_full_mid_reply(tmp: Path) -> ProcOutcome:
    """A real full disk: the data directory is a 400 KB tmpfs (mounted in a namespace of the
    child's own, so no privilege is needed), and the reply is 2 MB."""
    t = Trial(12, "disk full mid-reply", tmp)
    data, kept = Path(t.env["XDG_DATA_HOME"]), tmp / "kept"
    data.mkdir(parents=True)
    kept.mkdir()
    with HostileServer(flood(2_000_000, 16_384)) as server:
        ask = t.shell(
            f'mount -t tmpfs -o size=400k tmpfs "{data}" || exit 99\n'
            f'$JARVIS --base-url {server.base_url} --model m --context-window 400000 '
            f'--response-reserve 200000 ask "fill the disk" > "{tmp}/stdout"\n'
            f'rc=$?; cp -a "{data}/." "{kept}/"; exit $rc', timeout=90, namespace=True)
    printed = (tmp / "stdout").read_text("utf-8", "replace") if (tmp / "stdout").exists() else ""
    t.expect(ask.returncode == 1, f"exit {ask.returncode}")
    t.expect(printed.count("x") >= 1_990_000, f"printed {printed.count('x')} of the reply")
    t.expect("could not be saved" in ask.stderr and "only copy" in ask.stderr,
             f"not told the reply is only on screen: {ask.stderr.strip()[-120:]!r}")
    t.env["XDG_DATA_HOME"] = str(kept)
    t.keeps(["fill the disk"])
    return t.outcome()


def bogus_limit_from_a_proxy(tmp: Path) -> ProcOutcome:
    t = Trial(15, "a proxy's bogus 300-token limit", tmp)
    with FakeProvider(limit=100_000) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m", "--keep-recent-turns", "1")
        for i in range(4):
            t.run(*flags, "ask", f"turn {i}: " + "a fairly long sentence about ports " * 20)
        status, body = overflow_answer("openai", 300, 1200, 1024)
        fake.faults.append(("status", status, {}, body))
        odd = t.run(*flags, "ask", "after the bogus error")
        later = t.run(*flags, "ask", "and later")
        # With a 300-token window the reply's room would shrink to a quarter of it.
        room = fake.chat_requests[-1].body["max_tokens"]
    t.expect(odd.returncode == 0 and later.returncode == 0, "a round failed")
    t.expect("looks wrong" in odd.stderr, f"not told: {odd.stderr.strip()[-100:]!r}")
    t.expect(room == 1024, f"the next process still used the bogus limit (max_tokens {room})")
    t.keeps(["after the bogus error", "and later"])
    return t.outcome(f"the next process asked with max_tokens {room} again")


def context_window_flag_clears_a_learned_limit(tmp: Path) -> ProcOutcome:
    t = Trial(15, "--context-window clears a learned limit", tmp)
    with FakeProvider(limit=2048) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m")
        t.run(*flags, "--context-window", "8192", "ask", "a question " * 600)  # refused: the
        t.expect("2048 tokens" in t.procs[-1].stderr, "no limit was learned")  # 2,048 learned
        fake.limit = 16384  # the server was restarted with a bigger window, and the user says so
        t.run(*flags, "--context-window", "16384", "ask", "short one")
        exported = t.run("export", "--format", "json")
    meta = json.loads(exported.stdout)["conversation"]["meta"] if exported.stdout else {}
    t.expect(meta.get("context_limit") is None, f"the learned limit is still there: {meta}")
    t.keeps(["short one"])
    return t.outcome("learned 2048 under --context-window 8192, cleared by 16384")


CASES: list[ProcCase] = [
    ProcCase(8, "two ask --session 1 at once", two_writers_on_one_session),
    ProcCase(10, "database write lock held 8 s mid-reply", write_lock_held_mid_reply),
    ProcCase(12, "disk full mid-reply", disk_full_mid_reply),
    ProcCase(15, "a proxy's bogus 300-token limit", bogus_limit_from_a_proxy),
    ProcCase(15, "--context-window clears a learned limit",
             context_window_flag_clears_a_learned_limit),
]
