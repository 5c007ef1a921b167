"""While a reply streams at the bottom, the messages scrolled out above are folded away.

Each batch of streamed text relays out the screen, and Textual's layout visits every mounted
widget on every pass: a page of stored Markdown replies above the reply is ~150 widgets, which
doubles the cost of each pass (bench/ui.py, 5,000-message session) while the user is typing. The
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

    def __init__(self, widgets: list[Widget], width: int) -> None:
        super().__init__()
        self.widgets = widgets
        self.content_width = width  # the heights hold at this width of the window's content
        first, last = widgets[0], widgets[-1]
        self.rows = last.virtual_region.bottom - first.virtual_region.y
        self.styles.height = self.rows
        self.styles.margin = (first.styles.margin.top, 0, last.styles.margin.bottom, 0)


def fold_above(window: ScrollableContainer, keep: Widget) -> Folded | None:
    """Hide the displayed children that end above the viewport (never `keep`, nor anything after
    it), and return the block to mount in their place, or None when there are none."""
    top = window.scroll_y
    run: list[Widget] = []
    for child in window.children:
        if child is keep:
            break
        if isinstance(child, Folded) or not child.display:
            continue
        region = child.virtual_region
        if not region or region.bottom >= top:
            break
        run.append(child)
    if not run:
        return None
    block = Folded(run, window.scrollable_content_region.width)
    for child in run:
        child.display = False
    return block


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
