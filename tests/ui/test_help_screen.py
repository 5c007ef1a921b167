"""The help screen: two sections in two columns, scrolling, closing keys, gauge note, Chinese."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from jarvis_tui.ui.screens.help import HelpScreen

MARKUP = "[bold]x[/] [/]"
KEYS = [("F1", "Show this help"), ("ctrl+n", "New session"), ("[", f"Shows {MARKUP} literally")]
COMMANDS = [("/compact [focus]", "Summarise older turns now"), ("/export", "导出整个会话")]


class Host(App[None]):
    def __init__(self, screen: HelpScreen, language: str = "en") -> None:
        super().__init__()
        self.language = language
        self.help = screen
        self.results: list[None] = []

    def on_mount(self) -> None:
        self.push_screen(self.help, callback=self.results.append)


def host(keys=KEYS, commands=COMMANDS, language: str = "en") -> Host:
    return Host(HelpScreen(keys, commands), language)


def texts(app: App, selector: str) -> list[str]:
    return [str(s.render()) for s in app.screen.query(selector).results(Static)]


def pairs(app: App, section: str) -> list[tuple[str, str]]:
    out = []
    for row in app.screen.query(f".{section}-row"):
        key, desc = row.query(Static)
        out.append((str(key.render()), str(desc.render())))
    return out


async def test_keys_and_commands_in_two_columns():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert texts(app, ".section") == ["Keys", "Commands"]
        assert pairs(app, "keys") == KEYS
        assert pairs(app, "commands") == COMMANDS
        # Every key cell has the same width, so the descriptions line up in one column.
        widths = {s.outer_size.width for s in app.screen.query(".key")}
        assert widths == {len("/compact [focus]") + 2}
        descs = list(app.screen.query(".desc"))
        assert len({d.region.x for d in descs}) == 1
        assert str(app.screen.query_one("#dialog").border_title) == "Help"


async def test_markup_in_keys_and_descriptions_is_drawn_literally():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        key, desc = list(app.screen.query(".keys-row"))[2].query(Static)
        assert str(key.render()) == "["
        assert str(desc.render()) == f"Shows {MARKUP} literally"
        lines = [desc.render_line(y).text for y in range(desc.size.height)]
        assert MARKUP in "".join(lines)


async def test_gauge_note_names_the_colours_in_their_own_colours_and_the_store():
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        note = app.screen.query_one("#gauge", Static)
        content = note.content
        assert isinstance(content, Content)
        plain = content.plain
        assert "green means plenty of room" in plain and "red that the threshold" in plain
        assert "every message stays in the session store" in plain
        styled = {plain[s.start:s.end]: str(s.style) for s in content.spans}
        assert styled == {"green": "bold $text-success", "yellow": "bold $text-warning",
                          "red": "bold $text-error"}


@pytest.mark.parametrize("key", ["escape", "f1", "q"])
async def test_closed_by_escape_f1_or_q(key):
    app = host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press(key)
        await pilot.pause()
        assert app.results == [None]
        assert not isinstance(app.screen, HelpScreen)


async def test_a_long_list_scrolls_by_keyboard():
    keys = [(f"ctrl+{i}", f"Action number {i} 第{i}项") for i in range(60)]
    app = host(keys=keys)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        scroll = app.screen.query_one("#scroll", VerticalScroll)
        assert scroll.has_focus
        assert scroll.max_scroll_y > 0
        assert scroll.scroll_y == 0
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y
        note = app.screen.query_one("#gauge", Static)
        assert scroll.scrollable_content_region.contains_region(note.region)
        await pilot.press("q")
        await pilot.pause()
        assert app.results == [None]


async def test_empty_sections_say_so():
    app = host(keys=[], commands=[])
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert texts(app, ".none") == ["(none)", "(none)"]


async def test_chinese_headings_and_note():
    app = host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert texts(app, ".section") == ["按键", "命令"]
        assert str(app.screen.query_one("#dialog").border_title) == "帮助"
        plain = app.screen.query_one("#gauge", Static).content.plain
        assert "绿色表示空间充足" in plain and "完整保留在会话存储中" in plain
        assert "Esc、F1 或 q 关闭" in texts(app, "#hint")[0]
        assert pairs(app, "commands")[1] == ("/export", "导出整个会话")
