"""The tools jarvis-tui itself offers beside the MCP servers' (search_history, read_attachment):
each only reads what this session holds, so it never asks for approval and no --allow-tool
rule applies to it. An MCP tool named like one is offered as SERVER_NAME instead, so a server
can never stand in for a built-in tool, nor a built-in one shadow a server's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.tools.specs import ToolBox

_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class Builtin:
    """A built-in tool: what the model is told, and what answers a call (in the event loop:
    it reads memory or the local store, never the network)."""

    spec: ToolSpec
    run: Callable[[ToolCall], ToolResult]


class WithBuiltins(ToolBox):
    """A ToolBox: `builtins` first-class beside the tools of `box` (None: no servers)."""

    def __init__(self, builtins: Sequence[Builtin], box: ToolBox | None) -> None:
        self.builtins = list(builtins)
        self.box = box

    def specs(self) -> list[ToolSpec]:
        return with_builtins(self.box.specs() if self.box is not None else [],
                             [b.spec for b in self.builtins])

    def _builtin(self, spec: ToolSpec) -> Builtin | None:
        return next((b for b in self.builtins if b.spec == spec), None)

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        if (builtin := self._builtin(spec)) is not None:
            return builtin.run(call)
        if self.box is None:
            return ToolResult(f"there is no tool named {call.name!r}", True)
        return await self.box.run(call, spec)

    def allowed(self, spec: ToolSpec) -> bool:
        if self._builtin(spec) is not None:
            return True  # it only reads this session
        return self.box is not None and self.box.allowed(spec)

    def timeout_for(self, spec: ToolSpec) -> float | None:
        if self._builtin(spec) is not None or self.box is None:
            return None
        return self.box.timeout_for(spec)


def with_builtins(specs: Sequence[ToolSpec], builtins: Sequence[ToolSpec]) -> list[ToolSpec]:
    """`specs` (the servers' tools) with `builtins` after them, any of theirs named like one
    renamed."""
    names = {b.name for b in builtins}
    taken = {s.name for s in specs} | names
    out = []
    for spec in specs:
        if spec.name in names:
            spec = _renamed(spec, taken)
            taken.add(spec.name)
        out.append(spec)
    return [*out, *builtins]


def _renamed(spec: ToolSpec, taken: set[str]) -> ToolSpec:
    """An MCP tool called like a built-in one, named for its server as the hub names tools
    two servers share; where it really lives (server, tool) is unchanged."""
    base = _NAME.sub("_", f"{spec.server or 'mcp'}_{spec.tool or spec.name}")[:64]
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base[:64 - len(str(n)) - 1]}_{n}"
    return ToolSpec(name, spec.description, spec.parameters, spec.server, spec.tool or spec.name)
