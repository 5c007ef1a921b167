"""The list `@` opens above the prompt: the paths that match what follows the @, best first,
filling in while the folder is walked. The prompt keeps the focus; its Up, Down, Tab, Enter
and Esc move in the list, pick or close it (PromptInput.MentionKey)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from jarvis_tui.core.safety.textsafe import visible


class MentionList(OptionList):
    DEFAULT_CSS = """
    MentionList { display: none; height: auto; max-height: 10; border: none;
                  padding: 0 1; background: $panel; }
    MentionList.-open { display: block; }
    """
    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._paths: list[str] = []

    def show_paths(self, paths: list[str], note: str = "") -> None:
        """The options, keeping the highlight on the same path when it is still offered."""
        current = self.picked()
        self.clear_options()
        # A name is the file system's: nothing in it may hide or reorder text.
        self.add_options([Option(Content(visible(p)), id=str(i)) for i, p in enumerate(paths)])
        if note:
            self.add_option(Option(Content.styled(note, "$text-muted"), disabled=True))
        self._paths = paths
        if paths:
            self.highlighted = paths.index(current) if current in paths else 0
        self.set_class(True, "-open")

    def close(self) -> None:
        self.set_class(False, "-open")
        self._paths = []

    @property
    def open(self) -> bool:
        return self.has_class("-open")

    def picked(self) -> str | None:
        paths, at = self._paths, self.highlighted
        return paths[at] if at is not None and 0 <= at < len(paths) else None

    def move(self, step: int) -> None:
        paths = self._paths
        if paths:
            self.highlighted = ((self.highlighted or 0) + step) % len(paths)
