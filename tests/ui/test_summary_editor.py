"""The summary editor: saving, cancelling without losing edits, the originals, tokens, CJK."""

from __future__ import annotations

from datetime import datetime

from textual import events
from textual.app import App
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.widgets import Button, Static, TextArea

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.records import Summary
from jarvis_tui.core.window.tokens import estimate
from jarvis_tui.ui.screens.summary_editor import SummaryEditor

CREATED = datetime(2024, 5, 1, 12, 30).timestamp()
MARKUP = "[bold]x[/] [/]"


def make_summary(content: str = "The user is planning a trip to Kyoto.", kind: str = "auto",
                 covered_count: int = 42) -> Summary:
    return Summary(id=7, conversation_id=1, content=content, first_message_id=1,
                   last_message_id=covered_count, covered_count=covered_count, kind=kind,
                   focus=None, model="m", created_at=CREATED, replaces_id=None)


def make_covered() -> list[Message]:
    return [
        Message("user", f"Show me {MARKUP} literally", id=1, created_at=CREATED),
        Message("assistant", "好的，京都的红叶在十一月最美。", id=2, created_at=CREATED),
    ]


class Host(App[None]):
    def __init__(self, editor: SummaryEditor, language: str = "en") -> None:
        super().__init__()
        self.language = language
        self.editor = editor
        self.results: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.editor, callback=self.results.append)


def host(summary: Summary | None = None, covered: list[Message] | None = None,
         max_tokens: int = 1000, language: str = "en") -> Host:
    covered = make_covered() if covered is None else covered
    editor = SummaryEditor(summary or make_summary(), covered, max_tokens)
    return Host(editor, language)


def text_of(app: App, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def area(app: App) -> TextArea:
    return app.screen.query_one("#editor", TextArea)


async def type_at_end(pilot, app: App, text: str) -> None:
    editor = area(app)
    editor.move_cursor(editor.document.end)
    await pilot.press(*["space" if c == " " else c for c in text])
    await pilot.pause()


async def test_title_hint_and_editor_start_focused():
    app = host(make_summary(kind="manual", covered_count=42))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert text_of(app, "#title") == (
            "Summary · manual (/compact) · 2024-05-01 12:30 · covers 42 messages")
        assert "ctrl+s save" in text_of(app, "#hint") and "Esc cancel" in text_of(app, "#hint")
        editor = area(app)
        assert editor.has_focus and editor.soft_wrap
        assert editor.text == "The user is planning a trip to Kyoto."


async def test_edit_and_ctrl_s_returns_the_new_text_stripped():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await type_at_end(pilot, app, " In May.  ")
        await pilot.press("enter", "enter")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["The user is planning a trip to Kyoto. In May."]


async def test_keys_then_ctrl_s_in_one_burst_save_every_key():
    """Ctrl+S right behind the typing (one read from the terminal) saves all of it."""
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        editor = area(app)
        editor.move_cursor(editor.document.end)
        await pilot.pause()
        for key in [*"!!", "ctrl+s"]:  # queued together, as the driver posts them
            app.post_message(events.Key(key, "\x13" if key == "ctrl+s" else key))
        await pilot.pause(0.2)
    assert app.results == ["The user is planning a trip to Kyoto.!!"]


async def test_save_button_returns_the_text():
    app = host(make_summary(content=f"keep {MARKUP}"))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_at_end(pilot, app, "!")
        await pilot.click("#save")
        await pilot.pause()
    assert app.results == [f"keep {MARKUP}!"]


async def test_unchanged_or_only_whitespace_added_saves_nothing():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == [None]

    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await type_at_end(pilot, app, "   ")
        await pilot.press("enter", "ctrl+s")
        await pilot.pause()
    assert app.results == [None]


async def test_empty_text_shows_an_error_and_stays_open():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        area(app).text = "  \n\t "
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.results == []
        assert isinstance(app.screen, SummaryEditor)
        notice = app.screen.query_one("#notice", Static)
        assert str(notice.render()) == "A summary cannot be empty; press Esc to cancel"
        assert notice.has_class("-error") and notice.display
        # Typing clears the error; saving then works.
        await type_at_end(pilot, app, "New")
        assert not notice.display
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["New"]


async def test_esc_with_changes_asks_first_and_second_esc_discards():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await type_at_end(pilot, app, " edit")
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == []
        assert isinstance(app.screen, SummaryEditor)
        assert text_of(app, "#notice") == (
            "Discard your changes? Esc again to discard, ctrl+s to save")
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_editing_after_the_question_asks_again_and_ctrl_s_still_saves():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await type_at_end(pilot, app, " a")
        await pilot.press("escape")
        await type_at_end(pilot, app, "b")
        notice = app.screen.query_one("#notice", Static)
        assert not notice.display
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [] and notice.has_class("-confirm")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["The user is planning a trip to Kyoto. ab"]


async def test_esc_without_changes_and_cancel_button_close_at_once():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]

    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.click("#cancel")
        await pilot.pause()
    assert app.results == [None]


async def test_originals_show_next_to_the_editor_literally():
    app = host()
    async with app.run_test(size=(120, 40)) as pilot:
        originals = app.screen.query_one("#originals", VerticalScroll)
        assert not originals.display
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert originals.display and area(app).display  # wide enough for both
        assert originals.region.width > 30 and area(app).region.width > 30
        shown = text_of(app, "#originals-text")
        assert f"Show me {MARKUP} literally" in shown
        assert "You  2024-05-01 12:30" in shown
        assert "Assistant  2024-05-01 12:30\n好的，京都的红叶在十一月最美。" in shown
        assert str(app.screen.query_one("#toggle", Button).label) == "Hide originals"
        assert originals.border_title == "Original messages (2)"
        # Still editable while reading them.
        assert area(app).has_focus
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not originals.display and area(app).has_focus


async def test_originals_replace_the_editor_when_narrow():
    app = host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click("#toggle")
        await pilot.pause()
        originals = app.screen.query_one("#originals", VerticalScroll)
        assert originals.display and not area(app).display
        assert MARKUP in text_of(app, "#originals-text")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert area(app).display and area(app).has_focus


async def test_no_covered_messages_says_they_are_not_loaded():
    app = host(covered=[])
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert text_of(app, "#originals-text") == "The original messages are not loaded"


async def test_token_line_follows_typing_and_warns_above_the_budget():
    summary = make_summary(content="short")
    limit = estimate("short") + 3
    app = host(summary, max_tokens=limit)
    async with app.run_test(size=(100, 40)) as pilot:
        tokens = app.screen.query_one("#tokens", Static)
        assert str(tokens.render()) == f"About {estimate('short')} tokens (summary budget {limit})"
        assert not tokens.has_class("-over")
        added = " and some more words, quite a few of them"
        await type_at_end(pilot, app, added)
        n = estimate("short" + added)
        assert n > limit
        assert str(tokens.render()) == (
            f"About {n} tokens: longer than the summary budget of {limit} tokens; "
            "it costs context on every request")
        assert tokens.has_class("-over")
        # Over budget is a warning, not an error: it still saves.
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["short" + added]


async def test_cjk_summary_edits_fine():
    app = host(make_summary(content="用户计划去京都旅行。"))
    async with app.run_test(size=(100, 40)) as pilot:
        before = str(app.screen.query_one("#tokens", Static).render())
        await type_at_end(pilot, app, "十一月去")
        await pilot.press("backspace")  # one keypress removes one whole character
        await pilot.pause()
        assert area(app).text == "用户计划去京都旅行。十一月"
        after = str(app.screen.query_one("#tokens", Static).render())
        n = estimate("用户计划去京都旅行。十一月")
        assert after == f"About {n} tokens (summary budget 1000)"
        assert after != before
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["用户计划去京都旅行。十一月"]


async def test_chinese_interface():
    app = host(make_summary(kind="manual"), max_tokens=1, language="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        assert text_of(app, "#title") == (
            "摘要 · 手动（/compact） · 2024-05-01 12:30 · 涵盖 42 条消息")
        assert text_of(app, "#hint").startswith("ctrl+s 保存")
        assert "超出摘要预算 1 个 token" in text_of(app, "#tokens")
        labels = [str(b.label) for b in app.screen.query(Button)]
        assert labels == ["保存", "显示原始消息", "取消"]
        await type_at_end(pilot, app, "x")
        await pilot.press("escape")
        await pilot.pause()
        assert text_of(app, "#notice") == "放弃修改？再按 Esc 放弃，按 ctrl+s 保存"
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "你  2024-05-01 12:30" in text_of(app, "#originals-text")
        assert "助手" in text_of(app, "#originals-text")

    app = host(covered=[], language="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        area(app).text = ""
        await pilot.press("ctrl+s", "ctrl+o")
        await pilot.pause()
        assert text_of(app, "#notice") == "摘要不能为空；按 Esc 取消"
        assert text_of(app, "#originals-text") == "原始消息未加载"


async def test_fits_80_by_24_with_warning_and_notice_showing():
    for language in ("en", "zh"):
        app = host(max_tokens=1, language=language)
        async with app.run_test(size=(80, 24)) as pilot:
            await type_at_end(pilot, app, " x")
            await pilot.press("escape")
            await pilot.pause()
            screen = Region(0, 0, 80, 24)
            for selector in ("#title", "#hint", "#editor", "#tokens", "#notice", "#save",
                             "#toggle", "#cancel"):
                region = app.screen.query_one(selector).region
                assert region.height >= 1 and screen.contains_region(region), selector
            assert area(app).region.height >= 10
            assert app.screen.query_one("#title").region.height == 1


async def test_the_editor_counts_the_summary_as_the_gauge_does(fake_server, tmp_path):
    """A session whose counts are calibrated against the server (2x our estimate here): the
    editor's token line is the calibrated count the gauge uses, not the raw estimate."""
    from jarvis_tui.core.store.store import Store
    from tests.engine_helpers import summarising_replies
    from tests.ui.app_helpers import SIZE, make_app, talk_then_compact

    summarising_replies(fake_server)
    store = Store(tmp_path / "sessions.db")
    cid = store.create_conversation(model="fake-model").id
    store.set_meta(cid, "calibration", {"openai:fake-model": 2.0})
    app = make_app(fake_server, tmp_path, store=store, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, ["the plan for Kyoto", "the budget in yen", "the dates"])
        session = app.chat.session
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, SummaryEditor)
        summary = session.summary.content.strip()
        counted = session.tokens(summary)
        assert counted > estimate(summary)
        assert text_of(app, "#tokens") == (
            f"About {counted} tokens (summary budget {session.compaction.summary_max_tokens})")
