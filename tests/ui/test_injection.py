"""Hostile text in the app: console markup, escape sequences and C1 controls from a reply, from
what the user typed, from a server's error body and from a session title are shown as plain
text, none of them reaches the screen as a control character, and the app goes on."""

from __future__ import annotations

from jarvis_tui.core.messages import COMPLETE, FAILED, Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.screens.sessions import SessionsScreen
from tests.faults.test_security import PAYLOAD, assert_clean
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    screen_text,
    send_and_wait,
    views,
    wait_for,
)

# The visible pieces of PAYLOAD, each short enough never to be wrapped.
LITERAL = ["[link=https://evil.example]click[/link]", "[bold]x[/] then [/]", "中文😀"]
# Sequences first, so they are inside the session title made from the first words too.
QUESTION = "\x1b]0;pwned\x07\x9b2J\x1b[1;31m问：" + PAYLOAD
WIDE = (160, 48)


def assert_shown_literally(text: str) -> None:
    assert_clean(text)
    for piece in LITERAL:
        assert piece in text, f"{piece!r} not on screen:\n{text}"
    assert "pwned" not in text and "SGVsbG8" not in text  # the sequences' insides are gone too


async def test_a_hostile_reply_and_user_message_are_shown_as_text(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: PAYLOAD
    fake_server.chunk_delay = 0.005  # streamed in 4-character pieces: sequences get split
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await send_and_wait(pilot, QUESTION)
        shown = views(app)
        assert [v.message.role for v in shown] == ["user", "assistant"]
        assert shown[0].message.content == QUESTION  # stored as typed, shown cleaned
        assert shown[1].message.content == PAYLOAD and shown[1].message.status == COMPLETE
        assert app.session._store.get_conversation(app.chat.cid).title.startswith("\x1b]0;pwned")
        text = screen_text(app)  # the header shows that title
        assert_shown_literally(text)
        assert "问：see [link=" in text
        # Markdown draws the bare URL in the reply as a link, a separate run of text, so the
        # pieces are counted across the screen's text runs.
        flat = text.replace("\n", "")
        for piece in LITERAL:
            assert flat.count(piece) >= 2, piece  # once in the question, once in the reply
        # The app goes on as if nothing happened.
        fake_server.reply_fn = None
        await send_and_wait(pilot, "还在吗？")
        assert views(app)[-1].message.status == COMPLETE and app.is_running


async def test_a_hostile_error_body_is_shown_as_text(fake_server, tmp_path):
    fake_server.faults.append(("status", 400, {}, {"error": {"message": PAYLOAD, "type": "x"}}))
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await send_and_wait(pilot, "hi")
        assert views(app)[-1].message.status == FAILED
        errors = [n for n in notices(app) if n.startswith("✖")]
        assert len(errors) == 1
        assert_shown_literally(errors[0])
        assert_shown_literally(screen_text(app))
        await send_and_wait(pilot, "again")
        assert views(app)[-1].message.status == COMPLETE and app.is_running


async def test_a_hostile_session_title_is_shown_as_text(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    hostile = store.create_conversation(model="fake-model")
    # Raw, as an old version or another tool may have left it, sequences first.
    store.set_title(hostile.id, QUESTION)
    latest = store.create_conversation(model="fake-model")
    store.add_message(latest.id, Message(role="user", content="普通的会话"))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        assert app.chat.cid == latest.id  # so the hostile title is only in the list
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "the sessions")
        await pilot.pause()
        text = screen_text(app)
        assert_clean(text)
        assert "问：see [link=https://evil.example]" in text and "普通的会话" in text
        assert "pwned" not in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen), "back to the chat")
        await send_and_wait(pilot, "hello")
        assert views(app)[-1].message.status == COMPLETE and app.is_running
