"""The app's tool servers (MCP): made from the settings, started in the background at mount,
watched, and closed at exit. Every problem is a notice in the conversation, never a crash, and
with no server configured nothing here does anything.

The hub comes from `make_hub`, which the app holds as `hub_factory` so tests hand in a fake;
`jarvis_tui.core.tools.mcp_client` is imported only when there are servers to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable
from typing import Any

from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.core.settings.mcp import from_servers_files
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.texts.notices import tools_warnings
from jarvis_tui.ui.host import AppHost

CLOSE_WAIT_S = 5.0  # at exit: a server that will not stop does not hold the terminal longer

TOOL_SERVERS_TEXTS = Texts(
    en={
        "starting": "⚙ Starting {n} tool servers…",
        "starting_one": "⚙ Starting the tool server {name}…",
        "ready": "⚙ Tools: {tools} from {servers} servers ({keys} lists them)",
        "ready_one": "⚙ Tools: {tools} from {name} ({keys} lists them)",
        "failed": "✗ tool server {name} failed: {error}",
        "stopped": "✗ tool server {name} stopped: {error}",
        "back": "✓ tool server {name} is ready again ({tools} tools)",
        "hub_failed": "✗ the tool servers could not be started: {error}",
        "no_error": "no reason given",
        "from_file": "⚙ Tool servers from {file} (mcp_servers_file): {names}",
        "left_out": "⚠ tool server {name}: tool {tool} left out, the server describes it "
                    "wrongly ({why}); its other tools are offered",
    },
    zh={
        "starting": "⚙ 正在启动 {n} 个工具服务器…",
        "starting_one": "⚙ 正在启动工具服务器 {name}…",
        "ready": "⚙ 工具：{tools} 个，来自 {servers} 个服务器（{keys} 查看）",
        "ready_one": "⚙ 工具：{tools} 个，来自 {name}（{keys} 查看）",
        "failed": "✗ 工具服务器 {name} 启动失败：{error}",
        "stopped": "✗ 工具服务器 {name} 已停止：{error}",
        "back": "✓ 工具服务器 {name} 已恢复（{tools} 个工具）",
        "hub_failed": "✗ 无法启动工具服务器：{error}",
        "no_error": "未说明原因",
        "from_file": "⚙ 来自 {file}（mcp_servers_file）的工具服务器：{names}",
        "left_out": "⚠ 工具服务器 {name}：工具 {tool} 的描述有误，已略去（{why}）；"
                    "其他工具照常提供",
    },
)


def make_hub(settings: object) -> Any | None:
    """The MCP hub for the configured servers, not started; None when there are none."""
    if not tuple(settings.mcp):
        return None
    from jarvis_tui.core.tools.mcp_client import McpHub

    return McpHub.from_settings(settings)


HubFactory = Callable[[object], Any]


def _line(text: object) -> str:
    return " ".join(visible(str(text)).split())


class ToolServers:
    """The app's hub and what it has said about it: one notice per change of a server."""

    def __init__(self, app: AppHost, factory: HubFactory) -> None:
        self.app = app
        self.factory = factory
        self.hub: Any | None = None
        self._said: dict[str, str] = {}  # server → the state last announced
        self._started = False
        self._thread = threading.get_ident()

    def create(self) -> Any | None:
        """Make the hub (not started yet) and hand it to the session with the approval
        dialog; a hub offers only ready servers' tools, so this is safe before start."""
        from jarvis_tui.ui.screens.tool_approval import ask_approval

        self._thread = threading.get_ident()
        try:
            self.hub = self.factory(self.app.settings)
        except Exception as err:  # noqa: BLE001 - a bad server entry must not stop the app
            self.app.call_later(self._say, TOOL_SERVERS_TEXTS(self.app.language, "hub_failed",
                                                              error=_line(err)), "error")
            return None
        if self.hub is None:
            return None
        self.hub.on_change = self._changed
        self.app.session.set_tools(self.hub, functools.partial(ask_approval, self.app))
        return self.hub

    async def start(self) -> None:
        hub, lang = self.hub, self.app.language
        if hub is None:
            return
        statuses = [s for s in hub.statuses() if s.state != "disabled"]
        if not statuses:
            return  # all disabled: F5 shows them, nothing else to say
        if len(statuses) == 1:
            await self._say(TOOL_SERVERS_TEXTS(lang, "starting_one", name=_line(statuses[0].name)))
        else:
            await self._say(TOOL_SERVERS_TEXTS(lang, "starting", n=len(statuses)))
        # Servers the config file itself does not name are never started unannounced.
        for source, names in from_servers_files(self.app.settings.mcp).items():
            await self._say(TOOL_SERVERS_TEXTS(lang, "from_file", file=_line(source),
                                               names=", ".join(_line(n) for n in names)))
        try:
            await hub.start()
        except Exception as err:  # noqa: BLE001 - the hub should not raise; if it does, say it
            await self._say(TOOL_SERVERS_TEXTS(lang, "hub_failed",
                                               error=_line(err) or type(err).__name__),
                            "error")
            return
        self._started = True
        self._gauge()  # the definitions of the tools now offered go with every request
        ready = []
        for status in hub.statuses():
            self._said[status.name] = status.state
            if status.state == "ready":
                ready.append(status)
                for tool, why in status.left_out:
                    await self._say(TOOL_SERVERS_TEXTS(lang, "left_out", name=_line(status.name),
                                                       tool=_line(tool),
                                                       why=_line(why)), "warning")
            elif status.state in ("failed", "stopped"):
                await self._say(self._failure(status), "error")
        if ready:
            from jarvis_tui.ui.actions import BY_ID, key_name, keys_of

            key = key_name(keys_of(BY_ID["tools"], self.app.settings.keys))
            tools = sum(len(s.tools) for s in ready)
            if len(ready) == 1:
                await self._say(TOOL_SERVERS_TEXTS(lang, "ready_one", tools=tools,
                                                   name=_line(ready[0].name),
                                                   keys=key))
            else:
                await self._say(TOOL_SERVERS_TEXTS(lang, "ready", tools=tools, servers=len(ready),
                                                   keys=key))
            warnings: list[str] = []
            with contextlib.suppress(Exception):  # the session is being switched: no warning
                offered = self.app.chat.session.tools_offered()
                warnings = tools_warnings(offered.model, offered.tools, offered.tokens,
                                          offered.budget, lang)
            for line in warnings:
                await self._say(line, "warning")

    def _failure(self, status: Any) -> str:
        error = _line(status.error or "") or TOOL_SERVERS_TEXTS(self.app.language, "no_error")
        key = "failed" if status.state == "failed" else "stopped"
        return TOOL_SERVERS_TEXTS(self.app.language, key, name=_line(status.name), error=error)

    def _changed(self, status: Any) -> None:
        """hub.on_change: maybe from another thread, so the work goes to the app's loop."""
        if threading.get_ident() == self._thread:
            self.app.call_later(self._announce, status)
        else:
            self.app.call_from_thread(self._announce, status)

    async def _announce(self, status: Any) -> None:
        from jarvis_tui.ui.screens.mcp_servers import McpServersScreen

        if isinstance(self.app.screen, McpServersScreen):
            self.app.screen.refresh_servers()
        self._gauge()  # a server gone or back: its tools' definitions go or come
        if not self._started:
            return  # start() sums the start up in one or two lines
        before = self._said.get(status.name)
        if status.state == "starting" and before in ("failed", "stopped"):
            return  # a restart passes through starting: "back" is said once it is ready
        self._said[status.name] = status.state
        if status.state == before:
            return
        if status.state in ("failed", "stopped"):
            await self._say(self._failure(status), "error")
        elif status.state == "ready" and before in ("failed", "stopped"):
            await self._say(TOOL_SERVERS_TEXTS(self.app.language, "back", name=_line(status.name),
                                               tools=len(status.tools)))

    def _gauge(self) -> None:
        with contextlib.suppress(Exception):  # the app is closing: nothing to draw
            self.app.chat.update_gauge()

    async def _say(self, text: str, kind: str = "info") -> None:
        with contextlib.suppress(Exception):  # the app is closing: nobody reads it
            await self.app.chat.say(text, kind)

    def statuses(self) -> list[Any]:
        return list(self.hub.statuses()) if self.hub is not None else []

    def server_of(self, name: str) -> str:
        if self.hub is None:
            return ""
        for spec in self.hub.specs():
            if spec.name == name:
                return spec.server
        return ""

    async def aclose(self) -> None:
        hub, self.hub = self.hub, None
        if hub is None:
            return
        hub.on_change = None
        with contextlib.suppress(Exception, asyncio.TimeoutError):
            await asyncio.wait_for(hub.aclose(), CLOSE_WAIT_S)
