"""Fault-matrix cases from issue 25's hostile run, items 7, 8, 9 and 16: no turn hidden for
good, no retry dropped, no session stuck."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from tests.fake_anthropic import FakeAnthropic
from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line, wait_for

PRESSED = "TURNS_DRIVER_PRESSED"  # where tests.faults.turns_driver says it pressed `r`
WAITS = "is answering in this session"  # what the app says while another process answers
REFUSED = ("status", 400, {}, {"error": {"message": "bad request",
                                         "type": "invalid_request_error"}})


def _driver(question: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "tests.faults.turns_driver", question, *flags]


def _answer_again_in_the_app(t: Trial, question: str, *flags: str) -> Proc:
    start = time.monotonic()
    done = subprocess.run(_driver(question, *flags), env=t.env, capture_output=True,
                          timeout=120)
    return t.add(Proc(["tui", "r", question], done.returncode,
                      done.stdout.decode("utf-8", "replace"),
                      done.stderr.decode("utf-8", "replace"), time.monotonic() - start))


def earlier_failed_question_answered_again(tmp: Path) -> ProcOutcome:
    """Three `ask`s, the second refused (stored failed), then `r` on it in the app and `<` on
    the question: the turns after it must come back, and `export` show them on the branch."""
    t = Trial(7, "r on an earlier failed question", tmp, issue=25)
    with FakeProvider() as fake:
        flags = ("--base-url", fake.base_url, "--model", "m")
        t.run(*flags, "ask", "first question")
        fake.faults.append(REFUSED)
        t.run(*flags, "ask", "second question")
        t.run(*flags, "ask", "third question")
        tui = _answer_again_in_the_app(t, "second question", *flags)
        exported = t.run("export", "--format", "json")
    t.expect(tui.returncode == 0, f"exit {tui.returncode}: {one_line(tui.stderr)}")
    said = [line for line in tui.stderr.splitlines() if line.startswith("notice: ")]
    t.expect(not any("stays as version" in line for line in said),
             f"the notice speaks of a reply the question never had: {said}")
    t.expect(any(line.startswith("after <: user: third question") for line in
                 tui.stderr.splitlines()), "< on the question did not bring the later turns back")
    data = json.loads(exported.stdout) if exported.stdout.startswith("{") else {"messages": []}
    shown = [m["content"] for m in data["messages"] if m.get("on_branch_shown")]
    t.expect("third question" in shown, f"the later turns are off the branch shown: {shown}")
    t.keeps(["first question", "second question", "third question"])
    answers = [m for m in data["messages"] if m["role"] == "assistant"
               and "second question" in m["content"]]
    t.expect(answers, "the question asked again was not answered")
    return t.outcome("answered again as a new version; < brought the later turns back")


def retry_while_another_process_answers(tmp: Path) -> ProcOutcome:
    """`r` in the app on a question while `ask --session 1` answers in the same session (its
    reply held until `r` was pressed): the app says it waits, and once the other is done its
    retry must be sent and answered."""
    t = Trial(8, "r while another process answers", tmp, issue=25)
    gate, pressed = threading.Event(), tmp / "pressed"
    with FakeProvider(limit=100_000) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m")
        t.run(*flags, "ask", "first question")
        fake.faults.append(("hold", gate))
        other = t.start(*flags, "ask", "--session", "1", "the other process asks")
        t.expect(wait_for(lambda: len(t.messages()) >= 3), "the other never stored its question")
        start = time.monotonic()
        app = subprocess.Popen(_driver("first question", *flags), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**t.env, PRESSED: str(pressed)})
        t.expect(wait_for(pressed.exists, 60), "the app never pressed r")
        gate.set()
        t.finish(other)
        try:
            out, err = app.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            app.kill()
            out, err = app.communicate()
        tui = t.add(Proc(["tui", "r", "first question"], app.returncode,
                         out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                         time.monotonic() - start))
        last = [m["content"] for m in fake.chat_requests[-1].body["messages"][1:]]
    t.expect(tui.returncode == 0, f"the retry was never answered (exit {tui.returncode}: "
                                  f"{one_line(tui.stderr)})")
    t.expect(WAITS in tui.stderr, "the app did not say it waits")
    t.expect(last == ["first question"], f"the last request was not the retry: {last}")
    replies = [m for m in t.messages() if m.role == "assistant"]
    t.expect(len(replies) == 3, f"{len(replies)} replies stored, not 3")
    t.keeps(["first question", "the other process asks"])
    return t.outcome(f"waited, then answered again; {len(replies)} replies kept")


TIME_SERVER = f"""[mcp.servers.time]
command = {json.dumps(sys.executable)}
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
"""
CLOCK = {"name": "get_current_time", "arguments": {"timezone": "UTC"}}


def _anthropic_flags(fake: FakeAnthropic) -> tuple[str, ...]:
    return ("--provider", "anthropic", "--base-url", fake.base_url, "--api-key", "sk-ant-test",
            "--model", "claude-fake")


def _refused(fake: FakeAnthropic) -> int:
    return sum(r.status == 400 for r in fake.message_requests)


def repeated_call_ids_in_one_reply(tmp: Path) -> ProcOutcome:
    """A reply calling a tool three times with the ids `dup`, `dup` and ``: its results, and
    every later request of the session, must not be refused by Anthropic."""
    t = Trial(9, "tool-call ids dup, dup, '' in one reply", tmp, issue=25)
    t.write_config(TIME_SERVER)
    with FakeAnthropic() as fake:
        fake.script.append([{**CLOCK, "id": cid} for cid in ("dup", "dup", "")])
        first = t.run(*_anthropic_flags(fake), "ask", "--allow-tool", "get_current_time",
                      "what time is it, three times?", timeout=120)
        later = t.run(*_anthropic_flags(fake), "ask", "are you still there?", timeout=120)
        refused = _refused(fake)
    t.expect(first.returncode == 0 and later.returncode == 0,
             f"exits {first.returncode}, {later.returncode}: {one_line(later.stderr)}")
    t.expect(refused == 0, f"Anthropic refused {refused} requests of the session")
    stored = [m for m in t.messages() if m.role == "assistant" and m.tool_calls]
    ids = [c["id"] for c in stored[0].tool_calls or []] if stored else []
    t.expect(len(set(ids)) == 3 and all(ids), f"the stored call ids: {ids}")
    answered = sorted(m.tool_call_id or "" for m in t.messages() if m.role == "tool")
    t.expect(answered == sorted(ids), f"results {answered} do not match the calls {ids}")
    t.keeps(["what time is it, three times?", "are you still there?"])
    return t.outcome(f"ids {ids}; {refused} requests refused")


def session_stored_with_repeated_call_ids(tmp: Path) -> ProcOutcome:
    """A session stored by an older version with the call ids `dup`, `dup`, ``: the next
    request repairs them on the way out, so the session is not stuck."""
    t = Trial(9, "a session stored with call ids dup, dup, ''", tmp, issue=25)
    t.write_config(TIME_SERVER)
    t.db.parent.mkdir(parents=True, exist_ok=True)
    calls = [{"id": cid, "type": "function", "function": {
        "name": "get_current_time", "arguments": '{"timezone": "UTC"}'}}
        for cid in ("dup", "dup", "")]
    with Store(t.db) as store:
        cid = store.create_conversation(model="claude-fake").id
        store.add_message(cid, Message("user", "what time is it, three times?"))
        store.add_message(cid, Message("assistant", "", tool_calls=calls))
        for n, call in enumerate(calls):
            store.add_message(cid, Message("tool", f"12:0{n} UTC", tool_call_id=call["id"],
                                           name="get_current_time"))
        store.add_message(cid, Message("assistant", "It is 12:00 UTC."))
    with FakeAnthropic() as fake:
        ask = t.run(*_anthropic_flags(fake), "ask", "--session", str(cid), "and in Tokyo?",
                    timeout=120)
        refused = _refused(fake)
        sent = json.dumps(fake.message_requests[-1].body) if fake.message_requests else ""
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect(refused == 0, f"Anthropic refused {refused} requests of the session")
    t.expect(all(f"12:0{n} UTC" in sent for n in range(3)), "a stored result was not sent")
    stored = [m for m in t.messages(cid) if m.tool_calls]
    t.expect(stored and [c["id"] for c in stored[0].tool_calls or []] == ["dup", "dup", ""],
             "the stored session was changed")
    t.keeps(["and in Tokyo?"], cid)
    return t.outcome(f"{refused} requests refused; the stored ids are left as they were")


def same_context_window_on_every_call(tmp: Path, calls: int = 10) -> ProcOutcome:
    """`ask --context-window 16000` again and again against a server that allows 4,096: once
    the limit is learned, it must hold, not be dropped and met again on every call."""
    t = Trial(16, "the same --context-window on every call", tmp, issue=25)
    with FakeProvider(limit=4096) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m", "--context-window", "16000")
        learned_at = None
        for n in range(calls):
            t.run(*flags, "ask", f"turn {n}: " + "a sentence about the harbour and its ships "
                  * 150)
            if learned_at is None and any(r.overflowed for r in fake.chat_requests):
                learned_at = len(fake.chat_requests)
        later = sum(r.overflowed for r in fake.chat_requests[learned_at or 0:])
        total = len(fake.chat_requests)
    failed = [p for p in t.procs if p.returncode != 0]
    t.expect(not failed, f"{len(failed)} calls failed: "
                         f"{one_line(failed[0].stderr) if failed else ''}")
    t.expect(learned_at is not None, "the server never refused: nothing to learn")
    t.expect(later <= 1, f"{later} overflows after the limit was learned ({total} requests)")
    t.keeps([f"turn {n}: " for n in range(calls)])
    return t.outcome(f"{later} overflows after the limit was learned, in {total} requests")


CASES: list[ProcCase] = [
    ProcCase(7, "r on an earlier failed question", earlier_failed_question_answered_again,
             issue=25),
    ProcCase(8, "r while another process answers", retry_while_another_process_answers,
             issue=25),
    ProcCase(9, "tool-call ids dup, dup, '' in one reply", repeated_call_ids_in_one_reply,
             issue=25),
    ProcCase(9, "a session stored with call ids dup, dup, ''",
             session_stored_with_repeated_call_ids, issue=25),
    ProcCase(16, "the same --context-window on every call", same_context_window_on_every_call,
             issue=25),
]
