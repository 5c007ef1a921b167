"""Fault-matrix cases from issue 25's hostile run, items 10 and 11: one bad tool schema, an
overflow a proxy turns into silence."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from jarvis_tui.core.store.store import Store
from tests.fake_anthropic import FakeAnthropic
from tests.fakeserver import FakeProvider, FakeServer
from tests.faults import Proc, ProcCase, ProcOutcome, Trial
from tests.mcp_servers import ROOT

# --- 10: one bad tool schema -------------------------------------------------------------------

ECHOED = "the parrot says hello"
ASK_ECHO = f'Say it back, please.\ncall echo {{"text": "{ECHOED}"}}'
# What the SDK's refusal looked like before: pydantic's multi-line dump, squeezed onto one line.
DUMP_MARKS = ("validation error", "errors.pydantic.dev", "ListToolsResult", "input_value=")


def _raw_server(mode: str) -> str:
    """A config with the hand-written MCP server in `mode`, its good tool `echo` allowed."""
    return (f"[mcp.servers.raw]\ncommand = {json.dumps(sys.executable)}\n"
            f'args = ["-m", "tests.mcp_servers.raw_tools", "{mode}"]\n'
            f'cwd = {json.dumps(str(ROOT))}\nallow = ["echo"]\n')


def _echo_answered(t: Trial, ask: Proc, requests: int) -> None:
    """The good tool ran and the model read its result; the round ended well, kept whole."""
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {ask.stderr.strip()[-160:]!r}")
    t.expect("Read 1 tool result" in ask.stdout, f"no tool result read: {ask.stdout[-100:]!r}")
    t.expect(requests <= 4, f"{requests} chat requests for one tool step")
    printed = ask.stdout + ask.stderr
    for mark in DUMP_MARKS:
        t.expect(mark not in printed, f"a raw schema dump was printed ({mark!r})")
    t.keeps([ASK_ECHO, ECHOED])


def _sdk_refused(tmp: Path) -> ProcOutcome:
    """Two tools the SDK refuses (no inputSchema; a root schema of type "nonsense") beside a
    good one: the good one is offered and runs, each bad one is one line naming it."""
    t = Trial(10, "a tool the MCP SDK refuses, beside a good one", tmp, issue=25)
    t.write_config(_raw_server("sdk_refused"))
    with FakeProvider(limit=100_000) as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", ASK_ECHO, timeout=90)
        offered = [[tool["function"]["name"] for tool in r.body.get("tools") or []]
                   for r in fake.chat_requests]
    _echo_answered(t, ask, len(offered))
    t.expect(offered and offered[0] == ["echo"], f"tools offered: {offered}")
    for bad in ("no_schema", "nonsense_root"):
        said = [line for line in ask.stderr.splitlines() if bad in line]
        t.expect(len(said) == 1 and "left out" in said[0],
                 f"{bad}: not one line saying it was left out: {said}")
    lines = [line for line in ask.stderr.splitlines() if "left out" in line]
    return t.outcome("; ".join(lines)[:160])


def _provider_refused(name: str, serve: Callable[[], FakeServer], *flags: str) -> ProcCase:
    """A tool the SDK takes but the provider refuses (a property of type "nonsense"): the
    request goes again without it, saying so, and the good tool still runs."""
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(10, name, tmp, issue=25)
        t.write_config(_raw_server("provider_refused"))
        with serve() as fake:
            key = {"ANTHROPIC_API_KEY": "sk-ant-fake-key-1"} if "anthropic" in flags else {}
            ask = t.run("--base-url", fake.base_url, "--model", "m", *flags, "ask", ASK_ECHO,
                        timeout=90, env={**t.env, **key})
            statuses = [r.status for r in fake.requests if r.path.rstrip("/").endswith(
                ("/chat/completions", "/v1/messages"))]
        _echo_answered(t, ask, len(statuses))
        said = [line for line in ask.stderr.splitlines() if "nonsense_inside" in line]
        t.expect(len(said) == 1 and "without it" in said[0],
                 f"not one line saying nonsense_inside is left out: {said}")
        t.expect(statuses.count(400) == 1, f"statuses {statuses}: the refusal was not once")
        return t.outcome(said[0][:160] if said else "")
    return ProcCase(10, name, run, issue=25)


CASES: list[ProcCase] = [
    ProcCase(10, "a tool the MCP SDK refuses, beside a good one", _sdk_refused, issue=25),
    _provider_refused("a schema OpenAI refuses (names the function)",
                      lambda: FakeProvider(limit=100_000, flavor="openai")),
    _provider_refused("a schema llama.cpp refuses (quotes the schema)",
                      lambda: FakeProvider(limit=100_000, flavor="llamacpp")),
    _provider_refused("a schema Anthropic refuses (names the place)",
                      lambda: FakeAnthropic(limit=100_000), "--provider", "anthropic"),
]


# --- 11: an overflow a proxy turns into silence --------------------------------------------------

DATA = ROOT / "bench" / "data"
PROXY_WINDOW = 2048  # the real server's n_ctx, behind the proxy
TOLD_WINDOW = 8192  # what jarvis-tui was told (the proxy does not say)
TURNS = 9


def turn_texts(turns: int = TURNS) -> list[str]:
    """Turns of prose and code pastes, each several hundred tokens: a few fill the window."""
    prose = (DATA / "english.txt").read_text(encoding="utf-8")
    code = (DATA / "code.txt").read_text(encoding="utf-8")
    out = []
    for n in range(turns):
        words = prose[n * 1100:(n + 1) * 1100]
        paste = code[n * 900:(n + 1) * 900]
        out.append(f"Turn {n + 1}: what do you make of this?\n{words}\n```python\n{paste}\n```")
    return out


def _proxy_silence(tmp: Path) -> ProcOutcome:
    """LiteLLM in front of llama-cpp-python: a streamed request over the real window is a 200
    with one empty chunk that stopped. Every turn must be answered, compacting on the way."""
    t = Trial(11, "an overflow behind a LiteLLM proxy (an empty reply)", tmp, issue=25)
    t.write_config(f"context_window = {TOLD_WINDOW}\n")
    texts = turn_texts()
    answered = empty = 0
    with FakeProvider(limit=PROXY_WINDOW, flavor="litellm") as fake:
        for text in texts:
            ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", text, timeout=90)
            ok = ask.returncode == 0 and ask.stdout.strip().startswith("Reply ")
            answered += ok
            empty += "empty reply" in ask.stderr
            t.expect(ok, f"turn not answered (exit {ask.returncode}): "
                         f"{ask.stderr.strip()[-120:]!r}")
        overflowed = sum(r.overflowed for r in fake.chat_requests)
    summaries = 0
    if t.db.exists():
        with Store(t.db) as store:
            conv = store.latest_conversation()
            summaries = len(store.summaries(conv.id)) if conv else 0
    t.expect(summaries >= 1, "no summary was made")
    t.expect(empty == 0, f"{empty} turns told of an empty reply")
    t.keeps(texts)
    return t.outcome(f"{answered}/{len(texts)} answered, {summaries} summaries, "
                     f"{overflowed} requests over the window")


CASES.append(ProcCase(11, "an overflow behind a LiteLLM proxy (an empty reply)", _proxy_silence,
                      issue=25))
