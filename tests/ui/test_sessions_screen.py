"""The session switcher: listing, filtering (CJK too), choosing, new session, empty state."""

from __future__ import annotations

from datetime import datetime

import pytest
from textual.app import App
from textual.widgets import DataTable, Input, Static

from jarvis_tui.core.store.records import SessionInfo
from jarvis_tui.ui.screens.sessions import NEW_SESSION, SessionsScreen

MARKUP = "[bold]x[/] [/]"
T1 = datetime(2024, 5, 1, 12, 30).timestamp()
T2 = datetime(2024, 4, 2, 8, 5).timestamp()


def conv(id: int, title: str, updated: float = T1, count: int = 3) -> SessionInfo:
    return SessionInfo(id=id, title=title, created_at=updated - 60, updated_at=updated,
                        model="m", message_count=count)


def sample() -> list[SessionInfo]:
    # Newest first, as Store.list_conversations returns them.
    return [
        conv(7, "Trip to Kyoto", T1, 12),
        conv(5, "京都旅行计划", T1, 4),
        conv(4, MARKUP, T2, 2),
        conv(2, "", T2, 0),
        conv(1, "Kyoto restaurants", T2, 9),
    ]


class Host(App[None]):
    def __init__(self, screen: SessionsScreen, language: str = "en") -> None:
        super().__init__()
        self.language = language
        self.sessions = screen
        self.results: list[int | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.sessions, callback=self.results.append)


def host(convs: list[SessionInfo] | None = None, current: int | None = 5,
         language: str = "en") -> Host:
    return Host(SessionsScreen(sample() if convs is None else convs, current), language)


def table(app: App) -> DataTable:
    return app.screen.query_one("#table", DataTable)


def rows(app: App) -> list[list[str]]:
    t = table(app)
    return [[cell.plain for cell in t.get_row_at(i)] for i in range(t.row_count)]


def text_of(app: App, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_lists_every_session_with_mark_date_count_and_id():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert [str(c.label) for c in table(app).ordered_columns] == [
            "", "Title", "Last updated", "Messages", "ID"]
        assert rows(app) == [
            ["", "Trip to Kyoto", "2024-05-01 12:30", "12", "7"],
            ["●", "京都旅行计划", "2024-05-01 12:30", "4", "5"],
            ["", MARKUP, "2024-04-02 08:05", "2", "4"],
            ["", "(untitled)", "2024-04-02 08:05", "0", "2"],
            ["", "Kyoto restaurants", "2024-04-02 08:05", "9", "1"],
        ]
        assert text_of(app, "#count") == "5 of 5 sessions"
        assert "ctrl+n new session" in text_of(app, "#hint")
        assert app.screen.query_one("#filter", Input).has_focus
        assert table(app).cursor_type == "row"


async def test_a_markup_title_is_drawn_literally():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        t = table(app)
        # Line 0 is the header; the markup title is the third session.
        drawn = t.render_line(3).text
        assert MARKUP in drawn
        assert "2024-04-02 08:05" in drawn


async def test_typing_narrows_by_title_ignoring_case():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"KYOTO")
        await pilot.pause()
        assert [r[1] for r in rows(app)] == ["Trip to Kyoto", "Kyoto restaurants"]
        assert text_of(app, "#count") == "2 of 5 sessions"
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        await pilot.pause()
        assert table(app).row_count == 5


async def test_typing_chinese_narrows_to_the_chinese_title():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("京", "都")
        await pilot.pause()
        assert app.screen.query_one("#filter", Input).value == "京都"
        assert rows(app) == [["●", "京都旅行计划", "2024-05-01 12:30", "4", "5"]]
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [5]


async def test_no_match_shows_the_query_literally():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        app.screen.query_one("#filter", Input).value = "zz[/]"
        await pilot.pause()
        assert table(app).row_count == 0
        assert app.screen.has_class("-empty")
        assert not table(app).display
        assert text_of(app, "#empty") == "No session title contains “zz[/]”."
        await pilot.press("enter")  # nothing to open: stays
        await pilot.pause()
        assert app.results == [] and isinstance(app.screen, SessionsScreen)


async def test_enter_in_the_filter_opens_the_highlighted_row_and_arrows_move_it():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("down", "down")
        await pilot.pause()
        assert table(app).cursor_row == 2
        assert app.screen.query_one("#filter", Input).has_focus
        await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [5]
        assert not isinstance(app.screen, SessionsScreen)


async def test_enter_on_the_focused_table_opens_that_row():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("tab")
        assert table(app).has_focus
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()
        assert app.results == [2]


async def test_one_click_on_a_row_opens_it():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        # y=0 is the header, so y=5 is the fifth session.
        assert await pilot.click("#table", offset=(10, 5))
        await pilot.pause()
        assert app.results == [1]


async def test_clicking_the_header_does_not_choose():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        await pilot.click("#table", offset=(10, 0))
        await pilot.pause()
        assert app.results == [] and isinstance(app.screen, SessionsScreen)


@pytest.mark.parametrize(("key", "result"), [("escape", None), ("ctrl+n", NEW_SESSION)])
async def test_escape_closes_and_ctrl_n_asks_for_a_new_session(key, result):
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("K")  # keys work while the filter has focus and text in it
        await pilot.press(key)
        await pilot.pause()
        assert app.results == [result]
        assert not isinstance(app.screen, SessionsScreen)


async def test_ctrl_n_works_from_the_table_too():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("tab", "ctrl+n")
        await pilot.pause()
        assert app.results == [0]


async def test_empty_state_without_sessions():
    app = host([], current=None)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-empty")
        assert text_of(app, "#empty") == "No saved sessions yet. Press ctrl+n to start one."
        assert text_of(app, "#count") == "0 of 0 sessions"
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == []
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.results == [0]


async def test_chinese_interface():
    app = host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert [str(c.label) for c in table(app).ordered_columns] == [
            "", "标题", "最后更新", "消息数", "编号"]
        assert rows(app)[3][1] == "（无标题）"
        assert text_of(app, "#count") == "显示 5 / 共 5 个会话"
        assert "ctrl+n 新会话" in text_of(app, "#hint")
        assert app.screen.query_one("#filter", Input).placeholder == "输入文字按标题筛选"
        app.screen.query_one("#filter", Input).value = "东京"
        await pilot.pause()
        assert text_of(app, "#empty") == "没有标题包含“东京”的会话。"


async def test_chinese_empty_state():
    app = host([], current=None, language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert text_of(app, "#empty") == "还没有保存的会话。按 ctrl+n 开始一个新会话。"


async def test_a_long_list_scrolls_to_the_cursor_and_filters():
    convs = [conv(i, f"会话 {i} session", T1 - i * 3600, i) for i in range(1, 301)]
    app = host(convs, current=1)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("tab", "end")
        await pilot.pause()
        t = table(app)
        assert t.cursor_row == 299
        assert t.scroll_y > 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [300]

    app = host(convs, current=1)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*["space" if c == " " else c for c in "session 12"])
        await pilot.pause()
        # "session 12" is not in "会话 12 session": the filter is a plain substring match.
        assert table(app).row_count == 0
        app.screen.query_one("#filter", Input).value = "会话 12"
        await pilot.pause()
        assert [r[4] for r in rows(app)] == ["12", "120", "121", "122", "123", "124", "125",
                                             "126", "127", "128", "129"]
        assert text_of(app, "#count") == "11 of 300 sessions"
