"""`ask` with tools, as a user runs it: a real process, a config naming real MCP servers from
the package registry (time, git), and the fake model calling them by the directive in the
message ("call NAME {json}")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.test_cli import flags, run
from tests.mcp_servers import ROOT, faulty_args, make_git_repo


def write_config(home: dict[str, str], servers: str) -> None:
    path = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(servers, encoding="utf-8")


def server(name: str, *args: str, allow: str = "") -> str:
    quoted = ", ".join(json.dumps(a) for a in args)
    return (f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{quoted}]\n"
            f"cwd = {json.dumps(str(ROOT))}\n{allow}\n")


TIME = server("time", "-m", "mcp_server_time", "--local-timezone", "UTC")
ASK_TIME = 'What time is it in Shanghai?\ncall get_current_time {"timezone": "Asia/Shanghai"}'


def exported(home: dict[str, str]) -> dict:
    out = run(home, "export", "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_an_allowed_tool_runs_and_its_result_reaches_the_model(home, fake_server):
    write_config(home, TIME)
    result = run(home, *flags(fake_server), "ask", "--allow-tool", "get_current_time", ASK_TIME)
    assert result.returncode == 0, result.stderr
    assert "Read 1 tool result " in result.stdout
    assert "✓ get_current_time" in result.stderr
    sent = fake_server.chat_requests[-1].body["messages"]
    tool = next(m for m in sent if m["role"] == "tool")
    assert "Asia/Shanghai" in tool["content"] and not tool["content"].startswith("Error")
    messages = exported(home)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "get_current_time"


def test_ask_refuses_a_tool_it_was_not_allowed_and_says_how(home, fake_server):
    write_config(home, TIME)
    result = run(home, *flags(fake_server), "ask", ASK_TIME)
    assert result.returncode == 0, result.stderr  # the model answered, told of the refusal
    assert "⊘ get_current_time was not run" in result.stderr
    assert "--allow-tool time.get_current_time" in result.stderr  # the one server's tool
    tool = next(m for m in fake_server.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("Error: ")


def test_a_server_that_fails_to_start_is_one_line_and_the_rest_work(home, fake_server):
    write_config(home, TIME + server("broken", *faulty_args("--start", "exit")))
    result = run(home, *flags(fake_server), "ask", "--allow-tool", "time.*", ASK_TIME)
    assert result.returncode == 0, result.stderr
    assert "✗ tool server broken failed:" in result.stderr
    assert "Traceback" not in result.stderr
    assert "Read 1 tool result " in result.stdout


def test_git_history_larger_than_the_window_is_answered_and_kept_whole(home, make_fake_server,
                                                                       tmp_path):
    """The seed's case: one call returns more than the whole 4,096-token window."""
    fake = make_fake_server(limit=4096)
    repo = make_git_repo(tmp_path / "repo")
    write_config(home, server("git", "-m", "mcp_server_git", "--repository", str(repo),
                              allow='allow = ["git_log", "git_diff_unstaged"]'))
    log = json.dumps({"repo_path": str(repo), "max_count": 40})
    ask = (f"What changed lately?\ncall git_log {log}"
           f"\ncall git_diff_unstaged {json.dumps({'repo_path': str(repo)})}")
    result = run(home, *flags(fake, "--context-window", "4096"), "ask", ask, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Read 2 tool results" in result.stdout
    assert all(r.status == 200 for r in fake.chat_requests)
    sent = [m for m in fake.chat_requests[-1].body["messages"] if m["role"] == "tool"]
    assert any("left out of the request" in m["content"] for m in sent)
    stored = [m for m in exported(home)["messages"] if m["role"] == "tool"]
    log = next(m["content"] for m in stored if "Revision 1:" in m["content"])
    assert "Revision 40:" in log  # the stored output is whole
    assert len(log) > max(len(m["content"]) for m in sent)


def test_no_tools_flag_offers_none(home, fake_server):
    write_config(home, TIME)
    result = run(home, *flags(fake_server), "ask", "--no-tools", "hello")
    assert result.returncode == 0, result.stderr
    assert "tools" not in fake_server.chat_requests[-1].body
    assert "Starting" not in result.stderr


def test_tools_with_the_bundled_model_come_with_a_line_on_how_well_it_uses_them(home,
                                                                                fake_server):
    from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME

    write_config(home, TIME)
    local = run(home, *flags(fake_server, "--model", LOCAL_MODEL_NAME), "ask", "Hello")
    assert local.returncode == 0, local.stderr
    line = next(x for x in local.stderr.splitlines() if LOCAL_MODEL_NAME in x)
    assert "seldom calls a tool" in line and "use a remote model" in line
    assert fake_server.chat_requests[-1].body["tools"]  # offered all the same
    remote = run(home, *flags(fake_server), "ask", "Hello again")
    assert remote.returncode == 0, remote.stderr
    assert "seldom calls a tool" not in remote.stderr
