"""Which MCP servers to start: the config file's [mcp.servers.NAME] tables, and a
Claude-Desktop-style JSON file ({"mcpServers": {...}}) when the user points to one.

Both read into the same frozen `McpServerConfig`; a server named in both is the TOML one (the
file written for jarvis-tui says more than one shared with other apps). Every problem is one line
naming the file and the key, as for the price tables, so a typo never silently drops a server.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from jarvis_tui.core.providers.http import hide_url_secrets, url_secrets
from jarvis_tui.core.safety.known_secrets import (
    HIDDEN,
    Scrubber,
    secret_name,
    table_secrets,
    token_shaped,
)
from jarvis_tui.core.safety.redact import redact
from jarvis_tui.core.settings.errors import ConfigError, shown
from jarvis_tui.core.settings.schema import Range

Transport = Literal["stdio", "http"]

MAX_TIMEOUT = 86_400.0


@dataclass(frozen=True)
class McpServerConfig:
    """One server: a program to start and talk to over its stdin/stdout ("stdio"), or the
    address of a streamable HTTP server ("http"). `timeout` None means the tool_timeout
    setting; `allow` holds the tools that run without asking ("*" for all of them)."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, repr=False)  # may hold a token
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # may hold a token
    enabled: bool = True
    allow: tuple[str, ...] = ()
    timeout: float | None = None
    source: str = ""  # the file it was read from, for messages
    # Read from mcp_servers_file, not the config file itself: said whenever it is started.
    from_servers_file: bool = False

    @property
    def detail(self) -> str:
        """What the user recognises it by: the command line, or the address. What is secret in
        it (a --token's value, a key in the path or the query, a known secret) shows as ***."""
        if self.transport == "http":
            shown = _hide_path_secrets(hide_url_secrets(self.url))
        else:
            shown = " ".join(_hide_flag_values([_shell_word(w) for w in (self.command,
                                                                         *self.args)]))
        return redact(Scrubber(self.secrets)(shown), mark=HIDDEN)

    @property
    def secrets(self) -> list[str]:
        """What the server was given that is never shown, stored or sent on: the secret values
        of its env and headers, the credentials in its address, its secret flags' values."""
        return [*table_secrets(self.env), *table_secrets(self.headers),
                *_url_secrets(self.url), *_flag_values(self.args)]


# What each key of a server's table is, for the did-you-mean and the messages.
SERVER_KEYS = {
    "command": "the program to start (a stdio server)",
    "args": "its arguments, a list of strings",
    "env": "environment variables for it, a table of strings",
    "cwd": "the directory it starts in",
    "url": "the address of a streamable HTTP server (http:// or https://)",
    "headers": "HTTP headers sent to it, a table of strings",
    "enabled": "true or false",
    "allow": 'tools that run without asking, a list of names or ["*"]',
    "timeout": "seconds one call may run",
}
# Keys of the JSON file as other clients write them: its `type` names the transport, and
# `disabled` is the common spelling of enabled = false there.
JSON_KEYS = {**SERVER_KEYS, "type": '"stdio", "http" or "streamable-http"',
             "disabled": "true or false"}
JSON_HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
# Other clients' approval lists and notes: skipped, so their files read as they are. Skipping an
# approval list is the safe direction (jarvis-tui asks instead); `allow` is ours to say.
JSON_IGNORED = ("autoApprove", "alwaysAllow", "description")


def _bare_or_quoted(name: str) -> str:
    """A table name as TOML wants it written: bare when it can be, else in quotes."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _did_you_mean(key: str, known: Iterable[str]) -> str:
    known = list(known)
    close = difflib.get_close_matches(key, known, n=1)
    return f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(known)


def _name_problem(name: str) -> str | None:
    if not name.strip():
        return "a server needs a name"
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return "a server's name cannot hold control or invisible characters"
    return None


def _string(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected {what}, got {shown(value)}")
    if "\x00" in value:
        raise ValueError(f"expected {what} without a NUL character")
    return value


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, got {_describe_list(value)}")
    if any("\x00" in v for v in value):
        raise ValueError("expected a list of strings without NUL characters")
    return tuple(value)


def _describe_list(value: object) -> str:
    if isinstance(value, list):
        bad = next(v for v in value if not isinstance(v, str))
        return f"a list holding {shown(bad)}"
    return shown(value)


def _table(value: object, *, header: bool = False) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of strings, got {shown(value)}")
    for key, item in value.items():
        if not isinstance(item, str):
            raise ValueError(f"expected a table of strings, got {key} = {shown(item)}")
        if "\x00" in item or "\x00" in key:
            raise ValueError(f"{key}: a NUL character cannot be passed on")
        # A line break in a header would let a value forge other headers; httpx refuses it
        # late and deep in a connection, so it is said here, naming the header only.
        if header and any(ch in item for ch in "\r\n"):
            raise ValueError(f"the header {key} holds a line break (the value is not shown)")
    return dict(value)


def _timeout(value: object) -> float:
    expected = f"expected a number of seconds > 0 (at most {MAX_TIMEOUT:,.0f})"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{expected}, got {shown(value)}")
    if value <= 0 or not Range(0, MAX_TIMEOUT)(value):  # Range: an int of any size too
        raise ValueError(f"{expected}, got {shown(value)}")
    return float(value)


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {shown(value)}")
    return value


def _server(name: str, table: Mapping[str, Any], *, source: str,
            known: Mapping[str, str]) -> McpServerConfig:
    """One server's table; ValueError("KEY: problem") or ValueError(": problem") for the
    table as a whole, which the caller turns into file + key."""
    for key in table:
        if key not in known and not (known is JSON_KEYS and key in JSON_IGNORED):
            raise ValueError(f"{key}: unknown; {_did_you_mean(key, known)}")

    def read(key: str, how: Any) -> Any:
        try:
            return how(table[key])
        except ValueError as e:
            raise ValueError(f"{key}: {e}") from None

    kind = table.get("type")
    if "type" in table:
        kind = read("type", lambda v: _string(v, JSON_KEYS["type"]))
        if kind == "sse":
            raise ValueError("type: the old SSE transport is not supported; use the server's "
                             "streamable HTTP address (usually ending in /mcp) with type "
                             '"http"')
        if kind not in ("stdio", *JSON_HTTP_TYPES):
            raise ValueError(f"type: expected {JSON_KEYS['type']}, got {shown(kind)}")
    has_command, has_url = "command" in table, "url" in table
    if has_command and has_url:
        raise ValueError(": give either command (a program to start) or url (a streamable "
                         "HTTP server), not both")
    if not has_command and not has_url:
        raise ValueError(": missing command (a program to start) or url (the address of a "
                         "streamable HTTP server)")
    transport: Transport = "http" if has_url else "stdio"
    if kind is not None and (kind == "stdio") != (transport == "stdio"):
        raise ValueError(f"type: {kind!r} does not fit a server with "
                         f"{'a url' if has_url else 'a command'}")
    for key in ("args", "env", "cwd") if transport == "http" else ("headers",):
        if key in table:
            needs = "an address (url)" if key == "headers" else "started as a program (command)"
            raise ValueError(f"{key}: only for a server that is {needs}")

    values: dict[str, Any] = {}
    if transport == "stdio":
        values["command"] = read("command", lambda v: _string(v, "a program to start"))
        if "args" in table:
            values["args"] = read("args", _strings)
        if "env" in table:
            values["env"] = read("env", _table)
        if "cwd" in table:
            cwd = read("cwd", lambda v: _string(v, "a directory"))
            values["cwd"] = os.path.expanduser(cwd)
    else:
        url = read("url", lambda v: _string(v, "an address starting with http:// or https://"))
        url = url.strip()
        if not re.match(r"https?://[^\s/]", url) or any(ch.isspace() for ch in url):
            raise ValueError(f"url: expected an address starting with http:// or https://, "
                             f"without spaces, got {hide_url_secrets(url)!r}")
        values["url"] = url
        if "headers" in table:
            values["headers"] = read("headers", lambda v: _table(v, header=True))
    if "enabled" in table:
        values["enabled"] = read("enabled", _bool)
    if "disabled" in table:
        values["enabled"] = not read("disabled", _bool)
    if "allow" in table:
        values["allow"] = read("allow", _strings)
    if "timeout" in table:
        values["timeout"] = read("timeout", _timeout)
    return McpServerConfig(name=name, transport=transport, source=source, **values)


def read_toml_table(path: Path, raw: object) -> tuple[McpServerConfig, ...]:
    """The config file's `mcp` table: [mcp.servers.NAME] tables, in the file's order."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key 'mcp': expected tables like [mcp.servers.NAME] with a "
                          f"command or a url, got {shown(raw)}")
    for key in raw:
        if key != "servers":
            raise ConfigError(
                f"{path}: key 'mcp.{key}': unknown; {_did_you_mean(key, ['servers'])}")
    servers = raw.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(
            f"{path}: key 'mcp.servers': expected tables like [mcp.servers.NAME] with "
            f"a command or a url, got {shown(servers)}")
    return _servers(path, servers, lambda name: f"mcp.servers.{_bare_or_quoted(name)}",
                    "a table", SERVER_KEYS)


def _servers(path: Path | str, servers: dict, where_of: Callable[[str], str], what: str,
             known: Iterable[str]) -> tuple[McpServerConfig, ...]:
    """Each server of a TOML table or a JSON object, or the error naming the first bad one."""
    out = []
    for name, table in servers.items():
        where = where_of(name)
        problem = _name_problem(name)
        if problem:
            raise ConfigError(f"{path}: key '{where}': {problem}")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: key '{where}': expected {what} with a command or a url, "
                              f"got {shown(table)}")
        try:
            out.append(_server(name, table, source=str(path), known=known))
        except ValueError as e:
            raise ConfigError(_located(path, where, str(e))) from None
    return tuple(out)


def _located(path: Path | str, where: str, problem: str) -> str:
    key, _, text = problem.partition(": ")
    if problem.startswith(": "):
        return f"{path}: key '{where}': {problem[2:]}"
    return f"{path}: key '{where}.{key}': {text}"


def read_json_file(path: Path | str) -> tuple[McpServerConfig, ...]:
    """The servers of a Claude-Desktop-style file: {"mcpServers": {"NAME": {...}}}."""
    path = Path(os.path.expanduser(str(path)))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: the MCP servers file (mcp_servers_file) does not exist") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the MCP servers file ({e.strerror or e})") from None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: JSON syntax error at line {e.lineno}, column {e.colno}: "
                          f"{e.msg}") from None
    except RecursionError:
        raise ConfigError(f"{path}: JSON nested too deeply to read") from None
    if not isinstance(doc, dict) or "mcpServers" not in doc:
        close = [k for k in (doc if isinstance(doc, dict) else {})
                 if isinstance(k, str) and k.lower().replace("_", "") == "mcpservers"]
        hint = f" (it has '{close[0]}': the key is spelled mcpServers)" if close else ""
        raise ConfigError(f"{path}: expected a JSON object with the key 'mcpServers'{hint}")
    servers = doc["mcpServers"]
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: key 'mcpServers': expected an object of servers by name, got "
                          f"{shown(servers)}")
    return tuple(replace(s, from_servers_file=True) for s in
                 _servers(path, servers, lambda name: f"mcpServers.{name}", "an object",
                          JSON_KEYS))


def servers_file_path(value: str, config_file: Path, origin: str) -> Path:
    """Where `mcp_servers_file` points. Relative to the config file's own folder when the
    config file says it: resolved against the working directory, a `.mcp.json` in any cloned
    repository the user cds into would name programs to start. Given any other way (`origin`:
    the environment variable or the option that gave it), it must be absolute."""
    path = Path(os.path.expanduser(value))
    if path.is_absolute():
        return path
    if not origin:
        return config_file.parent / path
    raise ConfigError(f"{origin}: {value!r} is a relative path, which would read the servers of "
                      "whatever folder jarvis-tui starts in; give an absolute path (or ~/...)")


def from_servers_files(servers: Iterable[McpServerConfig]) -> dict[str, list[str]]:
    """The enabled servers read from a servers file, by file: those the config file itself does
    not name, which the user is told of whenever they are started."""
    out: dict[str, list[str]] = {}
    for server in servers:
        if server.enabled and server.from_servers_file:
            out.setdefault(server.source, []).append(server.name)
    return out


def merged(toml: Iterable[McpServerConfig],
           json_servers: Iterable[McpServerConfig]) -> tuple[McpServerConfig, ...]:
    """TOML servers first, then the JSON file's servers whose names the TOML does not use."""
    toml = tuple(toml)
    taken = {s.name for s in toml}
    return toml + tuple(s for s in json_servers if s.name not in taken)


def problems(servers: object) -> list[str]:
    """What validate() says of Settings.mcp (servers are checked as they are read; this
    catches ones built in code)."""
    if not isinstance(servers, tuple | list):
        return ["mcp: expected the servers read from [mcp.servers.NAME] tables"]
    out = []
    seen: set[str] = set()
    for server in servers:
        if not isinstance(server, McpServerConfig):
            out.append(f"mcp: expected server settings, got {shown(server)}")
            continue
        if server.name in seen:
            out.append(f"mcp.servers.{_bare_or_quoted(server.name)}: named twice")
        seen.add(server.name)
    return out


EXAMPLE = """\
# Tools from MCP servers, one table per server: a program to start (command, args, env, cwd) or
# a streamable HTTP address (url, headers); see "MCP servers" below.
[mcp.servers.git]
command = "uvx"
args = ["mcp-server-git", "--repository", "."]
# allow = ["git_status", "git_log"]   # tools that run without asking; ["*"] = all of them
# timeout = 120.0           # seconds per call (default: tool_timeout)
# enabled = false           # keep the table, start no server
"""


# -- showing a server --------------------------------------------------------------------------

def _shell_word(word: str) -> str:
    if word and re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _url_secrets(url: str) -> list[str]:
    return url_secrets(url) if url else []


def _hide_path_secrets(url: str) -> str:
    """Hosted servers put the key in the path (https://mcp.example.com/u/3f9aK2.../sse)."""
    head, sep, rest = url.partition("://")
    if not sep:
        return url
    path, q, query = rest.partition("?")
    parts = path.split("/")
    parts[1:] = [HIDDEN if token_shaped(part) else part for part in parts[1:]]
    return head + sep + "/".join(parts) + q + query


def _secret_flag(word: str) -> bool:
    return word.startswith("-") and secret_name(word.split("=", 1)[0])


def _flag_values(args: Iterable[str]) -> list[str]:
    """The values given to secret flags: --token VALUE, --api-key=VALUE."""
    args = list(args)
    found = []
    for i, word in enumerate(args):
        if _secret_flag(word) and "=" in word:
            found.append(word.split("=", 1)[1])
        elif _secret_flag(word) and i + 1 < len(args) and not args[i + 1].startswith("-"):
            found.append(args[i + 1])
    return [value for value in found if value]


def _hide_flag_values(words: list[str]) -> list[str]:
    shown = list(words)
    for i, word in enumerate(words):
        if _secret_flag(word) and "=" in word:
            shown[i] = word.split("=", 1)[0] + "=" + HIDDEN
        elif _secret_flag(word) and i + 1 < len(words) and not words[i + 1].startswith("-"):
            shown[i + 1] = HIDDEN
    return shown
