"""Which code block to copy, when a message has several: one line each, its number, language,
length and first line. A number key or Enter picks one; Esc copies nothing. Dismisses with the
block's index, or None."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.code_blocks import CodeBlock
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

CODE_PICKER_TEXTS = Texts(
    en={"title": "Copy a code block",
        "code": "code",
        "lines": "{n} lines",
        "one_line": "1 line",
        "hint": "1–9 or Enter copy · ↑↓ move · Esc cancel"},
    zh={"title": "复制代码块",
        "code": "代码",
        "lines": "{n} 行",
        "one_line": "1 行",
        "hint": "1–9 或 Enter 复制 · ↑↓ 移动 · Esc 取消"},
)


class CodePicker(ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    DEFAULT_CSS = dialog_css("CodePicker", max_width=90, max_height=20, height="auto") + """
    CodePicker OptionList { height: auto; max-height: 14; border: none; }
    CodePicker #hint { color: $text-muted; }
    """

    def __init__(self, blocks: list[CodeBlock]) -> None:
        super().__init__()
        self.blocks = blocks

    def _t(self, key: str, **values: object) -> str:
        return CODE_PICKER_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield OptionList(*(Option(self._label(i, block), id=str(i))
                               for i, block in enumerate(self.blocks)))
            yield Static(self._t("hint"), id="hint", markup=False)

    def _label(self, i: int, block: CodeBlock) -> Content:
        size = self._t("one_line") if block.lines == 1 else self._t("lines", n=block.lines)
        head = f"{i + 1} · {block.lang or self._t('code')} · {size} · "
        # Content: the code is text, never markup.
        return Content.assemble((head, "bold $text-accent"), block.preview())

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_key(self, event: events.Key) -> None:
        if event.character and event.character in "123456789" \
                and int(event.character) <= len(self.blocks):
            event.stop()
            self.dismiss(int(event.character) - 1)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_close(self) -> None:
        self.dismiss(None)
