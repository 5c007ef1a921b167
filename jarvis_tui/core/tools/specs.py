"""Tools the model may call: what the engine, the providers and the MCP client share.

The engine knows a tool only as a `ToolSpec` (what the model is told) and a `ToolBox` (what runs
it); it never knows MCP is behind it, so a round can be tested with a box of plain functions and
the MCP client can be tested without a model. The values themselves (ToolSpec, ToolCall,
ToolResult) are core/calls/specs.py's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec


class ToolBox(Protocol):
    """What runs the tools: the MCP client in the app and `ask`, plain functions in tests.
    A box that subclasses it gets the defaults below: nothing allowed without asking, and
    the tool_timeout setting as every call's bound."""

    def specs(self) -> list[ToolSpec]:
        """The tools the model is offered now (servers that failed offer none)."""
        ...

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        """Run one call. Never raises for the tool's own failure (a dead server, a timeout, an
        error the tool reported): that is a ToolResult with is_error. Cancellation (Esc) raises
        asyncio.CancelledError as usual."""
        ...

    def allowed(self, spec: ToolSpec) -> bool:
        """Whether the user's configuration lets this tool run without asking."""
        return False

    def timeout_for(self, spec: ToolSpec) -> float | None:
        """The bound on one call of this tool, when the box knows one (None: the
        tool_timeout setting's)."""
        return None


# The user's answer to one call: run it this once, run it and every later call of this tool
# without asking (this session), or refuse it.
ONCE = "once"
ALWAYS = "always"
DENY = "deny"

Approve = Callable[[ToolCall, ToolSpec], Awaitable[str]]
