"""A message too large to show whole (issue 25, item 19): the conversation shows its head, a
line saying what is not shown and how to read it, and its end; the store keeps it whole, and V
(message mode) scrolls through all of it drawing only the rows in view."""

from __future__ import annotations

from textual.widgets import Markdown, Static

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.full_text import FullTextScreen
from jarvis_tui.ui.widgets import huge_text
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.text_pager import TextPager, row_starts
from tests.ui.app_helpers import SIZE, make_app, screen_text, type_and_send, views, wait_for

# Structural: a cut message is a few widgets however large (a Markdown document mounts one
# widget per block; a 300,000-character reply of short paragraphs would be thousands).
MAX_WIDGETS = 150


def numbered(lines: int, end: str = "THE END") -> str:
    return "".join(f"line {i:05d} of the reply\n\n" for i in range(lines)) + end


def test_cut_keeps_whole_lines_and_says_how_much_is_hidden():
    text = numbered(20_000)
    part = huge_text.cut(text)
    assert part is not None
    assert part.head.endswith("\n") and len(part.head) <= huge_text.HEAD
    assert part.head.count("\n") == huge_text.HEAD_LINES
    assert part.tail.startswith("line ") and part.tail.endswith("THE END")
    assert len(part.head) + part.hidden + len(part.tail) == len(text)
    assert part.hidden_lines == text.count("\n", len(part.head), len(text) - len(part.tail))
    assert huge_text.cut(text[:huge_text.CUT_AT]) is None
    for lang in ("en", "zh"):
        line = huge_text.marker(lang, part)
        assert f"{part.hidden:,}" in line and "V" in line and "/export" in line


def test_rows_wrap_at_the_width_counting_wide_characters_twice():
    text = "abcdefghij\n\n" + "中文字符" * 3 + "\nxy"
    starts = row_starts(text, 4)
    ends = [*starts[1:], len(text)]
    rows = [text[a:b].rstrip("\n") for a, b in zip(starts, ends, strict=True)]
    assert rows == ["abcd", "efgh", "ij", "", "中文", "字符", "中文", "字符", "中文", "字符",
                    "xy"]


async def test_a_huge_streamed_reply_is_shown_cut_and_kept_whole(make_fake_server, tmp_path,
                                                                 monkeypatch):
    # Small limits, so the fake's four-character chunks stream it in seconds.
    monkeypatch.setattr(huge_text, "CUT_AT", 3_000)
    monkeypatch.setattr(huge_text, "HEAD", 1_000)
    monkeypatch.setattr(huge_text, "TAIL", 400)
    reply = numbered(400)
    fake_server = make_fake_server(limit=65_536)  # its default window would clip the reply
    fake_server.chunk_delay = 0.002  # streams for a few seconds: the cut line shows meanwhile
    fake_server.reply_fn = lambda body: reply
    app = make_app(fake_server, tmp_path, context_window=65_536, response_reserve=30_000)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "send me everything")
        await wait_for(pilot, lambda: app.chat.reply.view is not None
                       and app.chat.reply.view.query(".cut"), "the cut line while it streams")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends", 60)
        view = views(app)[-1]
        assert view.message.content == reply
        head = view.query_one(Markdown).source
        assert head == huge_text.cut(reply).head  # what the stored message shows
        assert reply.startswith(head) and 500 <= len(head) <= 1_000 and head.endswith("\n")
        line = str(view.query_one(".cut", Static).content)
        hidden = huge_text.cut(reply, head=len(head)).hidden
        assert f"{hidden:,} characters" in line and "V (" in line
        assert str(view.query_one(".tail", Static).content).endswith("THE END")
        with Store(tmp_path / "sessions.db") as store:
            stored = store.messages(store.latest_conversation().id)
        assert stored[-1].content == reply

        await pilot.press("tab", "v")
        await wait_for(pilot, lambda: isinstance(app.screen, FullTextScreen), "the whole text")
        pager = app.screen.query_one(TextPager)
        assert pager.text == reply
        await pilot.press("end")
        await pilot.pause()
        assert pager.row_text(pager.rows - 1) == "THE END"
        assert "THE END" in screen_text(app) and "line 00399 of the reply" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, FullTextScreen), "closed")


async def test_a_stored_huge_message_opens_cut_with_few_widgets(fake_server, tmp_path):
    reply = numbered(20_000)
    paste = "a pasted log line\n" * 20_000
    with Store(tmp_path / "sessions.db") as store:
        conv = store.create_conversation()
        store.add_message(conv.id, Message("user", paste))
        store.add_message(conv.id, Message("assistant", reply))
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(views(app)) == 2, "the session")
        await pilot.pause()
        conversation = app.chat.query_one(Conversation)
        assert len(conversation.query(".cut")) == 2
        assert sum(1 for _ in conversation.walk_children()) < MAX_WIDGETS
        assert [v.message.content for v in views(app)] == [paste, reply]
        # Not selected: /view takes the newest reply.
        await type_and_send(pilot, "/view")
        await wait_for(pilot, lambda: isinstance(app.screen, FullTextScreen), "the whole text")
        assert app.screen.query_one(TextPager).text == reply
