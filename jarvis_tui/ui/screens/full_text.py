"""The whole text of one message, however large, as plain text that scrolls (V in message mode).

The conversation shows a message past huge_text.CUT_AT characters cut; this screen is where the
rest is read, drawing only the rows in view (widgets/text_pager.py).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from jarvis_tui.core.messages import Message
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.widgets.text_pager import TextPager

FULL_TEXT_TEXTS = Texts(
    en={"title": "The whole message: {chars} characters, {lines} lines, as plain text",
        "hint": "↑↓ PgUp PgDn Home End scroll · Esc close · /export writes it to a file"},
    zh={"title": "完整消息：{chars} 个字符，{lines} 行，纯文本显示",
        "hint": "↑↓ PgUp PgDn Home End 滚动 · Esc 关闭 · /export 导出到文件"},
)


class FullTextScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    DEFAULT_CSS = """
    FullTextScreen { background: $background; }
    FullTextScreen #title { color: $primary; text-style: bold; height: 1; padding: 0 1; }
    FullTextScreen TextPager { padding: 0 1; }
    FullTextScreen #hint { color: $text-muted; height: 1; padding: 0 1; }
    """

    def __init__(self, message: Message) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        lang = ui_language(self.app)
        text = self.message.content
        lines = text.count("\n") + 1
        yield Static(FULL_TEXT_TEXTS(lang, "title", chars=f"{len(text):,}", lines=f"{lines:,}"),
                     markup=False,
                     id="title")
        yield TextPager(terminal_safe(text), id="pager")
        yield Static(FULL_TEXT_TEXTS(lang, "hint"), markup=False, id="hint")

    def on_mount(self) -> None:
        self.query_one(TextPager).focus()

    def action_close(self) -> None:
        self.dismiss(None)
