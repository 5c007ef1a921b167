"""What keeps typing quick while a long reply streams: the Markdown document takes the streamed
text in batches (one relayout per batch, not per chunk), and full garbage collections wait
until the reply is drawn. Behaviour pinned here; the timings are bench/ui/ui.py's."""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.widgets import Markdown

from jarvis_tui.ui import full_gc
from jarvis_tui.ui.widgets.message_view import STREAM_FLUSH_S, TYPING_FLUSH_S
from tests.fakeserver import CHUNK_CHARS
from tests.ui.app_helpers import SIZE, make_app, prompt, submit, views, wait_for

CHUNKS = 120
STALL_AT = 450  # of the typing test's 600 chunks
DELAY_S = 0.01  # 120 chunks over about 1.2 s


async def test_the_document_takes_streamed_text_in_batches(fake_server, tmp_path):
    reply = "".join(f"{i:0{CHUNK_CHARS - 1}d} " for i in range(CHUNKS))  # a chunk each
    fake_server.reply_fn = lambda body: reply
    fake_server.chunk_delay = DELAY_S
    app = make_app(fake_server, tmp_path)
    batches: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        submit(app, "count to a hundred")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        view = app.chat.reply.view
        stream = view._stream
        real_write = stream.write

        async def counting_write(text: str) -> None:
            batches.append(text)
            await real_write(text)

        stream.write = counting_write  # type: ignore[method-assign]
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        assert views(app)[-1].query_one(Markdown).source == reply  # nothing lost on the way
    streamed_s = CHUNKS * DELAY_S
    assert len(batches) >= 2  # it did stream, in more than one piece
    assert len(batches) <= streamed_s / STREAM_FLUSH_S + 3  # about one per interval
    assert len(batches) < CHUNKS // 4  # not one relayout per chunk
    assert "".join(batches) in reply


@asynccontextmanager
async def replying(fake, tmp_path, words: int) -> AsyncIterator:  # type: ignore[no-untyped-def,type-arg]
    """The app with a reply of `words` words streaming in (10 ms a chunk); (pilot, app)."""
    fake.reply_fn = lambda body: "token " * words
    fake.chunk_delay = 0.01
    app = make_app(fake, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        submit(app, "say something")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        yield pilot, app


async def test_full_collections_wait_while_a_reply_streams(fake_server, tmp_path):
    before = gc.get_threshold()
    async with replying(fake_server, tmp_path, 200) as (pilot, app):
        assert gc.get_threshold() == (before[0], before[1], full_gc.PUT_OFF)
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        await wait_for(pilot, lambda: gc.get_threshold() == before, "the collections resume")
        # A reply removed while it streams (a new session) gives its hold back too.
        fake_server.reply_fn = lambda body: "token " * 5000
        submit(app, "say even more")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        assert gc.get_threshold()[2] == full_gc.PUT_OFF
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: gc.get_threshold() == before, "the hold given back")


class Clock:
    """full_gc's clock, moved by the test: a pause in typing is one because the clock says so,
    not because a loaded runner happened to stall between two keys."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now


async def test_the_put_off_collection_waits_for_a_pause_in_typing(fake_server, tmp_path,
                                                                  monkeypatch):
    """The user types the next message as the reply ends: the put-off full collection (0.3-0.6 s
    on a big heap) does not run under their keys, but once they pause for IDLE_S."""
    clock = Clock()
    monkeypatch.setattr(full_gc, "time", clock)
    monkeypatch.setattr(full_gc, "_last_key", full_gc._last_key)  # given back after the test
    before = gc.get_threshold()
    async with replying(fake_server, tmp_path, 100) as (pilot, app):
        box = prompt(app)
        box.focus()
        full_collections = gc.get_stats()[2]["collections"]
        after_the_end = 0
        while app.chat.reply.question is not None or after_the_end < 5:
            after_the_end += app.chat.reply.question is None
            box.insert("x")  # keys keep coming while the reply ends and after
            clock.now += 0.1
            await pilot.pause(0.1)
            assert full_gc.pending() and gc.get_threshold()[2] == full_gc.PUT_OFF
        # However long the runner takes, no pause came by the clock: still put off.
        await pilot.pause(1.5 * full_gc.IDLE_S)
        assert full_gc.pending()
        assert gc.get_stats()[2]["collections"] == full_collections  # none under the keys
        clock.now += full_gc.IDLE_S  # the user pauses
        await wait_for(pilot, lambda: not full_gc.pending(), "the collection after the pause")
        assert gc.get_stats()[2]["collections"] > full_collections
        assert gc.get_threshold() == before


async def test_while_the_user_types_the_document_waits_for_the_keys(fake_server, tmp_path):
    """Typing comes first: while keys arrive, streamed text goes to the document right after a
    keystroke at most every TYPING_FLUSH_S (never starved), and all of it once the keys pause."""
    reply = "".join(f"{i:0{CHUNK_CHARS - 1}d} " for i in range(600))
    fake_server.reply_fn = lambda body: reply
    fake_server.chunk_delay = 0.008  # about 5 s of streaming
    fake_server.stall_at = STALL_AT  # and there it waits for the test: it cannot end early
    app = make_app(fake_server, tmp_path, context_window=32768, response_reserve=8192)
    fake_server.limit = 65536
    writes: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        submit(app, "count slowly")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        view = app.chat.reply.view
        real_write = view._stream.write

        async def timed_write(text: str) -> None:
            writes.append(time.monotonic())
            await real_write(text)

        view._stream.write = timed_write  # type: ignore[method-assign]
        box = prompt(app)
        box.focus()
        typed = "typing comes first " * 3
        started = time.monotonic()
        for ch in typed[:40]:  # a key every 60 ms for 2.4 s
            box.insert(ch)
            await pilot.pause(0.06)
        stopped = time.monotonic()
        during = [t for t in writes if started <= t <= stopped]
        assert 1 <= len(during) <= (stopped - started) / TYPING_FLUSH_S + 1
        # The keys paused: the clock takes over again, and all that arrived goes in while the
        # reply is still streaming (held at STALL_AT): the clock, not the end, brought it.
        document = views(app)[-1].query_one(Markdown)
        await wait_for(pilot, lambda: fake_server.held.is_set()
                       and document.source == reply[:STALL_AT * CHUNK_CHARS],
                       "what arrived goes in once the keys pause")
        assert app.chat.reply.question is not None
        fake_server.resume.set()
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        assert views(app)[-1].query_one(Markdown).source == reply
        assert box.text == typed[:40]
