"""A 5,000-message session in the real app: only a window of it is mounted, scrolling to either
edge pages more in (and the far side out), and sending returns to the newest messages."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.help import HelpScreen
from jarvis_tui.ui.widgets.conversation import MAX_VIEWS, PAGE, Conversation, Notice
from jarvis_tui.ui.widgets.folding import Folded
from jarvis_tui.ui.widgets.message_view import MessageView
from tests.fakeserver import FakeProvider
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    send_and_wait,
    type_and_send,
    views,
    wait_for,
)

N = 5000
COVERED = N - 10  # a summary covers all but the newest 10: the divider falls in the first page
MAX_PRESSES = 200  # a page is a few screens: far more presses than one page takes


@pytest.fixture(scope="module")
def filled_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store of N messages per module (ids 1..N, "m1".."mN"), copied for each test."""
    path = tmp_path_factory.mktemp("long") / "sessions.db"
    with Store(path) as store:
        conv = store.create_conversation()
        for i in range(1, N + 1):
            store.add_message(conv.id, Message("user" if i % 2 else "assistant", f"m{i}"))
    return path


@pytest.fixture
def store(filled_db: Path, tmp_path: Path) -> Store:
    shutil.copy(filled_db, tmp_path / "sessions.db")
    return Store(tmp_path / "sessions.db")


def long_app(fake_server: FakeProvider, tmp_path: Path, store: Store) -> JarvisApp:
    app = make_app(fake_server, tmp_path, store=store)
    # Scrolls jump instead of gliding: the same positions in a fraction of the frames (one test
    # keeps the animations, so the gliding path is covered too).
    app.animation_level = "none"
    return app


def conversation(app: JarvisApp) -> Conversation:
    return app.chat.query_one(Conversation)


def ids(app: JarvisApp) -> list[int]:
    return [v.message.id or 0 for v in views(app)]


def assert_contiguous(app: JarvisApp, stored: slice = slice(None)) -> None:
    """The mounted views are consecutive messages (those in `stored` have ids to compare)."""
    shown = ids(app)[stored]
    assert shown == list(range(shown[0], shown[0] + len(shown))), "a gap or a duplicate"
    assert len(views(app)) <= MAX_VIEWS


async def press_until(pilot: Pilot, key: str, changed: Callable[[], bool], what: str) -> None:
    """Press `key` as a user scrolling would, until `changed()` holds."""
    for _ in range(MAX_PRESSES):
        await pilot.press(key)
        await pilot.pause()
        if changed():
            return
    raise AssertionError(f"{MAX_PRESSES} presses of {key} and still not: {what}")


async def page_up(pilot: Pilot) -> MessageView:
    """Scroll up until the page above comes in and the view that was first (returned) is back
    where it was on screen when the scroll reached the top."""
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    conv = conversation(app)
    first = views(app)[0]
    at_the_top = first.virtual_region.y  # its screen row, less the conversation's, at scroll 0
    await press_until(pilot, "shift+pageup", lambda: views(app)[0] is not first,
                      "older messages loaded")
    await wait_for(pilot, lambda: first.region.y - conv.content_region.y == at_the_top,
                   "the message being read where it was")
    return first


async def opened(pilot: Pilot) -> None:
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    await wait_for(pilot, lambda: len(views(app)) > 0, "the session on screen")
    await pilot.pause()


async def to_the_first(pilot: Pilot) -> None:
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    await pilot.press("ctrl+home")
    await wait_for(pilot, lambda: ids(app)[0] == 1, "the first message")


def at_bottom(app: JarvisApp) -> bool:
    conv = conversation(app)
    return conv.scroll_y == conv.max_scroll_y


async def test_opening_mounts_only_the_newest_page(fake_server, tmp_path, store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        assert ids(app) == list(range(N - PAGE + 1, N + 1))
        assert notices(app)[0] == (f"… {N - PAGE} earlier messages above; scroll up to load "
                                   "them (Ctrl+Home: the first message)")
        # The engine has them all; the screen not.
        assert len(app.chat.session._engine.messages) == N
        await wait_for(pilot, lambda: at_bottom(app), "the newest message in view")


async def test_scrolling_to_the_top_loads_older_messages_in_place(fake_server, tmp_path, store):
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        conv = conversation(app)
        first = await page_up(pilot)
        assert ids(app) == list(range(N - 2 * PAGE + 1, N + 1))
        assert_contiguous(app)
        assert notices(app)[0].startswith(f"… {N - 2 * PAGE} earlier messages above")
        assert conv.content_region.contains_region(first.region)
        assert app.focused is app.chat.query_one("#prompt")


async def test_many_pages_up_stay_bounded_and_the_newest_come_back(fake_server, tmp_path,
                                                                   store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        pages = MAX_VIEWS // PAGE + 2
        for _ in range(pages - 1):
            await page_up(pilot)
            assert_contiguous(app)
        oldest = N - pages * PAGE + 1
        assert ids(app)[0] == oldest and len(views(app)) == MAX_VIEWS
        newest = oldest + MAX_VIEWS - 1
        assert ids(app)[-1] == newest < N  # the newest went to make room
        assert notices(app)[-1] == (f"… {N - newest} newer messages below; scroll down or "
                                    "press Ctrl+End to return to the newest")

        last = views(app)[-1]
        await press_until(pilot, "ctrl+down", lambda: views(app)[-1] is not last,
                          "newer messages loaded")
        assert ids(app)[-1] == newest + PAGE and ids(app)[0] == oldest + PAGE
        assert_contiguous(app)
        assert last.is_attached  # the message being read stays

        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: ids(app)[-1] == N and at_bottom(app), "the newest")
        assert ids(app) == list(range(N - PAGE + 1, N + 1))
        assert not any("newer messages below" in n for n in notices(app))


async def test_first_message_and_back(fake_server, tmp_path, store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: ids(app)[0] == 1 and conversation(app).scroll_y == 0,
                       "the first message at the top")
        assert ids(app) == list(range(1, PAGE + 1))
        assert not any("earlier messages" in n for n in notices(app))
        last = views(app)[-1]
        await press_until(pilot, "ctrl+down", lambda: views(app)[-1] is not last,
                          "the next page loaded")
        assert ids(app) == list(range(1, 2 * PAGE + 1))


async def test_sending_far_from_the_newest_returns_to_them(fake_server, tmp_path, store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await to_the_first(pilot)
        await send_and_wait(pilot, "back to the present")
        shown = views(app)
        assert [v.message.role for v in shown[-2:]] == ["user", "assistant"]
        assert shown[-2].message.content == "back to the present"
        assert shown[-1].message.id is not None and shown[-1].message.content
        assert ids(app)[0] == N - PAGE + 1
        assert_contiguous(app)
        await wait_for(pilot, lambda: at_bottom(app), "the reply in view")


async def test_the_newest_prune_the_oldest_which_come_back_on_scroll(fake_server, tmp_path,
                                                                     store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        while len(views(app)) < MAX_VIEWS:
            await page_up(pilot)
        assert ids(app)[-1] == N  # still at the tail: nothing below was unmounted
        await send_and_wait(pilot, "one more")
        assert len(views(app)) == MAX_VIEWS
        assert ids(app)[0] == N + 2 - MAX_VIEWS + 1  # the two oldest went
        assert_contiguous(app)
        assert notices(app)[0].startswith(f"… {N + 2 - MAX_VIEWS} earlier messages above")
        await press_until(pilot, "shift+pageup", lambda: ids(app)[0] < N + 2 - MAX_VIEWS + 1,
                          "the pruned messages back")
        assert_contiguous(app)


async def test_the_summary_divider_follows_the_mounted_slice(fake_server, tmp_path, store):
    conv_id = store.latest_conversation().id  # type: ignore[union-attr]
    store.add_summary(conv_id, "the early talk", store.messages(conv_id)[:COVERED],
                      kind="auto")
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)

        def divider_follows() -> list[int | None]:
            children = list(conversation(app).children)
            return [children[i - 1].message.id  # type: ignore[attr-defined]
                    for i, c in enumerate(children)
                    if isinstance(c, Notice) and c.kind == "compact"]

        assert divider_follows() == [COVERED]
        assert any(n.startswith(f"📦 The {COVERED} messages above are summarised")
                   for n in notices(app))
        await page_up(pilot)
        assert divider_follows() == [COVERED]
        await to_the_first(pilot)  # all covered, the run's end not mounted: no divider
        assert divider_follows() == []


async def test_a_streaming_reply_is_never_unmounted(fake_server, tmp_path, store):
    fake_server.reply_fn = lambda body: "token " * 5000  # streams far longer than the test
    fake_server.chunk_delay = 0.05
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await type_and_send(pilot, "a long answer, please")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply streaming")
        reply = app.chat.reply.view
        # The page above the reply folds away while it streams, and comes back on scrolling up.
        await wait_for(pilot, lambda: conversation(app).query_children(Folded), "folded")
        await pilot.press("shift+pageup")
        await wait_for(pilot, lambda: not conversation(app).query_children(Folded), "unfolded")
        while len(views(app)) < MAX_VIEWS:
            await page_up(pilot)
        assert views(app)[-1] is reply and reply.streaming
        first = views(app)[0]
        await press_until(pilot, "shift+pageup", lambda: conversation(app).scroll_y == 0,
                          "the top")
        await pilot.press("ctrl+home")
        await pilot.pause()
        # Full, and the far side is the streaming reply: nothing more comes in above.
        assert views(app)[0] is first and views(app)[-1] is reply
        assert_contiguous(app, slice(-1))  # the reply is not stored yet
        assert ids(app)[-2] == N + 1  # the question it answers

        await pilot.press("escape")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply stopped")
        await press_until(pilot, "shift+pageup", lambda: views(app)[0] is not first,
                          "older messages, now that nothing streams")
        assert not reply.is_attached and len(views(app)) == MAX_VIEWS
        assert_contiguous(app)


async def test_notices_while_away_wait_for_the_newest(fake_server, tmp_path, store):
    app = long_app(fake_server, tmp_path, store)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await to_the_first(pilot)
        await type_and_send(pilot, "/pin")  # pins the newest message and says so
        await pilot.pause()
        assert not any(n.startswith("📌 Pinned") for n in notices(app))  # not among the first
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: ids(app)[-1] == N, "the newest")
        assert notices(app)[-1].startswith(f"📌 Pinned: “m{N}”")
        assert views(app)[-1].message.pinned


async def test_help_lists_the_keys_to_the_first_and_newest_messages(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        rows = app.screen.key_rows  # type: ignore[attr-defined]
        assert ("Ctrl+Home", "Jump to the first message of the session") in rows
        assert ("Ctrl+End", "Jump back to the newest message") in rows
