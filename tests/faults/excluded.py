"""Fault-matrix rows for nothing the user took out comes back through search, and bad limits to
the search tool (issue 39, items 6 and 8).

Item 8: the model calls search_history with limits no code should choke on ("²", "٣", 5,000
digits as text and as a number, a fraction, a boolean, a negative, a huge number, a list): each
result sent back is the one clear line, and `ask` prints no traceback. And with arguments nested
100,000 deep, as each protocol streams them (text over OpenAI and Anthropic, an object over
Ollama): the round ends in one clear line, a later turn of the session is answered.

Item 6: a stored session (tests/excluded_turns.py) where the user kept one fact and took out
(x, /forget) two dozen turns about it in the same words, then a real `jarvis-tui` run: the
model's search_history, recall for a question, and `jarvis-tui search`. Each must bring back the
kept turn and nothing taken out; the model's tool result and every request are read as the fake
server got them.
"""

from __future__ import annotations

import json
from pathlib import Path

from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HISTORY_TOOL
from tests import fake_tools as ft
from tests.excluded_turns import KEPT, QUERY, QUESTION, leaked, store_session
from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line


def _session(t: Trial) -> int:
    t.db.parent.mkdir(parents=True, exist_ok=True)
    with Store(t.db) as store:
        return store_session(store).conversation_id


def _nothing_taken_out_sent(t: Trial, fake: FakeProvider) -> None:
    sent = leaked("\n".join(json.dumps(r.body, ensure_ascii=False) for r in fake.chat_requests))
    t.expect(not sent, f"requests carried {len(sent)} taken-out figures, e.g. {sent[:3]}")


def search_history_after_turns_taken_out(tmp: Path) -> ProcOutcome:
    """The model calls search_history for the fact: the result sent back holds the kept turn
    and none of the taken-out ones."""
    t = Trial(6, "search_history after turns were taken out", tmp, issue=39)
    cid = _session(t)
    ask_text = f"Look it up please.\ncall {HISTORY_TOOL} " + json.dumps({"query": QUERY})
    with FakeProvider(limit=16_000) as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "--session", str(cid),
                    ask_text)
        results = [m.get("content") or "" for r in fake.chat_requests
                   for m in r.body["messages"] if m.get("role") == "tool"]
        _nothing_taken_out_sent(t, fake)
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    if t.expect(results, "the model's search was never answered"):
        t.expect(KEPT in results[-1], f"the kept turn was not found: {one_line(results[-1])}")
        t.expect(not leaked(results[-1]), f"the result holds {leaked(results[-1])[:3]}")
    t.expect(not leaked(ask.stdout), "ask printed taken-out turns")
    t.keeps([ask_text], cid)
    return t.outcome("the kept turn found, nothing taken out")


def recall_after_turns_taken_out(tmp: Path) -> ProcOutcome:
    """A question about the fact: the request recalls the kept turn and nothing taken out."""
    t = Trial(6, "recall after turns were taken out", tmp, issue=39)
    cid = _session(t)
    with FakeProvider(limit=16_000) as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "--session", str(cid),
                    QUESTION)
        last = fake.chat_requests[-1].body["messages"] if fake.chat_requests else []
        _nothing_taken_out_sent(t, fake)
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect(any(KEPT in (m.get("content") or "") for m in last),
             "the request did not recall the kept turn")
    t.keeps([QUESTION], cid)
    return t.outcome("the kept turn recalled, nothing taken out")


def search_after_turns_taken_out(tmp: Path) -> ProcOutcome:
    """`jarvis-tui search` (the user's own search, as /recall lists it): the kept turn first,
    no turn taken out (see the report of issue 39: hidden, as `search --all` hides them)."""
    t = Trial(6, "search after turns were taken out", tmp, issue=39)
    _session(t)
    found = [t.run("search", QUERY), t.run("search", "--limit", "1", QUERY),
             t.run("search", "--all", QUERY)]
    for proc in found:
        said = " ".join(proc.args[-3:])
        t.expect(proc.returncode == 0, f"{said}: exit {proc.returncode}")
        t.expect("9052" in proc.stdout, f"{said}: the kept turn was not listed")
        t.expect(not leaked(proc.stdout), f"{said}: listed {len(leaked(proc.stdout))} "
                                          f"taken-out figures, e.g. {leaked(proc.stdout)[:3]}")
    return t.outcome("the kept turn listed, nothing taken out")


LIMIT_LINE = ('Error: search_history was not run: "limit" must be a whole number from 1 to 10, '
              "not ")
BAD_LIMITS = [  # (the "limit" as the model writes it in JSON, what the line ends with)
    ('"²"', "a string"), ('"٣"', "a string"), ('"' + "9" * 5000 + '"', "a string"),
    ("2.5", "2.5"), ("true", "a boolean"), ("-3", "-3"), ("1" + "0" * 30, "a number"),
    ("[3]", "a list"),
]
DIGITS_LINE = ("Error: the arguments for search_history could not be read: a number in the "
               "arguments has over 4,300 digits: write numbers of a few digits")


def bad_limits_to_search_history(tmp: Path) -> ProcOutcome:
    """One reply calling search_history once per bad limit: every result is its one line."""
    t = Trial(8, "search_history with limit \"²\", 5,000 digits and others", tmp, issue=39)
    cid = _session(t)
    calls = [f'call {HISTORY_TOOL} {{"query": "{QUERY}", "limit": {limit}}}'
             for limit, _ in BAD_LIMITS]
    calls.append(f'call {HISTORY_TOOL} {{"query": "{QUERY}", "limit": {"9" * 5000}}}')
    ask_text = "Look it up, however you like.\n" + "\n".join(calls)
    with FakeProvider(limit=64_000) as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "--session", str(cid),
                    ask_text)
        last = fake.chat_requests[-1].body["messages"] if fake.chat_requests else []
    results = [m.get("content") or "" for m in last if m.get("role") == "tool"]
    wanted = [LIMIT_LINE + said for _, said in BAD_LIMITS] + [DIGITS_LINE]
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    if t.expect(len(results) == len(wanted), f"{len(results)} results of {len(wanted)} calls"):
        for (limit, _), got, want in zip([*BAD_LIMITS, ("9" * 5000, "")], results, wanted,
                                         strict=True):
            t.expect(got == want, f"limit {limit[:12]}: {one_line(got)[:110]}")
    t.keeps([ask_text], cid)
    return t.outcome(f"{len(results)} calls, each answered with its one line")


DEPTH = 100_000
DEEP = '{"query": ' + "[" * DEPTH + "]" * DEPTH + "}"  # valid JSON, past Python's stack
DEEP_LINE = ("the arguments for search_history could not be read: the arguments are nested too "
             "deep (thousands of brackets)")
LOOK_UP = "Look the harbour gate code up, please."
AGAIN = "And once more: what is the harbour gate code?"
BIG = 1_000_000  # a window the 200,000 brackets fit in: no server refuses them for size


def _flags(fake: FakeProvider | FakeAnthropic | FakeOllama) -> tuple[str, ...]:
    if isinstance(fake, FakeAnthropic):
        return ("--provider", "anthropic", "--base-url", fake.base_url, "--api-key",
                "sk-ant-test", "--model", "claude-fake")
    if isinstance(fake, FakeOllama):
        return ("--provider", "ollama", "--base-url", fake.base_url, "--model", "llama3.2")
    return ("--base-url", fake.base_url, "--model", "m")


def _deep_call_made(t: Trial, fake: FakeProvider | FakeAnthropic, cid: int) -> None:
    """The model calls search_history nested 100,000 deep: ask says why in one line, and the
    model is told the same."""
    fake.script.append([{"name": HISTORY_TOOL, "arguments": DEEP}])
    ask = t.run(*_flags(fake), "ask", "--session", str(cid), LOOK_UP, timeout=120)
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect(f"✗ {HISTORY_TOOL} failed: {DEEP_LINE}" in ask.stderr,
             f"not the one line: {one_line(ask.stderr)}")
    sent = fake.message_requests if isinstance(fake, FakeAnthropic) else fake.chat_requests
    view = ft.anthropic_view if isinstance(fake, FakeAnthropic) else ft.openai_view
    results = view(sent[-1].body["messages"])[1] if sent else []
    t.expect(results == [f"Error: {DEEP_LINE}"], f"the model was told {str(results)[:100]}")


def _answered(t: Trial, ask: Proc) -> None:
    t.expect(ask.returncode == 0 and ask.stdout.startswith("Reply "),
             f"the next turn: exit {ask.returncode}: {one_line(ask.stderr)}")


def deep_call_over(protocol: str) -> ProcCase:
    name = f"search_history nested 100,000 deep, over {protocol}"

    def run(tmp: Path) -> ProcOutcome:
        t = Trial(8, name, tmp, issue=39)
        cid = _session(t)
        fake = FakeAnthropic(limit=BIG) if protocol == "Anthropic" else FakeProvider(limit=BIG)
        with fake:
            _deep_call_made(t, fake, cid)
            _answered(t, t.run(*_flags(fake), "ask", "--session", str(cid), AGAIN,
                               timeout=120))
        t.keeps([LOOK_UP, AGAIN], cid)
        return t.outcome(f"{DEEP_LINE[:60]}…; the next turn answered")
    return ProcCase(8, name, run, issue=39)


OLLAMA_LINE = "sent a tool call that could not be read: the arguments are nested too deep"


def deep_call_over_ollama(tmp: Path) -> ProcOutcome:
    """The call made over an OpenAI-compatible server (stored as the text it came as) is put
    on Ollama's wire again when the session moves there, with a window that holds it. Then
    Ollama's own: it sends arguments as an object, so its line is what nests 100,000 deep, and
    the round ends saying so in one line."""
    t = Trial(8, "search_history nested 100,000 deep, over Ollama", tmp, issue=39)
    cid = _session(t)
    t.write_config(f"context_window = {BIG // 2}\n")  # the call's 100,000 tokens are sent whole
    with FakeOllama(default_num_ctx=BIG, context_length=BIG, modelfile_num_ctx=BIG) as ollama:
        flags = _flags(ollama)
        with FakeProvider(limit=BIG) as openai:
            _deep_call_made(t, openai, cid)
        _answered(t, t.run(*flags, "ask", "--session", str(cid), QUESTION, timeout=120))
        resent = [m for r in ollama.chat_requests for m in r.body["messages"]
                  if m.get("tool_calls")]
        t.expect(resent, "the call was not sent to Ollama again")
        ollama.script.append([{"name": HISTORY_TOOL, "arguments": DEEP}])
        ask = t.run(*flags, "ask", "--session", str(cid), LOOK_UP, timeout=120)
        t.expect(ask.returncode == 1 and OLLAMA_LINE in one_line(ask.stderr),
                 f"exit {ask.returncode}: {one_line(ask.stderr)}")
        _answered(t, t.run(*flags, "ask", "--session", str(cid), AGAIN, timeout=120))
    t.keeps([LOOK_UP, QUESTION, AGAIN], cid)
    return t.outcome(f"{OLLAMA_LINE[:60]}…; the session goes on over Ollama")


CASES: list[ProcCase] = [
    ProcCase(6, "search_history after turns were taken out",
             search_history_after_turns_taken_out, issue=39),
    ProcCase(6, "recall after turns were taken out", recall_after_turns_taken_out, issue=39),
    ProcCase(6, "search after turns were taken out", search_after_turns_taken_out, issue=39),
    ProcCase(8, "search_history with limit \"²\", 5,000 digits and others",
             bad_limits_to_search_history, issue=39),
    deep_call_over("OpenAI"),
    deep_call_over("Anthropic"),
    ProcCase(8, "search_history nested 100,000 deep, over Ollama", deep_call_over_ollama,
             issue=39),
]
