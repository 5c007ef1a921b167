"""Message mode: Tab to the conversation selects a message, the arrows move the selection, and
the message keys act on it (copy_code here), with the real app against the fake server."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList, Static

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.code_picker import CodePicker
from jarvis_tui.ui.screens.help import HelpScreen
from jarvis_tui.ui.widgets.conversation import PAGE, Conversation
from jarvis_tui.ui.widgets.message_view import MessageView
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    prompt,
    screen_text,
    send_and_wait,
    type_and_send,
    views,
    wait_for,
)
from tests.ui.test_actions import help_rows

TWO = "Two ways:\n\n```python\nimport os\nprint(os.getcwd())\n```\n\nor\n\n~~~sh\npwd\n~~~\n"
ONE = "Run this:\n\n```bash\nmake test\n```\n"
NONE = "No code here, just words."
REPLIES = {"two": TWO, "one": ONE, "none": NONE}


@pytest.fixture(autouse=True)
def osc52_terminal(monkeypatch):
    """A terminal that takes OSC 52 (the runner's own may be tmux or GNOME Terminal)."""
    for name in ("TMUX", "STY", "VTE_VERSION", "TERM_PROGRAM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def conversation(app: JarvisApp) -> Conversation:
    return app.chat.query_one(Conversation)


def selected(app: JarvisApp) -> list[MessageView]:
    return [v for v in views(app) if v.has_class("-selected")]


def label(view: MessageView) -> str:
    return str(view.query_one(".label", Static).content)


async def talk(pilot, fake_server, *lines: str) -> None:  # type: ignore[no-untyped-def]
    fake_server.reply_fn = lambda body: REPLIES.get(body["messages"][-1]["content"], NONE)
    for line in lines:
        await send_and_wait(pilot, line)


async def test_tab_selects_the_newest_arrows_move_and_esc_gives_the_prompt_back(fake_server,
                                                                              tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one")
        await type_and_send(pilot, "/pin")  # a notice between this turn and the next
        await talk(pilot, fake_server, "none")
        await pilot.pause()
        conv = conversation(app)
        prompt(app).load_text("half a thought")
        seen: list[MessageView | None] = []
        post = conv.post_message
        conv.post_message = lambda m: (seen.append(m.view) if isinstance(m, Conversation.Selected)
                                       else None, post(m))[1]
        assert selected(app) == [] and conv.selected_view is None

        await pilot.press("tab")
        await pilot.pause()
        shown = views(app)
        assert app.focused is conv
        assert conv.selected_view is shown[-1] and selected(app) == [shown[-1]]
        await pilot.press("up")
        await pilot.pause()
        assert selected(app) == [shown[-2]] and shown[-2].message.content == "none"
        await pilot.press("up")  # over the "Pinned" notice, to the reply before it
        await pilot.pause()
        assert selected(app) == [shown[-3]] and shown[-3].message.content == ONE
        await pilot.press("down")
        await pilot.pause()
        assert conv.selected_view is shown[-2]
        await pilot.press("home")
        await pilot.pause()
        assert conv.selected_view is shown[0]
        await pilot.press("up")  # the first message of the session: nothing above it
        await pilot.pause()
        assert conv.selected_view is shown[0]
        await pilot.press("end")
        await pilot.pause()
        assert conv.selected_view is shown[-1]
        assert seen == [shown[-1], shown[-2], shown[-3], shown[-2], shown[0], shown[-1]]

        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is prompt(app) and prompt(app).text == "half a thought"
        assert selected(app) == []  # not drawn without the focus
        await pilot.press("tab", "up", "tab")  # Tab goes back to the prompt too
        await pilot.pause()
        assert app.focused is prompt(app) and selected(app) == []
        await pilot.press("tab")
        await pilot.pause()
        assert conv.selected_view is views(app)[-1]  # starting at the newest again


async def test_a_message_taller_than_the_window_is_shown_from_its_top(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        fake_server.reply_fn = lambda body: "\n\n".join(f"paragraph {i}" for i in range(60))
        await send_and_wait(pilot, "a long answer please")
        await pilot.press("tab")
        await pilot.pause()
        conv = conversation(app)
        tall = views(app)[-1]
        assert conv.selected_view is tall
        assert tall.virtual_region.height > conv.scrollable_content_region.height
        await pilot.press("up", "down")
        await wait_for(pilot, lambda: round(conv.scroll_y) == tall.virtual_region.y,
                       "the tall reply scrolled to its first line")
        assert "paragraph 0" in screen_text(app)


async def test_moving_up_past_the_first_loaded_message_loads_earlier_ones(fake_server,
                                                                          tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv_id = store.create_conversation().id
    for i in range(3 * PAGE):
        store.add_message(conv_id, Message("user" if i % 2 == 0 else "assistant", f"line {i}"))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        conv = conversation(app)
        start = conv.start
        assert start > 0
        await pilot.press("tab", "home")
        await pilot.pause()
        assert conv.selected_view.message.content == f"line {start}"
        await pilot.press("up")
        await wait_for(pilot, lambda: conv.selected_view is not None
                       and conv.selected_view.message.content == f"line {start - 1}",
                       "the message before the first loaded one")
        assert conv.start < start
        view = conv.selected_view
        await wait_for(pilot, lambda: conv._in_sight(view), "the selection in sight")


async def test_c_copies_a_code_block_of_the_selected_reply(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        copied: list[str] = []
        copy = app.copy_to_clipboard
        app.copy_to_clipboard = lambda text: (copied.append(text), copy(text))[1]
        await talk(pilot, fake_server, "two", "one", "none")
        copy_file = tmp_path / "cache" / "copied.txt"

        await pilot.press("tab", "c")  # the newest reply has no fence
        await pilot.pause()
        assert notices(app)[-1] == "This message has no code block."
        assert copied == [] and not copy_file.exists()

        await pilot.press("up", "up", "c")  # the reply to "one": a single block, at once
        await wait_for(pilot, lambda: copied, "the copy")
        assert copied == ["make test"] and copy_file.read_text() == "make test"
        assert notices(app)[-1] == ("Copied the bash block (1 line) to the clipboard (OSC 52). "
                                    f"If your terminal blocks that, it is also in {copy_file}")

        await pilot.press("up", "up", "c")  # the reply to "two": pick one of two
        await wait_for(pilot, lambda: isinstance(app.screen, CodePicker), "the picker")
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(2)] == \
            ["1 · python · 2 lines · import os", "2 · sh · 1 line · pwd"]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.chat and copied == ["make test"]
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CodePicker), "the picker again")
        await pilot.press("2")
        await wait_for(pilot, lambda: len(copied) == 2, "the second block copied")
        assert copied[-1] == "pwd" and copy_file.read_text() == "pwd"
        assert app.clipboard == "pwd"
        # Back where it was: the same message selected, the conversation focused.
        assert app.focused is conversation(app)
        assert conversation(app).selected_view.message.content == TWO
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CodePicker), "the picker")
        await pilot.press("enter")  # the first, highlighted
        await wait_for(pilot, lambda: len(copied) == 3, "the first block copied")
        assert copied[-1] == "import os\nprint(os.getcwd())"


async def test_slash_code_from_the_prompt_takes_the_newest_reply_with_code(fake_server,
                                                                           tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/code")
        await pilot.pause()
        assert notices(app)[-1] == "No reply has a code block yet."
        await talk(pilot, fake_server, "one", "none")
        await type_and_send(pilot, "/code")
        await wait_for(pilot, lambda: app.clipboard == "make test", "the block copied")
        assert app.focused is prompt(app) and prompt(app).text == ""


async def test_f4_copies_the_reply_the_same_way(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TERM_PROGRAM", "Apple_Terminal")
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one")
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.clipboard == ONE, "the reply copied")
        copy_file = tmp_path / "cache" / "copied.txt"
        assert copy_file.read_text() == ONE
        assert notices(app)[-1] == (f"Your terminal may not take OSC 52 copies: the last reply "
                                    f"({len(ONE)} characters) is in {copy_file} (it was sent "
                                    "to the clipboard too)")


async def test_help_and_footer_show_the_message_keys(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one")
        assert "Copy code" not in screen_text(app)  # the prompt has the focus
        await pilot.press("tab")
        await pilot.pause()
        footer = screen_text(app)
        assert "Copy code" in footer and "Back to the prompt" in footer
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert str(app.screen.query_one("#message-title", Static).content) == \
            "On a selected message (Tab to the conversation)"
        rows = help_rows(app, "message")
        assert ("C", "Copy code") in rows and ("Up / Down", "Select the previous / next message") \
            in rows and ("Esc / Tab", "Back to the prompt") in rows
        assert ("C", "Copy code") not in help_rows(app, "keys")


async def test_copy_code_can_be_given_another_key(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, keys={"copy_code": "y"})
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one")
        await pilot.press("tab", "c")
        await pilot.pause()
        assert app.clipboard == ""  # its old key does nothing now
        await pilot.press("y")
        await wait_for(pilot, lambda: app.clipboard == "make test", "the copy on y")
        assert " y " in screen_text(app)  # the footer names the new key
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert ("Y", "Copy code") in help_rows(app, "message")


async def test_chinese_texts(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one", "none")
        await pilot.press("tab")
        await pilot.pause()
        assert "复制代码" in screen_text(app) and "回到输入框" in screen_text(app)
        await pilot.press("c")
        await pilot.pause()
        assert notices(app)[-1] == "这条消息没有代码块。"
        await pilot.press("up", "up", "c")
        await wait_for(pilot, lambda: app.clipboard == "make test", "the copy")
        copy_file = tmp_path / "cache" / "copied.txt"
        assert notices(app)[-1] == ("已把bash 代码块（1 行）复制到剪贴板（OSC 52）。"
                                    f"如果终端拦截了它，内容也在 {copy_file}")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert str(app.screen.query_one("#message-title", Static).content) == \
            "选中的消息上（按 Tab 进入对话）"
        assert ("C", "复制代码") in help_rows(app, "message")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_alternatives_and_excluded_marks(fake_server, tmp_path, lang):
    app = make_app(fake_server, tmp_path, language=lang)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot, fake_server, "one")
        question, reply = views(app)
        plain = label(reply)
        reply.set_alternatives(2, 3)
        assert label(reply) == f"{plain} · ‹ 2/3 ›"
        reply.set_alternatives(1, 1)
        assert label(reply) == plain
        with pytest.raises(ValueError):
            reply.set_alternatives(4, 3)

        question.message.excluded = True
        conversation(app).refresh_messages([question.message.id])
        await pilot.pause()
        assert question.has_class("-excluded") and not reply.has_class("-excluded")
        assert label(question).endswith(" · excluded" if lang == "en" else " · 已排除")
        question.message.excluded = False
        question.refresh_state()
        assert not question.has_class("-excluded") and "·" not in label(question)
