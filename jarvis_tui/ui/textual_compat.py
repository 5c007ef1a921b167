"""Every use of Textual's private API, in one place, each one feature-detected with a fallback.

The runtime allows any textual 8.x. A private name renamed in a minor release must cost one
feature, never stop the app from starting or a reply from showing:
- the scroll anchor's "released by the user" flag: without it, an anchored view counts as
  following (it may then pull the view down while the user reads back, which Textual's own
  anchor does too);
- a screen's bindings table: without it, key descriptions stay in English;
- the compositor that draws a streaming reply's finished blocks once: without it, nothing is
  settled, and a long reply lays out every block on each batch (slower, still correct).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

try:  # private: the class Textual lays a screen out with
    from textual._compositor import Compositor
except ImportError:  # pragma: no cover - a Textual that moved it
    Compositor = None  # type: ignore[assignment,misc]


def anchor_released(widget: Widget) -> bool:
    """Whether the user scrolled an anchored widget away from its end (Textual keeps this apart
    from the anchor itself); False where Textual has no such flag."""
    return bool(getattr(widget, "_anchor_released", False))


def bindings_by_key(node: object) -> dict[str, list[Any]] | None:
    """The node's own key -> bindings table, to rewrite in place, or None where Textual keeps
    it under another name."""
    table = getattr(getattr(node, "_bindings", None), "key_to_bindings", None)
    return table if isinstance(table, dict) else None


class Drawing:
    """A widget laid out alone, as the screen would lay it out at that size."""

    def __init__(self, compositor: Any) -> None:
        self._compositor = compositor

    @property
    def regions(self) -> dict[Widget, Any]:
        """Each widget drawn -> its geometry (`.region`)."""
        return self._compositor.full_map

    def lines(self, width: int, top: int, bottom: int) -> list[Strip] | None:
        """Rows top..bottom as drawn, without links or selection offsets (they would point at
        what the drawing was made from); None where Textual cannot render a region alone."""
        render: Callable[..., Any] | None = getattr(self._compositor, "_render_chops", None)
        if render is None:
            return None
        chops = render(Region(0, top, width, bottom - top), lambda y: top <= y < bottom)
        return [Strip.join(chop.values()).discard_meta() for chop in chops[top:bottom]]


def lay_out_alone(widget: Widget, size: Size) -> Drawing | None:
    """`widget` laid out by Textual's own compositor, or None where there is none to use."""
    if Compositor is None:
        return None
    compositor = Compositor()
    if not hasattr(compositor, "reflow") or not hasattr(compositor, "full_map"):
        return None
    compositor.reflow(widget, size)
    return Drawing(compositor)
