"""A server's tool list, checked one tool at a time.

The SDK checks a tools/list answer whole: one tool it refuses (no inputSchema, a root schema that
is not an object, a name that is not text) fails the listing, and so the whole server, with
pydantic's dump of every error. Here the raw answer is checked tool by tool, with the SDK's own
models for the protocol version the session speaks, before the SDK sees it: a bad tool is left
out and named with why, and the server's other tools are offered as usual.

It sits in the SDK's public seam for this, the dispatcher a ClientSession may be given, so the
session itself (its headers, timeouts, caches) is untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import methods
from pydantic import ValidationError

from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.tools.mcp_content import clean

LIST_TOOLS = "tools/list"
FALLBACK_VERSION = "2025-11-25"  # what the SDK checks against before a version is agreed


class CheckedListing(JSONRPCDispatcher):
    """A JSON-RPC dispatcher that leaves refused tools out of tools/list answers. `left_out`
    holds (the tool as named, why) for each tool left out of the latest listing (all pages)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version: Callable[[], str | None] = lambda: None
        self.left_out: list[tuple[str, str]] = []

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None,
                               opts: Any = None, **kwargs: Any) -> dict[str, Any]:
        raw = await super().send_raw_request(method, params, opts, **kwargs)
        if method != LIST_TOOLS or not isinstance(raw, dict):
            return raw
        tools = raw.get("tools")
        if not isinstance(tools, list):
            return raw  # not a listing at all: the SDK's own error says so
        if not (params or {}).get("cursor"):
            self.left_out = []  # a new listing, not its next page
        version = self.version() or FALLBACK_VERSION
        kept = []
        for n, tool in enumerate(tools):
            why = refusal(tool, version)
            if why is None:
                kept.append(tool)
            else:
                self.left_out.append((tool_label(tool, n), why))
        return {**raw, "tools": kept}


def refusal(tool: object, version: str) -> str | None:
    """Why the SDK would refuse this one tool of a listing, in one line; None if it takes it."""
    one = {"tools": [tool]}
    try:
        methods.validate_server_result(LIST_TOOLS, version, one)
        types.ListToolsResult.model_validate(one, by_name=False)
    except ValidationError as err:
        return validation_line(err, skip=2)  # the error's place starts tools.0
    except (KeyError, ValueError):
        return None  # a version this SDK has no table for: the SDK decides
    return None


def validation_line(err: ValidationError, *, skip: int = 0) -> str:
    """A pydantic error as one line: where the first problem is and what it is, and how many
    more there are (never the multi-line dump with its links)."""
    problems = err.errors(include_url=False)
    if not problems:
        return "it does not follow the MCP schema"
    first = problems[0]
    where = ".".join(str(part) for part in first.get("loc", ())[skip:]) or "it"
    text = f"{where}: {first.get('msg', 'invalid')}"
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    return one_line(text)


def tool_label(tool: object, index: int) -> str:
    """The tool's name as the server wrote it, or its place in the list when it has none."""
    name = tool.get("name") if isinstance(tool, dict) else None
    if isinstance(name, str) and name.strip():
        return repr(one_line(name, 64))
    return f"#{index + 1} (no name)"


def one_line(text: str, most: int = 300) -> str:
    text = " ".join(terminal_safe(clean(text)).split())
    return text if len(text) <= most else text[:most - 1] + "…"
