"""A tool, a call and its result as plain values: what the model is told of a tool, what it
asked for, and what it got back. Below every part of the core (the providers put them on the
wire, the engine runs them, the events carry them), so the vocabulary depends on no part.
Arguments travel as the model wrote them (a JSON string): a malformed one is the model's
mistake, sent back to it as an error result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from jarvis_tui.core.calls.tool_args import read_arguments


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is told of it. `name` is unique among the session's tools (the
    MCP client prefixes the server's name only when two servers offer the same tool);
    `server` and `tool` are where it really lives, for the user's eyes and the allowlist."""

    name: str
    description: str
    parameters: dict[str, Any]  # a JSON schema of the arguments (MCP's inputSchema)
    server: str = ""
    tool: str = ""

    def wire(self) -> dict[str, Any]:
        """The neutral shape every provider translates: name, description, parameters."""
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters or {"type": "object", "properties": {}}}


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for; `arguments` is its JSON text, as the model wrote it."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed(self) -> dict[str, Any]:
        """The arguments as an object; raises ValueError saying what is wrong with them."""
        return read_arguments(self.arguments)

    def wire(self) -> dict[str, Any]:
        """The OpenAI chat-completions shape, which is how tool calls are stored and sent."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_wire(cls, call: dict[str, Any]) -> ToolCall:
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        args = fn.get("arguments", "{}")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        return cls(str(call.get("id", "")), str(fn.get("name", "")), args)


@dataclass(frozen=True)
class ToolResult:
    """What a call gave back, as text; `is_error` when it failed, was denied or was refused
    (the model is told so and can try another way)."""

    text: str
    is_error: bool = False
    # Structured extras a UI may show (MCP content types other than text, timing...).
    meta: dict[str, Any] = field(default_factory=dict)
