"""A long reply streaming in: its finished blocks are drawn once and hidden (widgets/settled.py),
and the messages scrolled out above it are folded away (widgets/folding.py), so each batch's
relayout visits a handful of widgets. Pinned here: the screen looks exactly as it would with the
real widgets, nothing is lost, and everything comes back when the reply ends or the width
changes. The timings are bench/ui/ui.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.widgets import folding, settled
from jarvis_tui.ui.widgets.conversation import PAGE, Conversation
from jarvis_tui.ui.widgets.message_view import MessageView
from tests.fakeserver import CHUNK_CHARS
from tests.ui.app_helpers import SIZE, make_app, screen_text, submit, views, wait_for

SECTION = """## Step {k}: 保持窗口 in budget

A long conversation **cannot** be sent whole; step {k} folds older turns into a summary.

- the system prompt and the summary go first
- then the newest turns, 最新的一轮在最后

1. count the history
2. drop what no longer fits

```python
def fit(messages, budget):
    return messages[-budget:]
```

> Note: the store keeps every message; `/export` writes them all.

上下文窗口是有限的：第 {k} 步把较早的对话压缩成摘要，最新的几轮原样保留。

"""
REPLY = "".join(SECTION.format(k=k) for k in range(1, 9))


def long_reply_app(fake, tmp_path, **changes):  # type: ignore[no-untyped-def]
    # Room for the whole reply: the fake server cuts a reply at the request's max_tokens.
    fake.limit = 65536
    return make_app(fake, tmp_path, context_window=32768, response_reserve=8192, **changes)


def stall_at(fake, fraction: float) -> None:  # type: ignore[no-untyped-def]
    fake.reply_fn = lambda body: REPLY
    fake.chunk_delay = 0.002  # several batches before the stall, as a model streams
    fake.stall_at = int(len(REPLY) / CHUNK_CHARS * fraction)


def cells(app, widget) -> list[list[tuple[str, object]]]:  # type: ignore[no-untyped-def]
    """What the screen shows over `widget`'s region: each cell's character and style (links and
    mouse offsets left out: those are what the drawn lines drop)."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    out = []
    for strip in strips[region.y:region.bottom]:
        row = []
        for text, style, _ in strip.crop(region.x, region.right):
            clean = style.clear_meta_and_links() if style else None
            row.extend((ch, clean) for ch in text)
        out.append(row)
    return out


def drawn(view: MessageView) -> tuple[int, int]:
    """(settled images, hidden blocks) in the reply's document."""
    md = view.query_one(Markdown)
    images = len(md.query_children(settled.SettledImage))
    hidden = sum(1 for b in md.children if isinstance(b, MarkdownBlock) and not b.display)
    return images, hidden


@asynccontextmanager
async def stalled(fake, tmp_path, fraction: float = 0.8,  # type: ignore[no-untyped-def]
                  **changes) -> AsyncIterator:  # type: ignore[type-arg]
    """The app with the long reply streaming in and stalled at `fraction` of it, all that came
    in drawn; (pilot, the reply's view). On leaving, the reply goes on to its end."""
    stall_at(fake, fraction)
    app = long_reply_app(fake, tmp_path, **changes)
    async with app.run_test(size=SIZE) as pilot:
        submit(app, "write the long answer")
        await wait_for(pilot, fake.held.is_set, "the server stalls mid-reply")
        view = app.chat.reply.view
        await wait_for(pilot, lambda: not view._unsent and not view._flush_queued
                       and view._flush_timer is None, "the streamed text is in the document")
        await pilot.pause(0.3)
        await pilot.pause()
        yield pilot, view
        fake.stall_at = None
        fake.resume.set()
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")


async def screens(pilot, conversation) -> list:  # type: ignore[no-untyped-def,type-arg]
    """The conversation's cells at every scroll position a screen apart, top to bottom."""
    out = []
    end = conversation.max_scroll_y
    for y in [*range(0, end, conversation.size.height), end]:
        conversation.scroll_to(y=y, animate=False, immediate=True)
        await pilot.pause()
        out.append((y, cells(pilot.app, conversation)))
    return out


async def test_a_settled_reply_looks_exactly_like_its_real_blocks(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path) as (pilot, view):
        images, hidden = drawn(view)
        assert images >= 1 and hidden >= 20  # most of the reply is drawn, not laid out
        shown = [b for b in view.query_one(Markdown).children if b.display]
        assert len(shown) <= settled.MAX_IMAGES + 6  # whatever the reply's length
        conversation = pilot.app.chat.query_one(Conversation)
        seen = await screens(pilot, conversation)
        # The same reply with the real blocks shown again, from its first line to its last.
        await settled.unsettle(view.query_one(Markdown))
        await pilot.pause()
        assert drawn(view) == (0, 0)
        assert await screens(pilot, conversation) == seen


async def test_the_whole_reply_comes_back_as_real_blocks_when_it_ends(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, 0.5) as (pilot, view):
        assert drawn(view)[0] >= 1
        fake_server.resume.set()
        await wait_for(pilot, lambda: pilot.app.chat.reply.question is None, "the reply ends")
        await pilot.pause()
        md = views(pilot.app)[-1].query_one(Markdown)
        assert drawn(views(pilot.app)[-1]) == (0, 0)
        assert md.source == REPLY
        assert all(block.display for block in md.children)
        # Every heading is a real block again (the table of contents sees them all).
        assert sum(type(b).__name__ == "MarkdownH2" for b in md.children) == 8


async def test_a_width_change_mid_reply_redraws_at_the_new_width(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, 0.6) as (pilot, view):
        old = [img.drawn_width for img in view.query(settled.SettledImage)]
        assert old
        await pilot.resize_terminal(SIZE[0] - 24, SIZE[1])
        await wait_for(pilot, lambda: drawn(view) == (0, 0), "the drawing is dropped")
        fake_server.stall_at = None
        fake_server.resume.set()
        # Drawn again as the reply goes on, at the new width.
        await wait_for(pilot, lambda: drawn(view)[0] >= 1, "drawn again")
        assert all(img.drawn_width < min(old) for img in view.query(settled.SettledImage))
        await wait_for(pilot, lambda: pilot.app.chat.reply.question is None, "the reply ends")
        assert views(pilot.app)[-1].query_one(Markdown).source == REPLY


async def test_a_theme_change_mid_reply_drops_the_drawing(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, 0.6) as (pilot, view):
        assert drawn(view)[0] >= 1
        app = pilot.app
        app.theme = "jarvis-light" if app.theme != "jarvis-light" else "jarvis-dark"
        await wait_for(pilot, lambda: drawn(view) == (0, 0), "the drawing is dropped")


def long_store(tmp_path, n: int = 30) -> Store:  # type: ignore[no-untyped-def]
    """A stored session of n messages: questions and Markdown answers, a few screens of them."""
    store = Store(tmp_path / "long.db")
    conv = store.create_conversation()
    for i in range(n):
        text = f"Question {i}" if i % 2 == 0 else SECTION.format(k=i)
        store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant", text))
    return store


def folded(conversation: Conversation) -> list:  # type: ignore[type-arg]
    return list(conversation.query_children(folding.Folded))


async def test_messages_above_a_streaming_reply_fold_away_without_a_visible_change(
        fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, store=long_store(tmp_path)) as (pilot, view):
        conversation = pilot.app.chat.query_one(Conversation)
        assert len(folded(conversation)) == 1  # one block, however many times it folded
        hidden = [v for v in views(pilot.app) if not v.display]
        assert len(hidden) >= PAGE - 1  # the page above, all but the question just sent
        assert view.display and view not in hidden
        seen = cells(pilot.app, conversation)
        where = (conversation.max_scroll_y, conversation.scroll_y)
        await conversation.unfold()
        await pilot.pause()
        await pilot.pause()
        assert not folded(conversation) and all(v.display for v in views(pilot.app))
        assert (conversation.max_scroll_y, conversation.scroll_y) == where
        assert cells(pilot.app, conversation) == seen


async def test_folded_messages_come_back_when_the_reader_scrolls_up(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, store=long_store(tmp_path)) as (pilot, view):
        app = pilot.app
        conversation = app.chat.query_one(Conversation)
        fake_server.resume.set()
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        # They stay folded after the reply (no relayout of them all for nothing)...
        assert folded(conversation)
        # ...until the reader goes up to them.
        await pilot.press("shift+pageup")
        await wait_for(pilot, lambda: not folded(conversation), "unfolded")
        assert all(v.display for v in views(app))
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: "Question 0" in screen_text(app), "the first question")


async def test_a_width_change_unfolds(fake_server, tmp_path):
    async with stalled(fake_server, tmp_path, store=long_store(tmp_path)) as (pilot, view):
        conversation = pilot.app.chat.query_one(Conversation)
        assert folded(conversation)
        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1])
        await wait_for(pilot, lambda: not folded(conversation), "unfolded")
        assert all(v.display for v in views(pilot.app))
