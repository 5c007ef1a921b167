"""A line in the conversation that is not a message: compaction, retries, errors, paging."""

from __future__ import annotations

from textual.widgets import Static

from jarvis_tui.core.safety.textsafe import terminal_safe


class Notice(Static):
    DEFAULT_CSS = """
    Notice { height: auto; margin: 0 0 1 0; padding: 0 1; color: $text-muted; }
    Notice.-compact { color: $accent; border-top: dashed $accent; border-bottom: dashed $accent;
                      text-align: center; }
    Notice.-warning { color: $warning; }
    Notice.-error { color: $error; border-left: tall $error; }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(terminal_safe(text), markup=False, classes=f"-{kind}")
        self.kind = kind

    def copy(self) -> Notice:
        """A new notice with this one's current text: a removed widget cannot be mounted again."""
        return Notice(str(self.content), self.kind)
