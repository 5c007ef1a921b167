"""Fault-matrix cases from issue 25's hostile run, items 12, 13, 15, 18 and 20: crashes,
leaked processes, limits, wording."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line
from tests.mcp_servers import ROOT, faulty_args

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


def _unprintable(name: str, redirect: str, said: str) -> ProcCase:
    """stdout that cannot take the reply (`redirect`): ask still stores it whole, says `said` and
    which session holds it in one line, and exits 74; so do the commands that only print."""
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(12, name, tmp, issue=25)
        question = "a question whose reply cannot be printed"
        with FakeProvider() as fake:
            fake.reply_fn = lambda body: REPLY
            ask = t.shell(f'$JARVIS {_flags(fake)} ask "{question}" {redirect}')
        _one_line_saying(t, ask, EXIT_NO_OUTPUT, said, "export 1")
        _stored_whole(t, question)
        for command in ("export", "sessions", "search reply"):
            printed = t.shell(f"$JARVIS {command} {redirect}")
            _one_line_saying(t, printed, EXIT_NO_OUTPUT, said)
        return t.outcome(f"exit {ask.returncode}: {one_line(ask.stderr)}")
    return ProcCase(12, name, run, issue=25)


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
    t = Trial(12, "stdin closed at start (ask <&-, ask - <&-, the app <&-)", tmp, issue=25)
    question = "a question asked with stdin closed"
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        ask = t.shell(f'$JARVIS {_flags(fake)} ask "{question}" <&-')
        t.expect(ask.returncode == 0 and ask.stdout == REPLY + "\n",
                 f"exit {ask.returncode}, stdout {ask.stdout[:60]!r}")
        _stored_whole(t, question)
        dash = t.shell(f"$JARVIS {_flags(fake)} ask - <&-")
        _one_line_saying(t, dash, 2, "standard input is closed")
        app = t.shell(f"$JARVIS {_flags(fake)} <&-", timeout=30)
        _one_line_saying(t, app, 2, "standard input is closed", "keyboard")
    return t.outcome(f"ask - <&-: exit {dash.returncode}: {one_line(dash.stderr)}")


# -- item 13: a tool server's own children end with it ---------------------------------------------

def _server_with_a_child(t: Trial, pidfile: Path) -> None:
    """A stdio server started through a shell that leaves `sleep 300` behind in the background
    (as wrappers and servers that start helpers do) and then becomes the faulty server: the
    shell's pid, written to `pidfile`, is the server's, and its process group's id."""
    server = " ".join([sys.executable, *faulty_args()])
    script = f"sleep 300 & echo $$ > {pidfile}; exec {server}"
    t.write_config("[mcp.servers.kids]\ncommand = \"/bin/sh\"\n"
                   f"args = [\"-c\", {json.dumps(script)}]\ncwd = {json.dumps(str(ROOT))}\n")


def _group_left(t: Trial, pidfile: Path, when: str) -> None:
    """No process of the server's group may outlive jarvis-tui (checked for a few seconds: a
    member may still be on its way out); any left is killed here, so the test leaks none."""
    if not t.expect(pidfile.exists(), "the server never started"):
        return
    pgid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while (left := running_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if t.expect(not left, f"{len(left)} process(es) of the server's group outlived "
                          f"jarvis-tui {when}: {', '.join(left)}"):
        return
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def running_in_group(pgid: int) -> list[str]:
    """The group's members that are running, by /proc ("1234 sleep"): an orphan that has
    exited answers os.killpg(pgid, 0) until init reaps it, which can take seconds here."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            head, _, tail = stat.read_bytes().rpartition(b")")
            fields = tail.split()
            if int(fields[2]) == pgid and fields[0] != b"Z":
                found.append(f"{stat.parent.name} {head.partition(b'(')[2].decode()}")
    return found


def children_after_ask(tmp: Path) -> ProcOutcome:
    t = Trial(13, "a tool server's children after ask ends", tmp, issue=25)
    pidfile = tmp / "server.pid"
    _server_with_a_child(t, pidfile)
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "hello there")
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    _group_left(t, pidfile, "after ask")
    return t.outcome(f"exit {ask.returncode}; the group ended with ask")


def children_after_a_crash(tmp: Path) -> ProcOutcome:
    t = Trial(13, "a tool server's children after it crashed mid-call", tmp, issue=25)
    pidfile = tmp / "server.pid"
    _server_with_a_child(t, pidfile)
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "--allow-tool",
                    "crash", "Crash the server, please.\ncall crash {}")
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect("✗ crash failed" in ask.stderr, f"no failed call in {one_line(ask.stderr)!r}")
    _group_left(t, pidfile, "after the server crashed")
    return t.outcome(f"exit {ask.returncode}; the group ended after the crash")


# -- item 15: numbers too large for what they count ---------------------------------------------

HUGE = "100000000000000000000"  # past 64 bits: what SQLite can bind
HUGER = "1" + "0" * 400  # past what a float holds: what a range check compares against


def huge_numbers(tmp: Path) -> ProcOutcome:
    """Every integer a user gives, as a flag, in the config file or in the environment, at
    sizes past 64 bits and past a float: one line naming it and its range, nothing sent."""
    t = Trial(15, "integers past 64 bits and past a float (--limit, settings)", tmp, issue=25)
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        conn = ["--base-url", fake.base_url, "--model", "m"]
        t.expect(t.run(*conn, "ask", "words to find later").returncode == 0, "ask failed")
        asked = len(fake.chat_requests)
        for number in (HUGE, HUGER, "-" + HUGE):
            _one_line_saying(t, t.run("search", "words", "--limit", number), 2, "--limit")
        for flag in ("--context-window", "--response-reserve", "--system-reserve",
                     "--keep-recent-turns"):
            _one_line_saying(t, t.run(*conn, flag, HUGER, "ask", "never sent"), 2, flag,
                             "401 digits")
        _one_line_saying(t, t.run(*conn, "ask", "never sent either",
                                  env={**t.env, "JARVIS_CONTEXT_WINDOW": HUGER}),
                         2, "JARVIS_CONTEXT_WINDOW")
        for config, key in ((f"tool_max_steps = {HUGER}", "tool_max_steps"),
                            (f"compact_threshold = {HUGER}", "compact_threshold"),
                            (f'[mcp.servers.x]\ncommand = "/bin/true"\ntimeout = {HUGER}',
                             "mcp.servers.x.timeout"),
                            (f'[prices."m"]\ninput = {HUGER}\noutput = 1', "input")):
            t.write_config(config + "\n")
            _one_line_saying(t, t.run(*conn, "ask", "nor this"), 2, key, "401 digits")
        t.expect(len(fake.chat_requests) == asked, "a request was sent")
    return t.outcome(one_line(t.procs[1].stderr))


# -- item 18: keys a terminal cannot send -------------------------------------------------------

UNSENDABLE = {"ctrl+m": "enter", "ctrl+i": "tab", "ctrl+[": "escape", "ctrl+h": "backspace",
              "ctrl+space": "ctrl+@"}


def unsendable_keys(tmp: Path) -> ProcOutcome:
    """`summary = "ctrl+m"` in [keys]: refused in one line naming the key and what a terminal
    sends instead, before anything runs; keys a terminal does send (ctrl+j, and ctrl+@, which
    Ctrl+Space sends) still work."""
    t = Trial(18, "[keys] a terminal cannot send (ctrl+m, ctrl+i, ctrl+[, ctrl+h, ctrl+space)",
              tmp, issue=25)
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: REPLY
        conn = ["--base-url", fake.base_url, "--model", "m"]
        for key, sent in UNSENDABLE.items():
            t.write_config(f'[keys]\nsummary = "f9,{key}"\n')
            _one_line_saying(t, t.run(*conn, "ask", "hello"), 2, f"sends {key} as {sent}",
                             "summary")
        t.expect(not fake.chat_requests, "a request was sent with an unusable key")
        for key in ("ctrl+j", "ctrl+@"):
            t.write_config(f'[keys]\nsummary = "{key}"\n')
            ask = t.run(*conn, "ask", f"hello with {key}, a key a terminal does send")
            t.expect(ask.returncode == 0, f"{key} refused: {one_line(ask.stderr)}")
    return t.outcome(one_line(t.procs[0].stderr))


# -- item 20: wording ---------------------------------------------------------------------------

def _tool_servers(t: Trial) -> None:
    servers = {"faulty": faulty_args(), "refusing": ("-m", "tests.mcp_servers.refusing")}
    t.write_config("".join(
        f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(list(args))}\ncwd = {json.dumps(str(ROOT))}\nallow = [\"*\"]\n"
        for name, args in servers.items()))


def failed_calls_in_one_line(tmp: Path) -> ProcOutcome:
    """A call whose arguments hold a control character, and one the server refuses with a
    JSON-RPC error of two lines: each is one line on stderr, saying "failed" once, in words that
    read right ("at character 11", never "at at")."""
    t = Trial(20, "failed tool calls worded once, on one line", tmp, issue=25)
    _tool_servers(t)
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask",
                    'Store two things.\ncall echo {"text": "a\u0001b"}\n'
                    'call store {"text": "notes"}')
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    failed = [line for line in ask.stderr.splitlines() if line.startswith("✗")]
    t.expect(failed == [
        "✗ echo failed: the arguments for echo could not be read: the arguments are not valid "
        "JSON (Invalid control character at character 11)",
        "✗ store failed: the disk is full (try again later)"], f"said: {failed}")
    return t.outcome(" | ".join(failed)[:120])


CASES: list[ProcCase] = [
    _unprintable("stdout closed at start (ask >&-, export >&-, sessions >&-)", ">&-",
                 "standard output is closed"),
    _unprintable("stdout on a full disk (ask > /dev/full, export > /dev/full)", "> /dev/full",
                 "No space left on device"),
    ProcCase(12, "stderr closed at start (ask 2>&-)", stderr_closed, issue=25),
    ProcCase(12, "stdin closed at start (ask <&-, ask - <&-, the app <&-)", stdin_closed,
             issue=25),
    ProcCase(13, "a tool server's children after ask ends", children_after_ask, issue=25),
    ProcCase(13, "a tool server's children after it crashed mid-call", children_after_a_crash,
             issue=25),
    ProcCase(15, "integers past 64 bits and past a float (--limit, settings)", huge_numbers,
             issue=25),
    ProcCase(18, "[keys] a terminal cannot send (ctrl+m, ctrl+i, ctrl+[, ctrl+h, ctrl+space)",
             unsendable_keys, issue=25),
    ProcCase(20, "failed tool calls worded once, on one line", failed_calls_in_one_line,
             issue=25),
]
