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
    # Shown in the footer, but handled in on_key: a priority binding runs as the app receives
    # the key, ahead of the letters before it in the same burst (a fast typist, a slow link),
    # and would send half a message and wipe the rest.
    BINDINGS = [Binding("enter", "submit", "Send", show=True)]

    class Submitted(Message):
        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=False, **kwargs)
        translate_bindings(self, ui_language(self.app), T)

    def on_key(self, event: events.Key) -> None:
        # Public handlers run before the base class's own (Textual walks the classes in order);
        # prevent_default keeps TextArea from also inserting the key.
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
        elif event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")

    def action_submit(self) -> None:
        """Take the text out now, in key order, so keys typed after Enter stay for the next
        message; whoever cannot use it puts it back with restore()."""
        text = self.text
        if text.strip():
            self.clear()
            self.post_message(self.Submitted(self, text))

    def restore(self, text: str) -> None:
        """Put text the server did not take back, ahead of anything typed since."""
        current = self.text
        self.load_text(text if not current.strip() else f"{text}\n{current}")
        self.move_cursor(self.document.end)
