"""Plain text of any size, wrapped to the width and scrolled, drawing only the rows on screen.

The conversation shows a huge message cut (widgets/huge_text.py); this is where all of it can be
read. It keeps the text and where each screen row starts (8 bytes a row), never a widget or a
rendered line per row, so a 10 MB message costs about its own size again, not gigabytes.
"""

from __future__ import annotations

from array import array

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

TAB = "    "


def row_starts(text: str, width: int) -> array:
    """Where each row begins when `text` is wrapped at `width` cells (lines broken at their
    line breaks, then every `width` cells; wide characters count two)."""
    width = max(width, 2)
    starts = array("q")
    pos, end_of_text = 0, len(text)
    ascii_only = text.isascii()
    while True:
        newline = text.find("\n", pos)
        end = end_of_text if newline < 0 else newline
        starts.append(pos)
        if end - pos > width:
            if ascii_only or text[pos:end].isascii():
                starts.extend(range(pos + width, end, width))
            else:
                starts.extend(_wide_breaks(text, pos, end, width))
        if newline < 0:
            return starts
        pos = newline + 1


def _wide_breaks(text: str, pos: int, end: int, width: int) -> list[int]:
    breaks: list[int] = []
    used = 0
    for i in range(pos, end):
        cells = get_character_cell_size(text[i])
        if used + cells > width:
            breaks.append(i)
            used = 0
        used += cells
    return breaks


class TextPager(ScrollView, can_focus=True):
    DEFAULT_CSS = "TextPager { height: 1fr; }"

    def __init__(self, text: str, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        # Tabs would be drawn as one cell and break the wrapping: spaces, once.
        self.text = text.replace("\t", TAB) if "\t" in text else text
        self._rows = array("q", [0])
        self._width = 0

    @property
    def rows(self) -> int:
        return len(self._rows)

    def on_resize(self) -> None:
        self._wrap(self.scrollable_content_region.width)

    def _wrap(self, width: int) -> None:
        """Rows for this width, keeping the text at the top of the view where it was."""
        if width <= 0 or width == self._width:
            return
        top = self._rows[min(round(self.scroll_y), len(self._rows) - 1)]
        self._width = width
        self._rows = row_starts(self.text, width)
        self.virtual_size = Size(width, len(self._rows))
        self.scroll_to(y=self.row_of(top), animate=False, immediate=True)

    def row_of(self, offset: int) -> int:
        """The row showing character `offset` of the text."""
        lo, hi = 0, len(self._rows) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._rows[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def row_text(self, row: int) -> str:
        start = self._rows[row]
        end = self._rows[row + 1] if row + 1 < len(self._rows) else len(self.text)
        line = self.text[start:end]
        return line[:-1] if line.endswith("\n") else line

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        self._wrap(width)  # drawn before the first resize: never a row of the whole text
        row = round(self.scroll_y) + y
        if not 0 <= row < len(self._rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        line = self.row_text(row)
        strip = Strip([Segment(line, self.rich_style)], cell_len(line))
        return strip.extend_cell_length(width, self.rich_style).crop(0, width)
