"""MCP servers in the config file ([mcp.servers.NAME]) and in a Claude-Desktop-style JSON file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_tui.core.safety.known_secrets import Scrubber
from jarvis_tui.core.settings.config import (
    ConfigError,
    Settings,
    load_settings,
    save_settings,
    update_settings_file,
    validate,
    with_overrides,
)
from jarvis_tui.core.settings.mcp import McpServerConfig
from jarvis_tui.core.tools.mcp_client import McpHub

SERVERS = """model = "gpt-4o"
[mcp.servers.git]  # the repository I work on
command = "uvx"
args = ["mcp-server-git", "--repository", "~/src/app"]
env = { GIT_PAGER = "cat" }
cwd = "~/src"
allow = ["git_status", "git_log"]
timeout = 30

[mcp.servers."docs.search"]
url = "https://mcp.example.com/mcp?token=s3cret"
headers = { Authorization = "Bearer abc" }
allow = ["*"]

[mcp.servers.old]
command = "old-server"
enabled = false
"""


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return tmp_path / "config.toml"


def test_servers_are_read_in_the_file_s_order(cfg: Path) -> None:
    cfg.write_text(SERVERS, encoding="utf-8")
    git, docs, old = load_settings(cfg, env={}).mcp
    assert git == McpServerConfig(
        "git", "stdio", command="uvx", args=("mcp-server-git", "--repository", "~/src/app"),
        env={"GIT_PAGER": "cat"}, cwd=str(Path.home() / "src"), allow=("git_status", "git_log"),
        timeout=30.0, source=str(cfg))
    assert docs.transport == "http" and docs.headers == {"Authorization": "Bearer abc"}
    assert docs.allow == ("*",) and docs.timeout is None and docs.enabled
    assert docs.detail == "https://mcp.example.com/mcp?token=***"
    assert "Bearer" not in repr(docs)
    assert git.detail == "uvx mcp-server-git --repository '~/src/app'"
    assert not old.enabled


def test_no_servers_by_default(cfg: Path) -> None:
    assert Settings().mcp == ()
    assert load_settings(cfg, env={}).mcp == ()


@pytest.mark.parametrize(("toml", "key", "fragment"), [
    ('[mcp.servers.git]\ncommand = "x"\nargs = "--repo"\n', "mcp.servers.git.args",
     "expected a list of strings, got '--repo'"),
    ('[mcp.servers.git]\ncommand = "x"\nargs = ["a", 1]\n', "mcp.servers.git.args",
     "expected a list of strings, got a list holding 1"),
    ('[mcp.servers.git]\ncomand = "x"\n', "mcp.servers.git.comand", "did you mean 'command'?"),
    ('[mcp.servers.git]\nargs = ["a"]\n', "mcp.servers.git", "missing command"),
    ('[mcp.servers.git]\ncommand = "x"\nurl = "http://h/mcp"\n', "mcp.servers.git",
     "either command"),
    ('[mcp.servers.git]\ncommand = ""\n', "mcp.servers.git.command", "a program to start"),
    ('[mcp.servers.git]\ncommand = "x"\nenv = { A = 1 }\n', "mcp.servers.git.env",
     "expected a table of strings, got A = 1"),
    ('[mcp.servers.git]\ncommand = "x"\nheaders = { A = "b" }\n', "mcp.servers.git.headers",
     "only for a server that is an address (url)"),
    ('[mcp.servers.web]\nurl = "ftp://h"\n', "mcp.servers.web.url", "http:// or https://"),
    ('[mcp.servers.web]\nurl = "http://h/mcp"\nargs = []\n', "mcp.servers.web.args",
     "started as a program"),
    ('[mcp.servers.web]\nurl = "http://h"\nheaders = { A = "b\\nX: y" }\n',
     "mcp.servers.web.headers", "line break"),
    ('[mcp.servers.git]\ncommand = "x"\ntimeout = 0\n', "mcp.servers.git.timeout", "got 0"),
    ('[mcp.servers.git]\ncommand = "x"\ntimeout = "slow"\n', "mcp.servers.git.timeout",
     "got 'slow'"),
    ('[mcp.servers.git]\ncommand = "x"\nenabled = "yes"\n', "mcp.servers.git.enabled",
     "expected true or false"),
    ('[mcp.servers.git]\ncommand = "x"\nallow = "*"\n', "mcp.servers.git.allow",
     "expected a list of strings"),
    ('[mcp.servers."a.b"]\ncommand = "x"\ncwd = 3\n', 'mcp.servers."a.b".cwd', "a directory"),
    ('[mcp.server.git]\ncommand = "x"\n', "mcp.server", "did you mean 'servers'?"),
    ("mcp = 3\n", "mcp", "expected tables like [mcp.servers.NAME]"),
    ('[mcp]\nservers = ["git"]\n', "mcp.servers", "expected tables like"),
    ("[mcp.servers]\ngit = 1\n", "mcp.servers.git", "expected a table"),
])
def test_a_bad_server_is_one_line_naming_file_and_key(cfg: Path, toml: str, key: str,
                                                      fragment: str) -> None:
    cfg.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    text = str(info.value)
    assert text.startswith(f"{cfg}: key '{key}'"), text
    assert fragment in text and "\n" not in text


def test_saving_keeps_the_server_tables_as_written(cfg: Path) -> None:
    cfg.write_text(SERVERS, encoding="utf-8")
    loaded = load_settings(cfg, env={})
    save_settings(with_overrides(loaded, theme="jarvis-light"), cfg)
    update_settings_file(cfg, {"tool_timeout": 60.0})
    text = cfg.read_text(encoding="utf-8")
    assert SERVERS.split("model", 1)[1].split("\n", 1)[1] in text
    assert load_settings(cfg, env={}).mcp == loaded.mcp
    assert validate(loaded) == []


# -- the JSON file ---------------------------------------------------------------------------------

DESKTOP = {"mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}},
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
           "autoApprove": ["read_file"]},
    "remote": {"url": "https://h.example/mcp", "type": "streamable-http",
               "headers": {"X-Key": "k"}},
    "paused": {"command": "x", "disabled": True},
}}


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


def test_a_claude_desktop_file_adds_its_servers_and_toml_wins(cfg: Path, tmp_path: Path) -> None:
    servers = write_json(tmp_path / "claude_desktop_config.json", DESKTOP)
    cfg.write_text(f'mcp_servers_file = "{servers}"\n' + SERVERS, encoding="utf-8")
    got = {s.name: s for s in load_settings(cfg, env={}).mcp}
    assert list(got) == ["git", "docs.search", "old", "fs", "remote", "paused"]
    assert got["git"].command == "uvx" and got["git"].source == str(cfg)  # the TOML one
    assert got["fs"].args[-1] == "/tmp" and got["fs"].allow == ()  # another app's approvals: no
    assert got["remote"].transport == "http" and got["remote"].source == str(servers)
    assert not got["paused"].enabled


def test_the_json_file_may_come_from_the_environment(cfg: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_json(tmp_path / "servers.json", {"mcpServers": {"t": {"command": "mcp-server-time"}}})
    s = load_settings(cfg, env={"JARVIS_MCP_SERVERS_FILE": "~/servers.json"})
    assert [c.name for c in s.mcp] == ["t"] and s.mcp_servers_file == "~/servers.json"


@pytest.mark.parametrize(("doc", "fragment"), [
    ("{", "JSON syntax error at line 1, column 2"),
    ("[]", "expected a JSON object with the key 'mcpServers'"),
    ({"mcp_servers": {}}, "the key is spelled mcpServers"),
    ({"mcpServers": []}, "key 'mcpServers': expected an object of servers by name"),
    ({"mcpServers": {"a": "x"}}, "key 'mcpServers.a': expected an object"),
    ({"mcpServers": {"a": {"command": "x", "arg": []}}},
     "key 'mcpServers.a.arg': unknown; did you mean 'args'?"),
    ({"mcpServers": {"a": {"command": "x", "args": "y"}}},
     "key 'mcpServers.a.args': expected a list of strings"),
    ({"mcpServers": {"a": {"url": "http://h/sse", "type": "sse"}}},
     "key 'mcpServers.a.type': the old SSE transport is not supported"),
    ({"mcpServers": {"a": {"url": "http://h/mcp", "type": "stdio"}}},
     "key 'mcpServers.a.type': 'stdio' does not fit a server with a url"),
])
def test_a_bad_json_file_is_one_line_naming_it(cfg: Path, tmp_path: Path, doc: object,
                                               fragment: str) -> None:
    servers = write_json(tmp_path / "servers.json", doc)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={"JARVIS_MCP_SERVERS_FILE": str(servers)})
    text = str(info.value)
    assert text.startswith(f"{servers}: ") and fragment in text and "\n" not in text, text


def test_a_relative_json_file_is_beside_the_config_file_not_the_working_directory(
        cfg: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "cloned-repo"
    here.mkdir()
    write_json(here / ".mcp.json", {"mcpServers": {"evil": {"command": "sh"}}})
    monkeypatch.chdir(here)
    mine = write_json(cfg.parent / ".mcp.json", {"mcpServers": {"t": {"command": "time"}}})
    cfg.write_text('mcp_servers_file = ".mcp.json"\n', encoding="utf-8")
    s = load_settings(cfg, env={})
    assert [(c.name, c.source, c.from_servers_file) for c in s.mcp] == [("t", str(mine), True)]
    assert s.mcp_servers_file == ".mcp.json"  # saved back as the user wrote it
    mine.unlink()
    with pytest.raises(ConfigError, match=f"{mine}: the MCP servers file"):
        load_settings(cfg, env={})


def test_a_relative_json_file_from_the_environment_is_refused(cfg: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={"JARVIS_MCP_SERVERS_FILE": ".mcp.json"})
    text = str(info.value)
    assert text.startswith("environment variable JARVIS_MCP_SERVERS_FILE: '.mcp.json' is a "
                           "relative path") and "absolute" in text and "\n" not in text


def test_a_missing_json_file_is_said(cfg: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(cfg, env={"JARVIS_MCP_SERVERS_FILE": str(tmp_path / "nope.json")})


def test_the_hub_takes_its_servers_and_timeout_from_settings(cfg: Path) -> None:
    cfg.write_text(SERVERS, encoding="utf-8")
    settings = with_overrides(load_settings(cfg, env={}), tool_timeout=45)
    hub = McpHub.from_settings(settings)
    assert hub.default_timeout == 45
    assert [(s.name, s.state) for s in hub.statuses()] == [
        ("git", "stopped"), ("docs.search", "stopped"), ("old", "disabled")]


# -- what a server was given is shown as *** (issue 25, item 5) --------------------------------

GHP = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def test_a_server_s_secrets_are_its_secret_env_values_headers_and_flags() -> None:
    srv = McpServerConfig(
        "gh", "stdio", command="npx",
        args=("server-github", "--token", GHP, "--api-key=k-1234567890abcdef", "--repo", "~/src"),
        env={"GITHUB_TOKEN": "plain words token", "DEPLOY": "a1b2c3d4e5f6g7h8i9",
             "HOME": "/home/me/projects/abc123def456", "NODE_ENV": "production"})
    # A path or a word in env is the server's to use, and stays readable in its results.
    assert set(srv.secrets) == {"plain words token", "a1b2c3d4e5f6g7h8i9", GHP,
                                "k-1234567890abcdef"}
    assert srv.detail == "npx server-github --token *** --api-key=*** --repo '~/src'"
    assert "a1b2c3d4e5f6g7h8i9" not in repr(srv)


def test_a_server_s_address_shows_no_key_in_its_path_or_query() -> None:
    srv = McpServerConfig(
        "z", "http",
        url="https://me:pw12345678@mcp.example.com/s/3f9aK27bQx81LmZ0/mcp?api_key=abc12345&x=1",
        headers={"X-Api-Key": "hdr-secret-9876", "Authorization": "Bearer tok-abcdefgh1234",
                 "Accept": "application/json"})
    assert srv.detail == "https://mcp.example.com/s/***/mcp?api_key=***&x=1"
    assert {"hdr-secret-9876", "Bearer tok-abcdefgh1234", "tok-abcdefgh1234", "pw12345678",
            "abc12345"} <= set(srv.secrets)
    assert "application/json" not in srv.secrets


def test_a_known_secret_is_hidden_in_every_form_it_is_printed_in() -> None:
    scrub = Scrubber(["tok en/9f8e7d6c", "short"])
    printed = 'said "tok en/9f8e7d6c", tok%20en%2F9f8e7d6c and tok+en%2F9f8e7d6c; short stays'
    assert scrub(printed) == 'said "***", *** and ***; short stays'
