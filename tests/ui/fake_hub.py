"""A hand-made stand-in for the MCP hub (McpHub's interface, each server started straight to a
chosen state, `run()` answering "ran"), for the app tests that still use one: the consent,
bidi and history-search tests. test_tools_app.py runs the real hub with real servers instead
(issue 28, item 6); these are what is left to convert."""

from __future__ import annotations

from dataclasses import dataclass, field

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.tools.specs import ToolBox

GIT_LOG = ToolSpec("git_log", "Shows the commit logs.", {"type": "object"}, "git", "git_log")


@dataclass
class Status:
    name: str
    transport: str = "stdio"
    state: str = "starting"
    error: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    detail: str = ""
    started_s: float | None = None
    left_out: tuple[tuple[str, str], ...] = ()


@dataclass
class FakeHub(ToolBox):
    """McpHub's interface: start() brings each server to its `final` state."""

    servers: list[Status]
    final: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    on_change: object = None
    closed: bool = False

    async def start(self) -> None:
        for status in self.servers:
            status.state, status.error = self.final.get(status.name, ("ready", None))
            if status.state == "ready":
                status.started_s = 0.4
            if callable(self.on_change):
                self.on_change(status)

    async def aclose(self) -> None:
        self.closed = True

    def statuses(self) -> list[Status]:
        return list(self.servers)

    def specs(self) -> list[ToolSpec]:
        return [t for s in self.servers if s.state == "ready" for t in s.tools]

    def allowed(self, spec: ToolSpec) -> bool:
        return False

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        return ToolResult("ran")


def two_servers() -> FakeHub:
    git = Status("git", detail="uvx mcp-server-git",
                 tools=(GIT_LOG, ToolSpec("git_status", "Working tree status.", {}, "git",
                                          "git_status")))
    web = Status("web", transport="http", detail="http://127.0.0.1:9/mcp")
    return FakeHub([git, web], final={"web": ("failed", "connection refused [bold]x[/]")})
