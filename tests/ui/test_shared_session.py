"""The app and another jarvis-tui on one session, and a store that refuses a reply: the app
shows turns the other process added, waits while it answers, and keeps a reply the disk could not
take on screen for copying; --context-window drops a learned limit. The other process is a real
`jarvis-tui ask` on the same database."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from jarvis_tui.core.messages import COMPLETE
from jarvis_tui.core.store.store import Store
from tests.fakeserver import FakeProvider
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    send_and_wait,
    submit,
    views,
    wait_for,
)


async def other_ask(fake: FakeProvider, db: Path, text: str, env: dict[str, str]
                    ) -> asyncio.subprocess.Process:
    """`jarvis-tui ask --session 1 TEXT` in another process, on the app's database."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jarvis_tui", "--db", str(db), "--base-url", fake.base_url,
        "--model", "fake-model", "ask", "--session", "1", text, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_turns_another_process_added_appear_and_are_sent(fake_server, tmp_path, home):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "asked in the app")
        other = await other_ask(fake_server, tmp_path / "sessions.db", "asked in a terminal",
                                home)
        assert await other.wait() == 0
        await wait_for(pilot, lambda: any("Another jarvis-tui added 2 messages" in n
                                          for n in notices(app)), "told of the other's turn")
        assert [v.message.content[:19] for v in views(app)][::2] == ["asked in the app",
                                                                     "asked in a terminal"]
        await send_and_wait(pilot, "asked in the app again")
        sent = [m["content"] for m in fake_server.chat_requests[-1].body["messages"][1:]]
        assert [s[:19] for s in sent[::2]] == ["asked in the app", "asked in a terminal",
                                               "asked in the app ag"]


async def test_a_send_waits_for_the_other_process_and_keeps_the_order(fake_server, tmp_path,
                                                                      home):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first")
        fake_server.reply_fn = lambda body: "a slow reply from the other side " * 60
        fake_server.chunk_delay = 0.005  # about 2.5 s
        other = await other_ask(fake_server, tmp_path / "sessions.db", "from the terminal",
                                home)
        store = app.session._store
        await wait_for(pilot, lambda: len(store.messages(app.chat.cid)) >= 3,
                       "the other process stored its question")
        submit(app, "from the app")
        await wait_for(pilot, lambda: any("is answering in this session" in n
                                          for n in notices(app)), "told to wait")
        assert "Another jarvis-tui is answering" in str(app.chat.query_one("#status").content)
        assert await other.wait() == 0
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the app's round ends",
                       limit_s=30)
        stored = store.messages(app.chat.cid)
        assert [m.content[:17] for m in stored if m.role == "user"] == [
            "first", "from the terminal", "from the app"]
        assert [m.role for m in stored] == ["user", "assistant"] * 3
        assert all(m.status == COMPLETE for m in stored)
        assert [v.message.role for v in views(app)] == ["user", "assistant"] * 3


async def test_a_reply_the_disk_cannot_take_stays_on_screen_and_f4_copies_it(make_fake_server,
                                                                             tmp_path):
    fake_server = make_fake_server(limit=16_384)
    app = make_app(fake_server, tmp_path, context_window=16_384, response_reserve=4096)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first")
        reply = ("an answer the disk has no room for " * 400).strip()  # pages of it
        fake_server.reply_fn = lambda body: reply
        # A full disk, as SQLite meets it: the database may not grow by another page.
        db = app.session._store._db
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 1}")
        await send_and_wait(pilot, "second")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the round ends")
        shown = views(app)
        assert (len(shown[-1].message.content), shown[-1].message.content) == (len(reply), reply)
        said = notices(app)
        assert any("could not be saved" in n and "full" in n for n in said), said
        assert any("F4 copies it" in n for n in said), said
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # the terminal's clipboard is the edge here
        await pilot.press("f4")
        assert copied == [reply]
        # Room again: the next round stores the reply first, in its place.
        db.execute("PRAGMA max_page_count = 1073741823")
        fake_server.reply_fn = None
        await send_and_wait(pilot, "third")
        stored = [m.content for m in app.session._store.messages(app.chat.cid)]
        assert stored[:4] == ["first", stored[1], "second", reply] and stored[4] == "third"


async def test_a_window_given_on_the_command_line_drops_a_learned_limit(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation()
    store.set_meta(conv.id, "context_limit", 1024)  # learned from an older, smaller server
    app = make_app(fake_server, tmp_path, store=store, window_given=True)
    async with app.run_test(size=SIZE):
        assert app.chat.session._engine.context_window == 4096
    assert store.get_meta(conv.id, "context_limit") is None
    kept = make_app(fake_server, tmp_path, store=store)
    store.set_meta(conv.id, "context_limit", 1024)
    async with kept.run_test(size=SIZE):
        assert kept.chat.session._engine.context_window == 1024  # without the flag it stands
