"""The message cursor: while the conversation has the focus (Tab), one message view is selected,
and the message-scope actions of ui/actions.py act on it.

Up and Down move it (notices are not messages and are passed over), paging earlier or later
messages in at the ends of the mounted slice; Home and End go to the first and last mounted one.
The selection is drawn only while the conversation has the focus. Moving to a message scrolls it
into view, and one taller than the window with its top at the top, so it reads from its start.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message as TextualMessage
from textual.widget import Widget

from jarvis_tui.ui.actions import message_bindings
from jarvis_tui.ui.widgets import folding
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.paged_scroll import PagedScroll


class MessageCursor(PagedScroll):
    class Selected(TextualMessage):
        """Another message view is selected (None: none is)."""

        def __init__(self, cursor: MessageCursor, view: MessageView | None) -> None:
            super().__init__()
            self.cursor = cursor
            self.view = view

        @property
        def control(self) -> MessageCursor:
            return self.cursor

    BINDINGS = [
        Binding("up", "select_previous", show=False),
        Binding("down", "select_next", show=False),
        Binding("home", "select_first", show=False),
        Binding("end", "select_last", show=False),
        Binding("escape", "back_to_prompt", "Back to the prompt"),
        Binding("tab", "back_to_prompt", show=False),
        *message_bindings(),
    ]

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._selected: MessageView | None = None

    @property
    def selected_view(self) -> MessageView | None:
        """The selected view, while it is mounted here (a session switch or paging can take it
        away)."""
        view = self._selected
        return view if view is not None and view.parent is self else None

    def select(self, view: MessageView | None) -> None:
        """Select `view`, one of this conversation's, and scroll it into view."""
        if view is not None and view.parent is not self:
            raise ValueError("the view is not in this conversation")
        self._choose(view, scroll=True)

    def forget_selection(self) -> None:
        """The next focus starts again at the newest message on screen."""
        self._choose(None, scroll=False)

    def action_back_to_prompt(self) -> None:
        raise NotImplementedError  # Conversation's: it knows where the prompt is

    def _choose(self, view: MessageView | None, *, scroll: bool) -> None:
        old = self.selected_view
        if old is not None and old is not view:
            old.remove_class("-selected")
        self._selected = view
        if view is not None:
            view.set_class(self.has_focus, "-selected")
            if scroll:
                # After the refresh: a page just mounted, or views just unfolded, have their
                # place only then.
                self.call_after_refresh(self._bring_into_view, view)
        if view is not old:
            self.post_message(self.Selected(self, view))

    # -- where the views are on screen ---------------------------------------------------------

    def _in_sight(self, view: Widget) -> bool:
        region = view.virtual_region
        top = round(self.scroll_y)
        return bool(region) and region.y < top + self.scrollable_content_region.height \
            and region.bottom > top

    def _shown(self) -> list[MessageView]:
        return [view for view in self.views() if view.display]

    def _newest_in_sight(self) -> MessageView | None:
        views = self._shown()
        return next((v for v in reversed(views) if self._in_sight(v)), views[-1] if views else None)

    def _bring_into_view(self, view: MessageView) -> None:
        if view.parent is not self or not view.display:
            return
        region = view.virtual_region
        window = self.scrollable_content_region.height
        now = round(self.scroll_y)
        if region.y < now or region.height > window:
            target = region.y  # too tall to show whole: its start
        elif region.bottom > now + window:
            target = region.bottom - window
        else:
            return
        if target != now:
            self.scroll_to(y=target, animate=False, immediate=True)

    # -- focus and the mouse ---------------------------------------------------------------------

    def on_focus(self) -> None:
        view = self.selected_view
        if view is None or not self._in_sight(view):
            view = self._newest_in_sight()
        if view is not None:
            self._choose(view, scroll=not self._in_sight(view))
            view.add_class("-selected")

    def on_blur(self) -> None:
        # Kept, not drawn: a dialog opened over the screen gives the focus back to it.
        view = self.selected_view
        if view is not None:
            view.remove_class("-selected")

    def on_click(self, event: events.Click) -> None:
        node = event.widget
        while node is not None and node is not self:
            if isinstance(node, MessageView) and node.parent is self:
                self._choose(node, scroll=False)
                return
            node = node.parent

    # -- the keys --------------------------------------------------------------------------------

    async def _ready(self) -> list[MessageView]:
        """The views, everything folded above a streaming reply shown again: the reader is
        going back over them."""
        if self.query_children(folding.Folded):
            await self.unfold()
        return self.views()

    async def _step(self, step: int) -> None:
        views = await self._ready()
        current = self.selected_view
        if current is None:
            self.select(self._newest_in_sight())
            return
        i = views.index(current) + step
        if not 0 <= i < len(views):
            if not await self.load_beyond(older=step < 0):
                return
            views = self.views()
            if current not in views:
                return
            i = views.index(current) + step
            if not 0 <= i < len(views):
                return
        self.select(views[i])

    async def action_select_previous(self) -> None:
        await self._step(-1)

    async def action_select_next(self) -> None:
        await self._step(1)

    async def action_select_first(self) -> None:
        views = await self._ready()
        if views:
            self.select(views[0])

    async def action_select_last(self) -> None:
        views = await self._ready()
        if views:
            self.select(views[-1])

    def _after_page(self) -> None:
        """PageUp and PageDown scroll; a selection scrolled out of sight goes to the nearest
        message still in it, so a key never acts on one the user cannot see."""
        view = self.selected_view
        if view is None or self._in_sight(view):
            return
        shown = [v for v in self._shown() if self._in_sight(v)]
        if shown:
            below = view.virtual_region.y >= round(self.scroll_y)
            self._choose(shown[-1] if below else shown[0], scroll=False)

    def action_page_up(self) -> None:
        self._then_check(lambda: self.scroll_page_up(animate=False))
        self.call_after_refresh(self._after_page)

    def action_page_down(self) -> None:
        self._then_check(lambda: self.scroll_page_down(animate=False))
        self.call_after_refresh(self._after_page)
