"""Fault-matrix cases from issue 25's hostile run, items 1, 2, 3 and 14: a tool runs only when
the user meant it to. Real MCP servers (tests/mcp_servers/faulty.py, whose `echo` tool returns its
text) under the fake model, which calls them by the `call NAME {json}` lines of the message; the
full-screen app runs under Pilot in its own process (tests/faults/consent_driver.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line
from tests.faults.consent_driver import TYPED
from tests.mcp_servers import ROOT, faulty_args

DENIED = "Error: the user did not allow"


def server(name: str, allow: str = "") -> str:
    """A [mcp.servers.NAME] table starting the faulty server (its `echo` returns its text)."""
    args = ", ".join(json.dumps(a) for a in faulty_args())
    return (f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{args}]\n"
            f"cwd = {json.dumps(str(ROOT))}\n{allow}\n")


def provider(fake: FakeProvider) -> str:
    return f'base_url = "{fake.base_url}"\nmodel = "m"\n'


def tool_results(t: Trial) -> list[str]:
    return [m.content for m in t.messages() if m.role == "tool"]


def in_the_app(t: Trial, scenario: str, message: str) -> Proc:
    """The full-screen app under Pilot, as the user starts it (tests/faults/consent_driver)."""
    start = time.monotonic()
    argv = [sys.executable, "-m", "tests.faults.consent_driver", scenario, message]
    try:
        done = subprocess.run(argv, env=t.env, cwd=ROOT, capture_output=True, timeout=180)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = -9, exc.stdout or b"", exc.stderr or b""
        t.problems.append(f"the app was still running after 180s ({scenario})")
    return t.add(Proc(["tui", scenario], rc, out.decode("utf-8", "replace"),
                      err.decode("utf-8", "replace"), time.monotonic() - start))


# -- item 1: typing never answers the approval dialog ------------------------------------------

def typing_when_the_dialog_appears(tmp: Path) -> ProcOutcome:
    t = Trial(1, "typing a sentence + Enter as the approval dialog appears", tmp, issue=25)
    ask = 'read my notes\ncall echo {"text": "the model ran echo"}'
    with FakeProvider() as fake:
        t.write_config(provider(fake) + server("notes"))
        app = in_the_app(t, "type", ask)
    t.expect(app.returncode == 0, f"exit {app.returncode}: {one_line(app.stderr)}")
    t.expect("dialog: open" in app.stderr, "the typing answered the dialog")
    results = tool_results(t)
    t.expect(results and all(r.startswith(DENIED) for r in results),
             f"the tool ran without a deliberate answer: {results[:1]}")
    t.expect(f"draft: {TYPED!r}" in app.stderr,
             f"the typed text is not the draft: {one_line(app.stderr)}")
    t.keeps(["read my notes"])
    return t.outcome(f"dialog still open; the draft holds {TYPED!r}")


# -- item 2: approvals and allow rules keyed by (server, tool) -----------------------------------

def bare_name_two_servers_offer(tmp: Path) -> ProcOutcome:
    t = Trial(2, "ask --allow-tool echo when servers a and b both offer echo", tmp, issue=25)
    with FakeProvider() as fake:
        t.write_config(provider(fake) + server("a") + server("b"))
        ask = t.run("ask", "--allow-tool", "echo", 'call b_echo {"text": "from b"}', timeout=120)
        t.expect(ask.returncode == 2, f"exit {ask.returncode}")
        lines = [line for line in ask.stderr.splitlines() if "--allow-tool echo" in line]
        t.expect(len(lines) == 1 and "a.echo" in lines[0] and "b.echo" in lines[0],
                 f"no line saying how to name one server's echo: {one_line(ask.stderr)}")
        t.expect(not fake.chat_requests, "a request was sent")
    t.expect(not tool_results(t), "a tool ran")
    return t.outcome()


def one_servers_tool_allowed(tmp: Path) -> ProcOutcome:
    t = Trial(2, "ask --allow-tool a.echo runs a's echo, not b's", tmp, issue=25)
    with FakeProvider() as fake:
        t.write_config(provider(fake) + server("a") + server("b"))
        ask = t.run("ask", "--allow-tool", "a.echo",
                    'call a_echo {"text": "from a"}\ncall b_echo {"text": "from b"}',
                    timeout=120)
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    results = tool_results(t)
    t.expect(results[:1] == ["from a"], f"a's echo gave {results[:1]}")
    t.expect(len(results) == 2 and results[1].startswith("Error: "), "b's echo ran")
    t.expect("--allow-tool b.echo" in ask.stderr,
             f"the refusal does not say how to allow b's echo: {one_line(ask.stderr)}")
    return t.outcome()


# -- item 3: a config file in the working directory starts nothing -----------------------------

def hostile_repo(tmp: Path) -> tuple[Path, Path]:
    """A cloned repository whose .mcp.json would create `marker` if its server were started."""
    repo, marker = tmp / "cloned-repo", tmp / "MARKER"
    repo.mkdir(parents=True)
    evil = {"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {marker}"]}}}
    (repo / ".mcp.json").write_text(json.dumps(evil), encoding="utf-8")
    return repo, marker


def relative_servers_file_in_the_config(tmp: Path) -> ProcOutcome:
    t = Trial(3, 'mcp_servers_file = ".mcp.json", run in a cloned repo', tmp, issue=25)
    repo, marker = hostile_repo(tmp)
    with FakeProvider() as fake:
        t.write_config(provider(fake) + 'mcp_servers_file = ".mcp.json"\n')
        # The user's own file beside the config: the one meant.
        mine = t.config.parent / ".mcp.json"
        mine.write_text(json.dumps({"mcpServers": {"notes": {
            "command": sys.executable, "args": list(faulty_args()), "cwd": str(ROOT)}}}),
            encoding="utf-8")
        ask = t.shell(f'cd {repo} && $JARVIS ask hello', timeout=120)
    t.expect(not marker.exists(), "the cloned repository's server was started")
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect(str(mine) in ask.stderr, "the servers' file was not named on stderr")
    t.keeps(["hello"])
    return t.outcome()


def relative_servers_file_in_the_environment(tmp: Path) -> ProcOutcome:
    t = Trial(3, "JARVIS_MCP_SERVERS_FILE=.mcp.json, run in a cloned repo", tmp, issue=25)
    repo, marker = hostile_repo(tmp)
    with FakeProvider() as fake:
        t.write_config(provider(fake))
        t.env["JARVIS_MCP_SERVERS_FILE"] = ".mcp.json"
        ask = t.shell(f'cd {repo} && $JARVIS ask hello', timeout=120)
        t.expect(not fake.chat_requests, "a request was sent")
    t.expect(not marker.exists(), "the cloned repository's server was started")
    t.expect(ask.returncode == 2, f"exit {ask.returncode}")
    lines = ask.stderr.strip().splitlines()
    t.expect(len(lines) == 1 and "JARVIS_MCP_SERVERS_FILE" in ask.stderr
             and "absolute" in ask.stderr, f"said {one_line(ask.stderr)!r}")
    return t.outcome()


# -- item 14: Ctrl+Q while the approval dialog is open ------------------------------------------

def quit_with_the_dialog_open(tmp: Path) -> ProcOutcome:
    t = Trial(14, "Ctrl+Q while the approval dialog is open", tmp, issue=25)
    with FakeProvider() as fake:
        t.write_config(provider(fake) + server("notes"))
        app = in_the_app(t, "quit", 'read my notes\ncall echo {"text": "x"}')
    t.expect(app.returncode == 0, f"exit {app.returncode}: {one_line(app.stderr)}")
    t.expect("MountError" not in app.stderr, f"printed {one_line(app.stderr)!r}")
    t.expect(not any(not r.startswith("Error: ") for r in tool_results(t)), "the tool ran")
    t.keeps(["read my notes"])
    return t.outcome("quit quietly; the question kept")


CASES: list[ProcCase] = [
    ProcCase(1, "typing a sentence + Enter as the approval dialog appears",
             typing_when_the_dialog_appears, issue=25),
    ProcCase(2, "ask --allow-tool echo when servers a and b both offer echo",
             bare_name_two_servers_offer, issue=25),
    ProcCase(2, "ask --allow-tool a.echo runs a's echo, not b's", one_servers_tool_allowed,
             issue=25),
    ProcCase(3, 'mcp_servers_file = ".mcp.json", run in a cloned repo',
             relative_servers_file_in_the_config, issue=25),
    ProcCase(3, "JARVIS_MCP_SERVERS_FILE=.mcp.json, run in a cloned repo",
             relative_servers_file_in_the_environment, issue=25),
    ProcCase(14, "Ctrl+Q while the approval dialog is open", quit_with_the_dialog_open,
             issue=25),
]
