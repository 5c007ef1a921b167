"""The MCP client against real servers: mcp-server-git on a repository made here, mcp-server-time,
and our faulty server (tests/mcp_servers/faulty.py) over stdio and streamable HTTP.

Starting a Python MCP server costs a couple of CPU-seconds (importing the SDK), so one hub with
all of them is started once for the module and shared; the tests that break a server either
bring it back or come last. The few that need a hub of their own say why.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_asyncio

from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.settings.mcp import McpServerConfig
from jarvis_tui.core.tools.mcp_client import McpHub, ServerStatus
from tests.mcp_servers import ROOT, faulty_args, make_git_repo, start_http_faulty, stop_process
from tests.mcp_servers.faulty import CRASH_CODE, MARKUP, START_EXIT_WHY, huge_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

PY = sys.executable


def stdio(name: str, *args: str, **kw: object) -> McpServerConfig:
    return McpServerConfig(name, "stdio", command=PY, args=args, cwd=str(ROOT), **kw)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_git_repo(tmp_path_factory.mktemp("mcp") / "repo")


@pytest.fixture(scope="module")
def http_server():
    proc, url = start_http_faulty()
    yield proc, url
    stop_process(proc)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(repo: Path, http_server):
    _, url = http_server
    changes: list[ServerStatus] = []
    servers = [
        stdio("git", "-m", "mcp_server_git", "--repository", str(repo)),
        stdio("time", "-m", "mcp_server_time", allow=("*",)),
        stdio("faulty", *faulty_args(), allow=("echo",)),
        # A second faulty server: every tool name collides, and its calls time out sooner.
        stdio("faulty2", *faulty_args(), timeout=1.0),
        McpServerConfig("web", "http", url=url),
        stdio("broken", *faulty_args("--start", "exit")),
        stdio("off", *faulty_args(), enabled=False),
    ]
    hub = McpHub(servers, default_timeout=30.0, start_timeout=60.0, on_change=changes.append)
    hub.changes = changes  # type: ignore[attr-defined]
    await hub.start()
    yield hub
    await hub.aclose()


def spec(hub: McpHub, server: str, tool: str) -> ToolSpec:
    return next(s for s in hub.specs() if s.server == server and s.tool == tool)


async def call(hub: McpHub, server: str, tool: str, **arguments: object):
    return await hub.run(ToolCall("c1", tool, json.dumps(arguments)), spec(hub, server, tool))


def status(hub: McpHub, name: str) -> ServerStatus:
    return next(s for s in hub.statuses() if s.name == name)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- starting -------------------------------------------------------------------------------------

async def test_every_enabled_server_starts_and_a_bad_one_fails_alone(hub: McpHub) -> None:
    states = {s.name: s.state for s in hub.statuses()}
    assert states == {"git": "ready", "time": "ready", "faulty": "ready", "faulty2": "ready",
                      "web": "ready", "broken": "failed", "off": "disabled"}
    broken = status(hub, "broken")
    assert broken.error == f"server broken exited (code 3): {START_EXIT_WHY}"
    assert broken.tools == () and broken.started_s is None
    git = status(hub, "git")
    assert git.transport == "stdio" and "mcp_server_git --repository" in git.detail
    assert git.started_s is not None and git.started_s > 0
    assert {t.tool for t in git.tools} >= {"git_status", "git_log", "git_diff_unstaged"}
    assert status(hub, "web").detail.startswith("http://127.0.0.1:")
    seen = [(c.name, c.state) for c in hub.changes]  # type: ignore[attr-defined]
    assert seen.index(("git", "starting")) < seen.index(("git", "ready"))
    assert ("broken", "failed") in seen and ("off", "starting") not in seen


async def test_the_process_is_known_so_exit_codes_and_kills_work(hub: McpHub) -> None:
    # The pid comes from inside the SDK's stdio_client; a new SDK version that moves it must
    # fail here, not quietly lose exit codes and the last-resort kill.
    for name in ("git", "time", "faulty"):
        proc = hub._servers[name].process
        assert proc is not None and alive(proc.pid) and proc.returncode is None
        # Each leads a process group of its own (the SDK's start_new_session), which is what
        # lets the hub end the children a server leaves behind without touching ours.
        assert hub._servers[name].group == proc.pid == os.getpgid(proc.pid) != os.getpgrp()


async def test_a_server_s_stderr_never_reaches_the_terminal(hub: McpHub, capfd) -> None:
    capfd.readouterr()
    assert (await call(hub, "faulty", "echo", text="hello")).text == "hello"  # logs to stderr
    assert capfd.readouterr() == ("", "")


# -- tools and their names ------------------------------------------------------------------------

async def test_a_tool_two_servers_offer_is_named_after_its_server(hub: McpHub) -> None:
    names = {(s.server, s.tool): s.name for s in hub.specs()}
    assert names[("faulty", "echo")] == "faulty_echo"
    assert names[("faulty2", "echo")] == "faulty2_echo"
    assert names[("web", "echo")] == "web_echo"
    assert names[("time", "get_current_time")] == "get_current_time"
    assert names[("git", "git_log")] == "git_log"
    assert len(set(names.values())) == len(names)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in names.values())
    git_log = spec(hub, "git", "git_log")
    assert git_log.description and git_log.parameters["type"] == "object"
    assert "max_count" in git_log.parameters["properties"]


async def test_allow_lists(hub: McpHub) -> None:
    assert hub.allowed(spec(hub, "faulty", "echo"))
    assert not hub.allowed(spec(hub, "faulty", "crash"))
    assert hub.allowed(spec(hub, "time", "get_current_time"))
    assert not hub.allowed(spec(hub, "git", "git_status"))


# -- real servers ---------------------------------------------------------------------------------

async def test_git_tools_answer_in_text(hub: McpHub, repo: Path) -> None:
    log = await call(hub, "git", "git_log", repo_path=str(repo), max_count=40)
    assert not log.is_error
    assert "Revision 40: rework functions" in log.text and "Revision 1:" in log.text
    assert len(log.text) > 8_000  # several thousand tokens, whole
    state = await call(hub, "git", "git_status", repo_path=str(repo))
    assert "module.py" in state.text and not state.is_error
    diff = await call(hub, "git", "git_diff_unstaged", repo_path=str(repo))
    assert diff.text.count("return -x *") == 320 and len(diff.text) > 30_000
    older = await call(hub, "git", "git_diff", repo_path=str(repo), target="HEAD~3")
    assert "revision 37" in older.text and not older.is_error
    assert diff.meta["server"] == "git" and diff.meta["seconds"] >= 0


async def test_time_server(hub: McpHub) -> None:
    result = await call(hub, "time", "get_current_time", timezone="UTC")
    assert not result.is_error
    assert json.loads(result.text)["timezone"] == "UTC"


# -- what comes back ------------------------------------------------------------------------------

@pytest.mark.parametrize("server", ["faulty", "web"])
async def test_huge_output_arrives_whole(hub: McpHub, server: str) -> None:
    kb = 600 if server == "faulty" else 300  # one SSE event holds at most 1 MiB
    result = await call(hub, server, "huge", kb=kb)
    assert result.text == huge_text(kb)
    assert result.text.startswith("line 00001: the quick") and "敏捷的棕色狐狸" in result.text


@pytest.mark.parametrize("server", ["faulty", "web"])
async def test_markup_and_escapes_come_back_as_they_were(hub: McpHub, server: str) -> None:
    result = await call(hub, server, "markup")
    assert result.text == MARKUP and not result.is_error


async def test_each_kind_of_content_becomes_a_line(hub: McpHub) -> None:
    result = await call(hub, "faulty", "mixed")
    assert result.text.splitlines() == [
        "first", "[image image/png, 70 bytes]", "[audio audio/wav, 1,000 bytes]", "the notes",
        "[resource file:///a.bin, application/octet-stream, 5 bytes]", "[link file:///big.log]",
        "last"]
    assert result.meta["content"][:3] == ["text", "image", "audio"]
    structured = await call(hub, "faulty", "structured")
    assert json.loads(structured.text) == {"answer": 42, "名": "值"}


async def test_nul_characters_are_dropped(hub: McpHub) -> None:
    assert (await call(hub, "faulty", "dirty")).text == "beforeafter"


async def test_a_tool_s_own_error_is_an_error_result(hub: McpHub) -> None:
    result = await call(hub, "web", "fail")
    assert result.is_error and result.text == "it failed on purpose"


async def test_bad_arguments_never_reach_the_server(hub: McpHub) -> None:
    echo = spec(hub, "faulty", "echo")
    result = await hub.run(ToolCall("c", echo.name, '{"text": "unterminated'), echo)
    assert result.is_error and "not valid JSON" in result.text
    result = await hub.run(ToolCall("c", echo.name, "[1, 2]"), echo)
    assert result.is_error and "JSON object" in result.text


async def test_arguments_the_server_refuses_are_an_error_result(hub: McpHub) -> None:
    result = await hub.run(ToolCall("c", "faulty_echo", '{"txt": 1}'), spec(hub, "faulty", "echo"))
    assert result.is_error and "text" in result.text
    assert status(hub, "faulty").state == "ready"


# -- slow, cancelled, crashed ---------------------------------------------------------------------

# No stopwatch in these: a tool that would take an hour, or a server that never answers, can
# only end by what the test is about (the timeout, the cancel, the kill); if that breaks, the
# test hangs until pytest-timeout fails it, and a loaded machine cannot make it flake.
HOUR = 3600


async def test_a_call_past_its_timeout_is_an_error_and_the_server_stays(hub: McpHub) -> None:
    result = await call(hub, "faulty2", "slow", seconds=HOUR)  # returns: the timeout ended it
    assert result.is_error and result.text == "faulty2_slow did not finish within 1 s"
    assert (await call(hub, "faulty2", "echo", text="still here")).text == "still here"


@pytest.mark.parametrize("server", ["faulty", "web"])
async def test_a_cancelled_call_leaves_the_server_usable(hub: McpHub, server: str) -> None:
    task = asyncio.create_task(call(hub, server, "slow", seconds=HOUR))
    await asyncio.sleep(0.3)  # the call on its way (the test holds whether it arrived or not)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task  # ends: the cancel, not the hour-long tool, ended the call
    assert (await call(hub, server, "echo", text="next")).text == "next"
    assert (await call(hub, server, "slow", seconds=0.05)).text == "slept 0.05 s"
    assert status(hub, server).state == "ready"


async def test_a_server_that_dies_mid_call_fails_alone_and_can_start_again(hub: McpHub) -> None:
    pid = hub._servers["faulty2"].process.pid
    result = await call(hub, "faulty2", "crash")
    assert result.is_error
    assert result.text == f"server faulty2 stopped: exited (code {CRASH_CODE}): faulty: " \
                          "crashing on purpose"
    failed = status(hub, "faulty2")
    assert failed.state == "failed" and failed.error == \
        f"server faulty2 exited (code {CRASH_CODE}): faulty: crashing on purpose"
    assert all(s.server != "faulty2" for s in hub.specs())
    assert not alive(pid)
    stale = ToolSpec("faulty2_echo", "", {}, server="faulty2", tool="echo")
    refused = await hub.run(ToolCall("c", "faulty2_echo", '{"text": "x"}'), stale)
    assert refused.is_error and refused.text.startswith("server faulty2 is not running (failed")
    assert status(hub, "faulty").state == "ready"

    [again] = await hub.start(["faulty2"])
    assert again.state == "ready"
    assert (await call(hub, "faulty2", "echo", text="back")).text == "back"


async def test_an_http_server_that_dies_mid_call_fails_alone(hub: McpHub, http_server) -> None:
    # Last but one: the module's HTTP server is gone after it.
    result = await call(hub, "web", "crash")
    assert result.is_error and result.text.startswith("server web stopped: ")
    assert status(hub, "web").state == "failed"
    assert all(s.server != "web" for s in hub.specs())
    http_server[0].wait(5)
    assert (await call(hub, "faulty", "echo", text="fine")).text == "fine"


async def test_aclose_ends_every_server_process_and_task(hub: McpHub) -> None:
    pids = [srv.process.pid for srv in hub._servers.values()
            if srv.process is not None and srv.process.returncode is None]
    assert len(pids) >= 4
    tasks = [srv.task for srv in hub._servers.values() if srv.task is not None]
    await hub.aclose()
    assert [pid for pid in pids if alive(pid)] == []
    assert all(task.done() for task in tasks)
    assert {s.state for s in hub.statuses()} <= {"stopped", "failed", "disabled"}
    assert hub.specs() == []


# -- hubs of their own ----------------------------------------------------------------------------

async def test_a_server_that_never_answers_fails_after_the_start_timeout() -> None:
    # The hang mode never imports the SDK, so this costs the timeout and little more.
    hub = McpHub([stdio("mute", *faulty_args("--start", "hang")),
                  stdio("gone", *faulty_args(), env={"FAULTY_START": "exit"})],
                 start_timeout=1.0)
    mute, gone = await hub.start()  # returns: the mute one never answers, the timeout ends it
    assert mute.state == "failed" and mute.error == "server mute did not answer within 1 s"
    assert gone.error == f"server gone exited (code 3): {START_EXIT_WHY}"
    await hub.aclose()
    assert hub._servers["mute"].process.returncode is not None


async def test_a_missing_program_or_address_is_a_failed_status() -> None:
    hub = McpHub([McpServerConfig("nope", "stdio", command="/nonexistent/mcp-server"),
                  McpServerConfig("nowhere", "http", url="http://127.0.0.1:9/mcp")],
                 start_timeout=5.0)
    nope, nowhere = await hub.start()
    assert nope.error == ("server nope could not start '/nonexistent/mcp-server': No such file "
                          "or directory")
    assert nowhere.state == "failed" and nowhere.error.startswith("server nowhere ")
    await hub.aclose()


CLEAN_EXIT = textwrap.dedent("""
    import asyncio, sys
    from jarvis_tui.core.tools.mcp_client import McpHub
    from jarvis_tui.core.settings.mcp import McpServerConfig
    from jarvis_tui.core.calls.specs import ToolCall

    async def main():
        hub = McpHub([McpServerConfig("f", "stdio", command=sys.executable,
                                      args=("-m", "tests.mcp_servers.faulty"))])
        await asyncio.gather(hub.ensure_started(), hub.ensure_started())
        await hub.ensure_started()
        [slow] = [s for s in hub.specs() if s.tool == "slow"]
        task = asyncio.create_task(hub.run(ToolCall("1", "slow", '{"seconds": 30}'), slow))
        await asyncio.sleep(0.2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        # Leave one call running: aclose must end it too.
        running = asyncio.create_task(hub.run(ToolCall("2", "slow", '{"seconds": 30}'), slow))
        await asyncio.sleep(0.2)
        await hub.aclose()
        print([s.state for s in hub.statuses()])
        print((await running).text)

    asyncio.run(main())
""")


async def test_a_program_using_the_hub_exits_cleanly_with_nothing_on_stderr() -> None:
    """No "Task was destroyed but it is pending", no cancel-scope errors, no unclosed
    transports, nothing from the server: stderr of the whole program stays empty."""
    done = await asyncio.to_thread(
        subprocess.run, [PY, "-W", "error::ResourceWarning", "-c", CLEAN_EXIT],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stderr == ""
    assert done.stdout.splitlines() == ["['stopped']", "server f was stopped during the call"]
    assert done.returncode == 0


async def test_a_server_s_result_hides_every_server_s_secrets() -> None:
    """A token given to server a, echoed by server b (a shared token file, a wrapper that prints
    its environment), is hidden in b's result too."""
    token = "a-token-9f8e7d6c5b4a39281706"
    hub = McpHub([stdio("a", *faulty_args(), env={"SECRET_TOKEN": token}),
                  stdio("b", *faulty_args())])
    try:
        await hub.start()
        result = await call(hub, "b", "echo", text=f"found {token} in ~/.netrc")
    finally:
        await hub.aclose()
    assert token not in result.text and "found *** in" in result.text


async def test_a_tool_the_sdk_refuses_is_left_out_by_name_and_the_rest_are_offered() -> None:
    """The SDK checks a listing whole: one tool without an inputSchema, or with a root schema
    that is not an object, failed the whole server with pydantic's dump. Left out alone now."""
    async with McpHub([stdio("raw", "-m", "tests.mcp_servers.raw_tools", "sdk_refused")]) as hub:
        (status,) = await hub.start()
        assert status.state == "ready", status.error
        assert [s.name for s in hub.specs()] == ["echo"]
        names = [name for name, _ in status.left_out]
        assert names == ["'no_schema'", "'nonsense_root'"]
        for _, why in status.left_out:
            assert "\n" not in why and "pydantic" not in why and len(why) < 200
        assert "inputSchema.type" in status.left_out[1][1]
        echo = hub.specs()[0]
        result = await hub.run(ToolCall("c1", "echo", '{"text": "still here"}'), echo)
        assert (result.text, result.is_error) == ("still here", False)
