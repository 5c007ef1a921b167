"""Which part of a long session the conversation mounts, and paging the rest in and out.

Only `records[start:end]` have widgets. Reaching the top of the scroll mounts the PAGE messages
before `start`, reaching the bottom the PAGE after `end`; either way at most MAX_VIEWS views stay
mounted (those furthest from the reader go) and the message being read stays where it was on
screen. Widget count and memory so do not grow with the session, and opening one mounts a page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual import events
from textual.containers import VerticalScroll
from textual.widget import Widget

from jarvis_tui.core.messages import Message
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.textual_compat import anchor_released
from jarvis_tui.ui.widgets import folding
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.notice import Notice
from jarvis_tui.ui.widgets.tool_block import ToolInfo, find_call, stored_outcome

# Mounting a view of a Markdown reply costs ~25-35 ms on a 2-core VM, and every frame of a scroll
# costs more the more views are mounted (~50 ms with 50, ~150 ms with 200). So a page is about
# a screenful or two (opening a session mounts one: bench/ui/ui.py, 1.3 s with 30, under 1 s with
# 15), and a few pages stay mounted: going back over them needs no loading.
PAGE = 15
MAX_VIEWS = 120

PAGING_TEXTS = Texts(
    en={"hidden": "… {n} earlier messages above; scroll up to load them "
                  "(Ctrl+Home: the first message)",
        "newer": "… {n} newer messages below; scroll down or press Ctrl+End to return to "
                 "the newest",
        "summarised": "📦 The {n} messages above are summarised; the summary is sent in "
                      "their place (F2 to view or edit)"},
    zh={"hidden": "… 上方还有 {n} 条较早的消息；向上滚动即可加载（Ctrl+Home 跳到第一条）",
        "newer": "… 下方还有 {n} 条较新的消息；向下滚动或按 Ctrl+End 回到最新",
        "summarised": "📦 以上 {n} 条消息已被摘要，请求中以摘要代替（F2 查看或编辑）"},
)


class PagedScroll(VerticalScroll):
    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        # The conversation's own list, not the engine's: the user's message is shown before the
        # engine stores it, and a reply view streams into a record the engine does not hold.
        self.records: list[Message] = []
        self.start = self.end = 0
        self.tail_notes: list[Notice] = []  # the notices after the newest message
        self.lock = asyncio.Lock()  # the screen and the scroll handlers both change the slice
        self._paging = False  # a page is going in and the viewport has not been put back yet
        # How the calls of this run went, by call id: a stored result says less than the
        # engine's events did (denied, how long it took), and a view paged out and back in
        # shows the same.
        self.tool_infos: dict[str, ToolInfo] = {}
        self.stubbed: set[int] = set()  # tool results the request carries as one-line stubs
        # Stored message id -> its state in the next request (core/next_request.py).
        self.request_states: dict[int, str] = {}

    @property
    def lang(self) -> str:
        return ui_language(self.app)

    @property
    def at_tail(self) -> bool:
        return self.end == len(self.records)

    @property
    def following(self) -> bool:
        """Kept at the bottom as content grows: anchored, and not scrolled away by the user
        (Textual keeps the two apart)."""
        return self.is_anchored and not anchor_released(self)

    def views(self) -> list[MessageView]:
        return list(self.query_children(MessageView))

    def _streaming(self) -> bool:
        return any(view.streaming for view in self.views())

    # -- building and replacing the slice ---------------------------------------------------

    def _build(self, start: int, end: int) -> list[Widget]:
        """Views for records[start:end], with the compaction divider after the last covered
        message of a run (its count is the whole session's)."""
        out: list[Widget] = []
        for i in range(start, end):
            out.append(self.view_for(i))
            if self._summary_after(i):
                out.append(self._divider())
        return out

    def view_for(self, i: int) -> MessageView:
        msg = self.records[i]
        if msg.role != "tool":
            return MessageView(msg)
        info = self.tool_infos.get(msg.tool_call_id or "")
        if info is None:
            info = ToolInfo(call=find_call(self.records, i), outcome=stored_outcome(msg))
        return MessageView(msg, info)

    def _divider(self) -> Notice:
        covered = sum(1 for m in self.records if m.covered)
        return Notice(PAGING_TEXTS(self.lang, "summarised", n=covered), "compact")

    def _summary_after(self, i: int) -> bool:
        nxt = self.records[i + 1] if i + 1 < len(self.records) else None
        return self.records[i].covered and (nxt is None or not nxt.covered)

    def _sync(self) -> None:
        # finish() swaps a reply view's message for the stored record; remember that one.
        for i, view in enumerate(self.views(), self.start):
            self.records[i] = view.message

    async def mount_slice(self, start: int, end: int) -> None:
        """Mount records[start:end] in place of everything (the caller holds the lock)."""
        await folding.unfold(self)
        await self.remove_children()
        self.start, self.end = start, end
        widgets = self._build(start, end)
        if start:
            widgets.insert(0, Notice(PAGING_TEXTS(self.lang, "hidden", n=start), "hidden"))
        if self.at_tail:
            self.tail_notes = [notice.copy() for notice in self.tail_notes]
            widgets += self.tail_notes
        else:
            widgets.append(Notice(PAGING_TEXTS(self.lang, "newer", n=len(self.records) - end),
                                  "newer"))
            self.anchor(False)
        await self.mount_all(widgets)

    async def mount_tail(self) -> None:
        self._sync()
        await self.mount_slice(max(0, len(self.records) - PAGE), len(self.records))

    async def oldest(self) -> None:
        """Jump to the first message of the session."""
        async with self.lock:
            # A streaming reply must stay mounted; then the pages come in one by one instead.
            if self.start and not self._streaming():
                self._sync()
                await self.mount_slice(0, min(PAGE, len(self.records)))
        self.scroll_home(animate=False)

    async def newest(self) -> None:
        """Back to the newest message, following new ones again."""
        async with self.lock:
            if not self.at_tail:
                await self.mount_tail()
        self.anchor()

    # -- the edges: "n earlier messages above", "n newer messages below" ----------------------

    def _edge(self, kind: str) -> Notice | None:
        return next((n for n in self.query_children(Notice) if n.kind == kind), None)

    async def _set_edge(self, kind: str, n: int) -> None:
        notice = self._edge(kind)
        if notice is not None and not n:
            await notice.remove()
        elif notice is not None:
            notice.update(PAGING_TEXTS(self.lang, kind, n=n))
        elif n:
            await self.mount(Notice(PAGING_TEXTS(self.lang, kind, n=n), kind),
                             before=0 if kind == "hidden" else None)

    async def prune_top(self) -> None:
        """Unmount the oldest views beyond MAX_VIEWS, and the notices between them."""
        views = self.views()
        extra = len(views) - MAX_VIEWS
        if extra <= 0:
            return
        await folding.unfold(self)
        self._sync()
        doomed: list[Widget] = []
        for child in self.children:
            if child is views[extra]:
                break
            if not (isinstance(child, Notice) and child.kind == "hidden"):
                doomed.append(child)
        await self.remove_children(doomed)
        self.start += extra
        await self._set_edge("hidden", self.start)

    async def _prune_bottom(self) -> None:
        views = self.views()
        extra = len(views) - MAX_VIEWS
        if extra <= 0:
            return
        self._sync()
        children = list(self.children)
        keep = children.index(views[-extra - 1])
        await self.remove_children([c for c in children[keep + 1:]
                                    if not (isinstance(c, Notice) and c.kind == "newer")])
        self.end -= extra
        if self._summary_after(self.end - 1):
            await self.mount(self._divider())  # it went with the views after it
        await self._set_edge("newer", len(self.records) - self.end)
        self.anchor(False)  # new content far below must not pull the reader down

    # -- paging in ---------------------------------------------------------------------------

    async def _load_older(self) -> tuple[MessageView, int] | None:
        views = self.views()
        room = MAX_VIEWS - len(views) if self._streaming() else PAGE
        n = min(PAGE, self.start, room)
        if n <= 0 or not views:
            return None
        ref = views[0]
        offset = ref.virtual_region.y - round(self.scroll_y)
        start = self.start - n
        await self.mount_all(self._build(start, self.start), after=self._edge("hidden"))
        self.start = start
        await self._set_edge("hidden", start)
        await self._prune_bottom()
        return ref, offset

    async def _load_newer(self) -> tuple[MessageView, int] | None:
        views = self.views()
        n = min(PAGE, len(self.records) - self.end)
        if n <= 0 or not views:
            return None
        ref = views[-1]
        offset = ref.virtual_region.y - round(self.scroll_y)
        end = self.end + n
        widgets = self._build(self.end, end)
        self.end = end
        newer = self._edge("newer")
        if self.at_tail:
            if newer is not None:
                await newer.remove()
            self.tail_notes = [notice.copy() for notice in self.tail_notes]
            await self.mount_all(widgets + self.tail_notes)
        else:
            await self.mount_all(widgets, before=newer)
            await self._set_edge("newer", len(self.records) - end)
        await self.prune_top()
        return ref, offset

    async def load_beyond(self, older: bool) -> bool:
        """Page in the messages just before (or after) the mounted ones, as scrolling to that
        edge does; True when some came in. Where they show is the caller's to scroll to."""
        async with self.lock:
            await folding.unfold(self)
            loaded = await (self._load_older() if older else self._load_newer())
        return loaded is not None

    def check_edges(self) -> None:
        """At the top or bottom of the mounted slice with more beyond: page it in."""
        if self._paging or not self.records:
            return
        at_top = self.scroll_y <= 0
        at_bottom = self.scroll_y >= self.max_scroll_y
        if (at_top and self.start) or (at_bottom and not self.at_tail):
            self._paging = True
            # After the refresh, so the edge is judged on the laid-out slice.
            self.call_after_refresh(self._page_in)
        elif at_bottom and not self.is_anchored:
            self.anchor()  # back at the newest: follow new messages again

    async def _page_in(self) -> None:
        loaded = None
        try:
            async with self.lock:
                if await folding.unfold(self):
                    # Where the unfolded views are is known after the refresh: page then.
                    self.call_after_refresh(self.check_edges)
                elif self.scroll_y <= 0 and self.start:
                    loaded = await self._load_older()
                elif self.scroll_y >= self.max_scroll_y and not self.at_tail:
                    loaded = await self._load_newer()
        finally:
            if loaded is None:
                self._paging = False
        if loaded is not None:
            self.call_after_refresh(self._put_back, *loaded)

    def _put_back(self, ref: MessageView, offset: int) -> None:
        """Content came in (or went) above `ref`: scroll so it is where it was on screen."""
        if ref.is_attached:
            self.scroll_to(y=ref.virtual_region.y - offset, animate=False, immediate=True)
        self._paging = False
        self.check_edges()  # a page shorter than the screen: the edge is still in view

    # -- folding what scrolled out above a streaming reply (widgets/folding.py) -------------------

    async def on_message_view_flushed(self, event: MessageView.Flushed) -> None:
        if not (event.view.streaming and self.following) or self._paging or self.lock.locked():
            return
        async with self.lock:
            folded = folding.fold_above(self, keep=event.view)
            if folded is not None:
                block, old = folded
                with self.app.batch_update():
                    await self.mount(block, before=old[0] if old else block.widgets[0])
                    await self.remove_children(old)

    async def unfold(self) -> None:
        async with self.lock:
            await folding.unfold(self)

    def on_resize(self) -> None:
        if any(block.content_width != self.scrollable_content_region.width
               for block in self.query_children(folding.Folded)):
            self.call_later(self.unfold)

    # -- every way of scrolling ends up asking whether an edge was reached ---------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self.following and self.query_children(folding.Folded):
            self.call_later(self.unfold)  # the reader went up: show it all
        self.check_edges()

    def _then_check(self, scroll: Callable[[], None]) -> None:
        # Already at the edge, a key or the wheel changes nothing, so the watcher never runs.
        scroll()
        self.check_edges()

    def page_up(self) -> None:
        self._then_check(self.scroll_page_up)  # releases the anchor, as the wheel does

    def page_down(self) -> None:
        self._then_check(self.scroll_page_down)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.check_edges()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.check_edges()

    def action_scroll_up(self) -> None:
        self._then_check(super().action_scroll_up)

    def action_scroll_down(self) -> None:
        self._then_check(super().action_scroll_down)

    def action_page_up(self) -> None:
        self.page_up()

    def action_page_down(self) -> None:
        self.page_down()

    async def action_scroll_home(self) -> None:
        await self.oldest()

    async def action_scroll_end(self) -> None:
        await self.newest()
