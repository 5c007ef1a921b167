"""Up / Down in the prompt walk the messages sent before, as a shell's history does; the first Up
from an empty prompt puts the last message in edit mode. Driven through the real app against
the fake server."""

from __future__ import annotations

from textual.message import Message as TextualMessage
from textual.widgets import Static

from jarvis_tui.core.messages import Message
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from tests.ui.app_helpers import SIZE, make_app, prompt, send_and_wait, wait_for

EDITING_LAST = ("✎ Editing your last message · Enter resends it (the old turn stays as a "
                "branch) · Esc back to your draft")


def line(app: JarvisApp) -> str:
    """The line above the prompt as shown: "" while it is hidden."""
    static = app.chat.query_one("#history", Static)
    return str(static.content) if static.display else ""


def last_sent(fake_server) -> str:  # type: ignore[no-untyped-def]
    return fake_server.chat_requests[-1].body["messages"][-1]["content"]


def user_ids(app: JarvisApp) -> list[int | None]:
    return [m.id for m in app.chat.session.messages if m.role == "user"]


async def test_up_up_down_walks_the_sent_messages_newest_first(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("one", "two", "three"):
            await send_and_wait(pilot, text)
        box = prompt(app)
        assert line(app) == ""
        await pilot.press("up")
        assert box.text == "three"
        await pilot.press("up")
        assert box.text == "two"
        assert line(app) == ("History 2/3 · this session · Alt+↑ all sessions · "
                             "Esc back to your draft")
        await pilot.press("up", "up")  # the oldest stays, as in a shell
        assert box.text == "one"
        assert line(app).startswith("History 3/3 ·")
        await pilot.press("down")
        assert box.text == "two"
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 4, "the fourth request")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply")
        assert last_sent(fake_server) == "two"
        assert box.text == "" and not box.walking and line(app) == ""
        # The walk that sent ended with it: the next begins afresh at the newest.
        await pilot.press("up")
        assert box.text == "two"
        await pilot.press("up")
        assert box.text == "three"


async def test_a_half_typed_draft_survives_walking_away_and_back(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("one", "two"):
            await send_and_wait(pilot, text)
        box = prompt(app)
        await pilot.press(*"half typ")
        await pilot.press("left", "left")
        await pilot.press("up")
        assert box.text == "two"
        await pilot.press("up")
        assert box.text == "one"
        await pilot.press("!")  # a changed entry stays changed while the walk goes on
        await pilot.press("down")
        assert box.text == "two"
        await pilot.press("up")
        assert box.text == "one!"
        await pilot.press("down", "down")
        assert box.text == "half typ"
        assert box.cursor_location == box.document.end
        assert not box.walking and line(app) == ""
        await pilot.press("e", "enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 3, "the third request")
        assert last_sent(fake_server) == "half type"


async def test_esc_gives_the_draft_back_and_does_nothing_else(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("one", "two"):
            await send_and_wait(pilot, text)
        stopped: list[bool] = []
        app.chat.action_stop = lambda: stopped.append(True)  # type: ignore[method-assign]
        app.chat.reply.question = Message("user", "on its way")  # so that Esc would stop a reply
        box = prompt(app)
        await pilot.press(*"my draft")
        await pilot.press("up", "up")
        assert box.text == "one"
        await pilot.press("escape")
        assert box.text == "my draft" and box.cursor_location == box.document.end
        assert not box.walking and line(app) == ""
        assert stopped == []
        await pilot.press("escape")  # not walking: Esc stops the reply, as before
        assert stopped == [True]
        assert box.text == "my draft"
        app.chat.reply.question = None


async def test_up_inside_a_message_of_several_rows_moves_the_cursor(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "older")
        await send_and_wait(pilot, "first row\nsecond row")
        box = prompt(app)
        await pilot.press(*"a", "ctrl+j", *"b")
        assert box.text == "a\nb"
        await pilot.press("up")  # the draft's own rows first
        assert box.text == "a\nb" and box.cursor_location == (0, 1) and not box.walking
        await pilot.press("up")
        assert box.text == "first row\nsecond row"
        assert box.cursor_location == (1, len("second row"))
        await pilot.press("up")
        assert box.text == "first row\nsecond row" and box.cursor_location[0] == 0
        await pilot.press("up")
        assert box.text == "older"
        await pilot.press("down")  # a newer entry opens on its first row, to walk down it
        assert box.text == "first row\nsecond row" and box.cursor_location == (0, 9)
        await pilot.press("down")
        assert box.text == "first row\nsecond row" and box.cursor_location[0] == 1
        await pilot.press("down")
        assert box.text == "a\nb" and not box.walking
        # An entry of several rows is sent as it was, new lines and all.
        await pilot.press("up", "up", "up", "up", "down", "enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 3, "the third request")
        assert last_sent(fake_server) == "first row\nsecond row"


async def test_alt_up_reaches_a_message_of_an_earlier_session(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "from the first session")
        first = app.chat.session.id
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.chat.session.id != first, "a new session")
        await send_and_wait(pilot, "in the second")
        box = prompt(app)
        await pilot.press("up", "up")  # this session has one message
        assert box.text == "in the second"
        await pilot.press("alt+up")
        assert box.text == "from the first session"
        assert line(app) == ("History 2/2 · all sessions · ↑ this session · "
                             "Esc back to your draft")
        assert box.edit_of is None
        await pilot.press("alt+down")
        assert box.text == "in the second"
        await pilot.press("alt+down")
        assert box.text == "" and not box.walking
        await pilot.press("alt+up", "alt+up", "enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 3, "the third request")
        sent = fake_server.chat_requests[-1].body["messages"]
        assert sent[-1]["content"] == "from the first session"
        # Sent into this session: the first session's turn is not part of the request.
        assert [m["content"] for m in sent if m["role"] == "user"] == [
            "in the second", "from the first session"]


async def test_the_first_up_from_an_empty_prompt_edits_the_last_message(fake_server, tmp_path):
    submitted: list[PromptInput.Submitted] = []

    def hook(message: TextualMessage) -> None:
        if isinstance(message, PromptInput.Submitted):
            submitted.append(message)

    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        for text in ("one", "two"):
            await send_and_wait(pilot, text)
        one, two = user_ids(app)
        assert submitted[-1].edit_of is None  # a normal send
        box = prompt(app)
        await pilot.press("up")
        assert box.text == "two" and box.edit_of == two
        assert line(app) == EDITING_LAST
        assert app.chat.query_one("#history").has_class("editing")
        await pilot.press("up")
        assert box.text == "one" and box.edit_of is None
        assert line(app).startswith("History 2/2 · this session")
        await pilot.press("down")
        assert box.edit_of == two and line(app) == EDITING_LAST
        await pilot.press(*" again", "enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 3, "the third request")
        assert (submitted[-1].text, submitted[-1].edit_of) == ("two again", two)
        assert last_sent(fake_server) == "two again"  # sent; the branch is not built yet
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply")
        assert box.edit_of is None and line(app) == ""

        # A message loaded to edit by its id: the line names it, Esc gives the draft back.
        await pilot.press(*"draft")
        box.start_edit(one, "one", "message of 14:02")
        await pilot.pause()
        assert box.text == "one" and box.edit_of == one
        assert line(app) == ("✎ Editing your message of 14:02 · Enter resends it (the old "
                             "turn stays as a branch) · Esc back to your draft")
        await pilot.press("escape")
        assert box.text == "draft" and box.edit_of is None and line(app) == ""
        box.start_edit(one, "one", "message of 14:02")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 4, "the fourth request")
        assert (submitted[-1].text, submitted[-1].edit_of) == ("one", one)


async def test_the_line_in_chinese(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        for text in ("一", "二"):
            await send_and_wait(pilot, text)
        await pilot.press("up")
        assert line(app) == ("✎ 正在编辑你的上一条消息 · Enter 重新发送（原来的一轮保留为分支）· "
                             "Esc 回到你的草稿")
        await pilot.press("up")
        assert line(app) == "历史 2/2 · 本会话 · Alt+↑ 全部会话 · Esc 回到你的草稿"
        history = app.chat.query_one("#history", Static)
        assert history.region.height == 1
