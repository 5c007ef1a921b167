"""The tool servers (F5, /tools): each server's state, transport and tools; the highlighted
server's tools are listed with what they do. Redrawn when a server changes state while open
(the app calls `refresh_servers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

MARKS = {"ready": "●", "starting": "○", "failed": "✗", "stopped": "✗", "disabled": "–"}
STYLES = {"ready": "$success", "starting": "$warning", "failed": "$error", "stopped": "$error",
          "disabled": "$text-muted"}

SERVERS_TEXTS = Texts(
    en={
        "title": "Tool servers",
        "none": "No tool servers are configured: add them to the config file and restart.",
        "ready": "ready", "starting": "starting", "failed": "failed", "stopped": "stopped",
        "disabled": "disabled",
        "tools": "{n} tools", "tools_one": "1 tool",
        "started": "started in {s:.1f}s",
        "error": "Error: {error}",
        "no_tools": "No tools offered (yet).",
        "hint": "↑↓ server · Esc close",
    },
    zh={
        "title": "工具服务器",
        "none": "没有配置工具服务器：请在配置文件中添加后重启。",
        "ready": "就绪", "starting": "启动中", "failed": "失败", "stopped": "已停止",
        "disabled": "已禁用",
        "tools": "{n} 个工具", "tools_one": "1 个工具",
        "started": "启动用时 {s:.1f} 秒",
        "error": "错误：{error}",
        "no_tools": "（暂）未提供工具。",
        "hint": "↑↓ 选择服务器 · Esc 关闭",
    },
)


def _safe(text: object) -> str:
    return " ".join(visible(str(text or "")).split())


class McpServersScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    DEFAULT_CSS = dialog_css("McpServersScreen", max_width=120, max_height=36) + """
    McpServersScreen #panes { height: 1fr; }
    McpServersScreen OptionList { width: 2fr; height: 1fr; border: none; }
    McpServersScreen #detail { width: 3fr; height: 1fr; padding: 0 1;
                               border-left: vkey $panel; }
    McpServersScreen #none, McpServersScreen #hint { color: $text-muted; }
    McpServersScreen .error { color: $error; }
    """

    def __init__(self, statuses: Callable[[], Sequence[Any]]) -> None:
        super().__init__()
        self._statuses = statuses  # the hub's statuses(), read again on every redraw
        self.servers: list[Any] = list(statuses())

    def _t(self, key: str, **values: object) -> str:
        return SERVERS_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            if not self.servers:
                yield Static(self._t("none"), id="none", markup=False)
            else:
                with Horizontal(id="panes"):
                    yield OptionList(*self._options())
                    yield VerticalScroll(Static(id="detail-text"), id="detail")
            yield Static(self._t("hint"), id="hint", markup=False)

    def _state(self, status: Any) -> str:
        state = str(status.state)
        return self._t(state) if state in SERVERS_TEXTS.tables["en"] else _safe(state)

    def _count(self, status: Any) -> str:
        n = len(status.tools)
        return self._t("tools_one") if n == 1 else self._t("tools", n=n)

    def _options(self) -> list[Option]:
        out = []
        for i, status in enumerate(self.servers):
            state = str(status.state)
            line = Content.assemble(
                (MARKS.get(state, "?"), STYLES.get(state, "")), " ",
                (_safe(status.name), "bold"), "  ",
                (f"{self._state(status)} · {_safe(status.transport)} · {self._count(status)}",
                 "$text-muted"))
            out.append(Option(line, id=str(i)))
        return out

    def on_mount(self) -> None:
        for options in self.query(OptionList):
            options.focus()
            options.highlighted = 0
        self._show(0)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(int(event.option.id or 0))

    def _show(self, index: int) -> None:
        if not self.servers or not 0 <= index < len(self.servers):
            return
        status = self.servers[index]
        state = str(status.state)
        lines: list[Content] = [
            Content.assemble((MARKS.get(state, "?") + " ", STYLES.get(state, "")),
                             (_safe(status.name), "bold"), f"  {self._state(status)}"),
            Content(" · ".join(p for p in (_safe(status.transport), _safe(status.detail))
                               if p)),
        ]
        started = status.started_s
        if started is not None:
            lines.append(Content(self._t("started", s=started)))
        if status.error:
            lines.append(Content.styled(self._t("error", error=_safe(status.error)), "$error"))
        lines.append(Content(""))
        tools = list(status.tools)
        lines.append(Content.styled(self._count(status), "bold"))
        if not tools:
            lines.append(Content.styled(self._t("no_tools"), "$text-muted"))
        for spec in tools:
            name = _safe(spec.tool or spec.name)
            lines.append(Content.styled(name, "$text-accent"))
            description = visible(spec.description or "").strip()
            if description:
                lines.append(Content("  " + "\n  ".join(description.splitlines()[:6])))
        self.query_one("#detail-text", Static).update(Content("\n").join(lines))

    def refresh_servers(self) -> None:
        """A server changed state: show the list as the hub has it now."""
        servers = list(self._statuses())
        if len(servers) != len(self.servers) or not self.servers:
            self.servers = servers
            self.call_later(self.recompose)
            return
        self.servers = servers
        options = self.query_one(OptionList)
        highlighted = options.highlighted or 0
        options.clear_options()
        options.add_options(self._options())
        options.highlighted = highlighted
        self._show(highlighted)

    def action_close(self) -> None:
        self.dismiss(None)
