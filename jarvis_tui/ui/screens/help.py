"""The help screen (F1): every key and slash command with what it does, and how to read the gauge.

The caller passes the rows already translated, so this list can never drift from the real
bindings; the screen only owns its headings and the gauge note.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

MAX_KEY_COLUMN = 28  # wider keys wrap rather than squeeze the descriptions

HELP_TEXTS = Texts(
    en={
        "title": "Help",
        "keys": "Keys",
        "message": "On a selected message (Tab to the conversation)",
        "commands": "Commands",
        "none": "(none)",
        "gauge": "The token gauge shows how full the context budget is: {green} means plenty "
                 "of room, {yellow} that compaction is near, {red} that the threshold is passed "
                 "and older turns are summarised before the next request. Compaction only "
                 "changes what is sent to the model: every message stays in the session store "
                 "and can still be read and exported.",
        "green": "green",
        "yellow": "yellow",
        "red": "red",
        "hint": "Esc, F1 or q close · ↑↓ PgUp PgDn scroll",
    },
    zh={
        "title": "帮助",
        "keys": "按键",
        "message": "选中的消息上（按 Tab 进入对话）",
        "commands": "命令",
        "none": "（无）",
        "gauge": "令牌仪表显示上下文预算的占用：{green}表示空间充足，{yellow}表示即将压缩，"
                 "{red}表示已超过阈值，发送下一个请求前会先把较早的对话压缩成摘要。"
                 "压缩只改变发送给模型的内容：每条消息都完整保留在会话存储中，仍可查看和导出。",
        "green": "绿色",
        "yellow": "黄色",
        "red": "红色",
        "hint": "Esc、F1 或 q 关闭 · ↑↓ PgUp PgDn 滚动",
    },
)

_GAUGE_STYLES = {
    "green": "bold $text-success",
    "yellow": "bold $text-warning",
    "red": "bold $text-error",
}


class HelpScreen(ModalScreen[None]):
    """Keys and commands in two columns, scrollable; Esc, F1 or q closes it."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close")]

    DEFAULT_CSS = dialog_css("HelpScreen", max_width=100, max_height=40) + """
    HelpScreen #scroll {
        height: 1fr;
    }
    HelpScreen .section {
        color: $text-accent;
        text-style: bold underline;
        margin-top: 1;
    }
    HelpScreen .row {
        height: auto;
    }
    HelpScreen .key {
        color: $text-primary;
        text-style: bold;
        padding-right: 2;
    }
    HelpScreen .desc {
        width: 1fr;
    }
    HelpScreen .none {
        color: $text-muted;
    }
    HelpScreen #gauge {
        margin-top: 1;
        padding: 0 1;
        background: $boost;
    }
    HelpScreen #hint {
        color: $text-muted;
    }
    """

    def __init__(self, keys: list[tuple[str, str]], commands: list[tuple[str, str]],
                 message_keys: list[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.key_rows = list(keys)
        self.command_rows = list(commands)
        self.message_rows = list(message_keys or [])

    def _t(self, key: str, **values: object) -> str:
        return HELP_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        names = [name for name, _ in self.key_rows + self.message_rows + self.command_rows]
        width = min(max((cell_len(n) for n in names), default=0), MAX_KEY_COLUMN) + 2
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            with VerticalScroll(id="scroll"):
                yield from self._section("keys", self.key_rows, width)
                # After the commands: those are what most people open F1 for, and stay in sight.
                yield from self._section("commands", self.command_rows, width)
                if self.message_rows:
                    yield from self._section("message", self.message_rows, width)
                yield Static(self._gauge_note(), id="gauge")
            yield Static(self._t("hint"), id="hint", markup=False)

    def _section(self, name: str, rows: list[tuple[str, str]], width: int) -> ComposeResult:
        yield Static(self._t(name), id=f"{name}-title", classes="section", markup=False)
        if not rows:
            yield Static(self._t("none"), classes="none", markup=False)
        for key, description in rows:
            # Both columns are text: a key like "[" or a description with brackets is literal.
            with Horizontal(classes=f"row {name}-row"):
                label = Static(key, classes="key", markup=False)
                label.styles.width = width
                yield label
                yield Static(description, classes="desc", markup=False)

    def _gauge_note(self) -> Content:
        # The colour words are drawn in the colours the gauge uses, whatever the theme.
        parts: list[str | tuple[str, str]] = []
        for i, piece in enumerate(re.split(r"\{(\w+)\}", self._t("gauge"))):
            if i % 2:
                parts.append((self._t(piece), _GAUGE_STYLES[piece]))
            elif piece:
                parts.append(piece)
        return Content.assemble(*parts)

    def on_mount(self) -> None:
        self.query_one("#scroll", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
