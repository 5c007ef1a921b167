"""A streaming reply's finished blocks, drawn once.

Each batch of streamed text relays out the screen, and Textual's layout visits every displayed
widget on every pass: a 2,000-token reply with lists and fences is ~200 widgets, so late in the
reply a pass takes 30-60 ms on a 2-core VM, and a key typed meanwhile waits for it (bench/ui/ui.py).
Only the last block of a streaming Markdown document can still change (`Markdown.append`
re-parses from its start), so before each batch the blocks above it are drawn into lines, shown
by one `SettledImage`, and hidden: the layout then visits a handful of widgets however long the
reply grows. The real blocks never leave the document; `unsettle` shows them again when the reply
ends (links and text selection need them), or when the width or theme changes and the drawn lines
would be wrong.

Drawing uses Textual's own compositor on the document alone (through ui/textual_compat.py), so
the lines are exactly what the screen showed (tests/ui/test_streaming_settled.py compares them
cell by cell).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from jarvis_tui.ui.textual_compat import lay_out_alone

SETTLE_AT = 2  # live blocks in the document before the finished ones are settled
KEEP_LIVE = 1  # the last block: the parser may still rewrite it
# Each settling adds an image; past this many, the next one redraws them all into one, so the
# widget count stays small however long the reply (redrawing drawn lines is cheap).
MAX_IMAGES = 6


class SettledImage(Widget):
    """Lines drawn from real Markdown blocks, with the margins the first and last block had, so
    the gaps around it collapse as the blocks' own would."""

    DEFAULT_CSS = "SettledImage { height: auto; }"

    def __init__(self, strips: list[Strip], width: int, top: int, bottom: int) -> None:
        super().__init__()
        self._strips = strips
        self.drawn_width = width
        self.styles.margin = (top, 0, bottom, 0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._strips)

    def render_line(self, y: int) -> Strip:
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(self.size.width)


def live_blocks(md: Markdown) -> list[MarkdownBlock]:
    return [c for c in md.children if isinstance(c, MarkdownBlock) and c.display]


def settle(md: Markdown) -> tuple[SettledImage, list[SettledImage]] | None:
    """Draw the document's finished blocks into one image and hide them. Returns the image to
    mount before the live blocks and the older images it replaces (to remove), or None when
    there is nothing to settle yet (too few blocks, or blocks the screen has not laid out)."""
    blocks = live_blocks(md)
    if len(blocks) < SETTLE_AT:
        return None
    done = blocks[:-KEEP_LIVE]
    if not all(node.is_mounted for block in done for node in block.walk_children(with_self=True)):
        return None
    size = md.outer_size
    drawing = lay_out_alone(md, size)
    if drawing is None:
        return None  # this Textual cannot draw a document alone: every block stays live
    regions = drawing.regions
    images = list(md.query_children(SettledImage))
    replaced = images if len(images) >= MAX_IMAGES else []
    first: Widget = replaced[0] if replaced else done[0]
    if first not in regions or done[-1] not in regions or not _as_on_screen(done, regions):
        return None
    top, bottom = regions[first].region.y, regions[done[-1]].region.bottom
    if bottom <= top:
        return None
    strips = drawing.lines(size.width, top, bottom)
    if strips is None:
        return None
    image = SettledImage(strips, size.width, first.styles.margin.top,
                         done[-1].styles.margin.bottom)
    for block in done:
        block.display = False
    return image, replaced


def _as_on_screen(widgets: list[Widget], regions: dict) -> bool:
    """Every widget has the size on the screen that the drawing gave it: a block the screen has
    not laid out again since the width changed would be drawn at the wrong width."""
    for widget in widgets:
        for node in widget.walk_children(with_self=True):
            geometry = regions.get(node)
            if geometry is None:
                continue
            if node.outer_size != geometry.region.size:  # (0, 0) before its first layout
                return False
    return True


async def unsettle(md: Markdown) -> None:
    """Show the real blocks again and drop the images."""
    images = list(md.query_children(SettledImage))
    if not images:
        return
    with md.app.batch_update():
        for block in md.children:
            if isinstance(block, MarkdownBlock):
                block.display = True
        await md.remove_children(images)
