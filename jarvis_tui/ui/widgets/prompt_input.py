"""The prompt: a multi-line TextArea where Enter sends and Ctrl+J (or Alt+Enter, or Shift+Enter
where the terminal reports it) inserts a new line."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from jarvis_tui.ui.i18n import Texts, translate_bindings, ui_language

T = Texts(en={"key_submit": "Send"}, zh={"key_submit": "发送"})
NEWLINE_KEYS = ("ctrl+j", "alt+enter", "shift+enter")


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $primary 40%; }
    PromptInput:focus { border: tall $primary; }
    """
    BINDINGS = [Binding("enter", "submit", "Send", show=True, priority=True)]

    class Submitted(Message):
        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=False, **kwargs)
        translate_bindings(self, ui_language(self.app), T)

    async def _on_key(self, event: events.Key) -> None:
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        text = self.text
        if text.strip():
            self.post_message(self.Submitted(self, text))

    def restore(self, text: str) -> None:
        """Put text the server did not take back, ahead of anything typed since."""
        current = self.text
        self.load_text(text if not current.strip() else f"{text}\n{current}")
        self.move_cursor(self.document.end)
