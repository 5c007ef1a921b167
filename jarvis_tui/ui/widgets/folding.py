"""While a reply streams at the bottom, the messages scrolled out above are folded away.

Each batch of streamed text relays out the screen, and Textual's layout visits every mounted
widget on every pass: a page of stored Markdown replies above the reply is ~150 widgets, which
doubles the cost of each pass (bench/ui/ui.py, 5,000-message session) while the user is typing. The
views wholly above the viewport are hidden and one blank `Folded` block of the same height stands
in for them, so the scroll position, the scrollbar and paging see the same geometry. They stay
folded after the reply (unfolding costs a relayout of them all, ~130 ms); everything unfolds when
the user scrolls away from the bottom, when the width changes (and with it the heights), or when
the mounted slice changes.
"""

from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.widget import Widget


class Folded(Widget):
    """Blank space exactly as tall as the views it stands in for, margins included."""

    DEFAULT_CSS = "Folded { height: auto; }"

    def __init__(self, widgets: list[Widget], rows: int, margin: tuple[int, int],
                 width: int) -> None:
        super().__init__()
        self.widgets = widgets
        self.content_width = width  # the heights hold at this width of the window's content
        self.styles.height = rows
        self.styles.margin = (margin[0], 0, margin[1], 0)


def fold_above(window: ScrollableContainer, keep: Widget) -> tuple[Folded, list[Folded]] | None:
    """Hide the displayed children that end above the viewport (never `keep`, nor anything after
    it). Returns one block standing in for them and for the blocks already folded above (to mount
    before the first of them, and to remove), or None when nothing new is above."""
    top = window.scroll_y
    above: list[Widget] = []  # folded blocks and views, top to bottom, all above the viewport
    for child in window.children:
        if child is keep:
            break
        if not child.display:
            continue
        region = child.virtual_region
        if not region or region.bottom >= top:
            break
        above.append(child)
    fresh = [child for child in above if not isinstance(child, Folded)]
    if not fresh:
        return None
    old = [child for child in above if isinstance(child, Folded)]
    first, last = above[0], above[-1]
    widgets = [w for child in above
               for w in (child.widgets if isinstance(child, Folded) else [child])]
    block = Folded(widgets, last.virtual_region.bottom - first.virtual_region.y,
                   (first.styles.margin.top, last.styles.margin.bottom),
                   window.scrollable_content_region.width)
    for child in fresh:
        child.display = False
    return block, old


async def unfold(window: ScrollableContainer) -> bool:
    """Show everything folded again; True if anything was (its geometry is known after the
    next refresh)."""
    blocks = list(window.query_children(Folded))
    if not blocks:
        return False
    with window.app.batch_update():
        for block in blocks:
            for child in block.widgets:
                child.display = True
        await window.remove_children(blocks)
    return True
