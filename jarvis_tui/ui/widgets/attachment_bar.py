"""The files waiting to go with the next message, above the prompt: a line each with its name,
size and tokens (a click on it removes it), then what sending them does to the window. Hidden
while there is none."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from jarvis_tui.core.safety.textsafe import visible


@dataclass(frozen=True)
class Chip:
    label: str  # "deploy.py · 77 B · 120 tokens", in the user's language
    warning: str = ""  # "larger than the window …": drawn in the warning colour


class AttachmentBar(Widget):
    DEFAULT_CSS = """
    AttachmentBar { height: auto; display: none; padding: 0 1; color: $text; }
    AttachmentBar.-some { display: block; }
    """

    class Removed(Message):
        """The user clicked the attachment at `index` away."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chips: list[Chip] = []
        self.footer = ""  # what the send will do: compaction first, a hint to remove

    def show(self, chips: list[Chip], footer: str = "") -> None:
        self.chips, self.footer = chips, footer
        self.set_class(bool(chips), "-some")
        self.refresh(layout=True)

    def render(self) -> Content:
        lines = []
        for i, chip in enumerate(self.chips, 1):
            # A name is the file system's: shown with nothing hidden or reordered.
            line = Content.assemble(("📎 ", "$accent"), f"{i} ", visible(chip.label))
            if chip.warning:
                line = Content.assemble(line, ("  ⚠ " + chip.warning, "$warning"))
            lines.append(line)
        if self.footer:
            lines.append(Content.styled(self.footer, "$text-muted"))
        return Content("\n").join(lines)

    def on_click(self, event: events.Click) -> None:
        if 0 <= event.y < len(self.chips):
            self.post_message(self.Removed(event.y))
