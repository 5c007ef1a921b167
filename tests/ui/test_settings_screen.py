"""The settings screen: checks as typed, saves only changed keys to a real TOML file, cancels
cleanly, previews themes, speaks Chinese, survives write failures and fits 80x24."""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.app import App
from textual.geometry import Region
from textual.theme import Theme
from textual.widgets import Button, Input, Select, Static

from jarvis_tui.core.settings.config import Settings, load_settings
from jarvis_tui.ui.screens.settings import SettingsScreen

MARKUP = "[bold]x[/] [/]"
FILE_TEXT = 'model = "gpt-4o"\ncontext_window = 4096\nsystem_reserve = 256\ntheme = "t-dark"\n'
THEMES = ["t-dark", "t-light", "not-registered"]


class Host(App[None]):
    def __init__(self, settings: Settings, config_file: Path | None, language: str = "en",
                 themes: list[str] | None = None, pinned: tuple[int, int] = (0, 0)) -> None:
        super().__init__()
        self.language = language
        self.screen_under_test = SettingsScreen(settings, config_file,
                                                THEMES if themes is None else themes, pinned)
        self.results: list[Settings | None] = []

    def on_mount(self) -> None:
        self.register_theme(Theme(name="t-dark", primary="#3366ff", dark=True))
        self.register_theme(Theme(name="t-light", primary="#0044aa", dark=False))
        self.theme = "t-dark"
        self.push_screen(self.screen_under_test, callback=self.results.append)


def config_file(tmp_path: Path, text: str = FILE_TEXT) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def host_for(path: Path, language: str = "en") -> Host:
    return Host(load_settings(path, env={}), path, language)


def text_of(app: App, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def shown(app: App, selector: str) -> bool:
    return app.screen.query_one(selector).display


def save_button(app: App) -> Button:
    return app.screen.query_one("#save", Button)


async def type_into(pilot, key: str, text: str) -> None:
    field = pilot.app.screen.query_one(f"#field-{key}", Input)
    field.focus()
    await pilot.pause()
    await pilot.press("end", "ctrl+u", *text)
    await pilot.pause()
    assert field.value == text


async def test_opens_with_the_file_path_and_the_budget(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)):
        assert text_of(app, "#title") == "Settings"
        assert text_of(app, "#path") == f"Settings file: {path}"
        assert app.screen.query_one("#field-compact_threshold", Input).value == "70"
        assert app.screen.query_one("#field-context_window", Input).value == "4096"
        assert text_of(app, "#budget") == (
            "Budget: 4096 − 1024 − 256 = 2816 tokens, compacting at 1971 tokens"
        )
        assert not save_button(app).disabled
        assert "0 = detect from the server / known model" in [
            str(s.render()) for s in app.screen.query(".hint").results(Static)
        ]


async def test_bad_reserve_disables_save_and_fixing_it_enables_it(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    before = path.read_bytes()
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "response_reserve", "abc")
        assert shown(app, "#error-response_reserve")
        assert text_of(app, "#error-response_reserve") == (
            "expected a whole number >= 1, got 'abc'"
        )
        assert save_button(app).disabled
        assert text_of(app, "#budget") == "Budget: fix the marked fields first"

        # ctrl+s explains instead of saving
        await pilot.press("ctrl+s")
        assert text_of(app, "#status") == (
            "Not saved: Response reserve (tokens): expected a whole number >= 1, got 'abc'"
        )
        assert isinstance(app.screen, SettingsScreen)
        assert path.read_bytes() == before

        # a number, but one that leaves no budget: a cross-field problem with the arithmetic
        await type_into(pilot, "response_reserve", "4000")
        assert not shown(app, "#error-response_reserve")
        assert text_of(app, "#status") == ""  # the old complaint went with the edit
        assert text_of(app, "#problems") == (
            "the reserves must leave a positive budget: 4096 − 4000 − 256 = −160 tokens; "
            "at least 256 are needed"
        )
        assert text_of(app, "#budget") == "Budget: 4096 − 4000 − 256 = −160 tokens"
        assert save_button(app).disabled

        await type_into(pilot, "response_reserve", "2000")
        assert not shown(app, "#problems")
        assert not save_button(app).disabled
        assert text_of(app, "#budget") == (
            "Budget: 4096 − 2000 − 256 = 1840 tokens, compacting at 1288 tokens"
        )
    assert path.read_bytes() == before


async def test_save_writes_only_changed_keys_and_dismisses(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "response_reserve", "2000")
        await type_into(pilot, "compact_threshold", "80")
        await type_into(pilot, "model", "  qwen2.5-7b ")
        await type_into(pilot, "keep_recent_turns", "3")  # the same as before: not a change
        await type_into(pilot, "system_reserve", "256")
        assert app.screen_under_test.changes() == {
            "response_reserve": 2000, "compact_threshold": 0.8, "model": "qwen2.5-7b",
        }
        await pilot.click("#save")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)

    on_disk = tomllib.loads(path.read_text(encoding="utf-8"))
    # the file's own keys stay, the changed keys join them, nothing else is written
    assert on_disk == {"model": "qwen2.5-7b", "context_window": 4096, "response_reserve": 2000,
                       "system_reserve": 256, "compact_threshold": 0.8, "theme": "t-dark"}
    [result] = app.results
    assert isinstance(result, Settings)
    assert (result.response_reserve, result.compact_threshold, result.model) == (
        2000, 0.8, "qwen2.5-7b")
    assert result.keep_recent_turns == 3
    assert load_settings(path, env={}) == result


COMMENTED = """# my settings, kept in my dotfiles
model = "gpt-4o"  # the one I pay for

context_window = 4096
theme = "t-dark"  # dark at night
"""


async def test_save_keeps_the_files_comments_and_its_symlink(tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    dotfile = config_file(tmp_path / "dotfiles", COMMENTED)
    link = tmp_path / "config.toml"
    link.symlink_to(dotfile)
    app = host_for(link)
    async with app.run_test(size=(100, 40)) as pilot:
        await choose_theme(pilot, "t-light")
        await type_into(pilot, "response_reserve", "2000")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)
    assert link.is_symlink() and link.resolve() == dotfile
    assert dotfile.read_text(encoding="utf-8") == COMMENTED.replace(
        '"t-dark"  # dark', '"t-light"  # dark') + "response_reserve = 2000\n"


async def test_ctrl_s_saves_from_the_keyboard(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "summary_model", "gpt-4o-mini")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert tomllib.loads(path.read_text(encoding="utf-8"))["summary_model"] == "gpt-4o-mini"
    assert app.results[0] is not None and app.results[0].summary_model == "gpt-4o-mini"


async def test_threshold_is_a_percentage(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        for bad in ("abc", "5", "101", "0.8"):
            await type_into(pilot, "compact_threshold", bad)
            assert text_of(app, "#error-compact_threshold") == (
                "expected a percentage between 10 and 100 (70 means 0.70), "
                f"got '{bad}'"
            )
            assert save_button(app).disabled
        await type_into(pilot, "compact_threshold", "100%")
        assert not shown(app, "#error-compact_threshold")
        assert text_of(app, "#budget").endswith("compacting at 2816 tokens")
        await type_into(pilot, "compact_threshold", "80")
        assert app.screen_under_test.changes() == {"compact_threshold": 0.8}
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert tomllib.loads(path.read_text(encoding="utf-8"))["compact_threshold"] == 0.8
    assert app.results[0] is not None and app.results[0].compact_threshold == 0.8


async def test_recall_budget_is_a_percentage_up_to_half(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.screen.query_one("#field-recall_budget", Input).value == "35"
        for bad in ("60", "-1", "lots"):
            await type_into(pilot, "recall_budget", bad)
            assert text_of(app, "#error-recall_budget") == (
                f"expected a percentage between 0 and 50 (35 means 0.35), got '{bad}'")
            assert save_button(app).disabled
        await type_into(pilot, "recall_budget", "0")  # off
        assert app.screen_under_test.changes() == {"recall_budget": 0.0}
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert tomllib.loads(path.read_text(encoding="utf-8"))["recall_budget"] == 0.0


async def test_shows_what_pinned_messages_take(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = Host(load_settings(path, env={}), path, pinned=(3, 1412))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert text_of(app, "#pinned") == ("Pinned messages: 3, 1,412 tokens, always sent in "
                                           "full; they take their room from the budget.")
    app = host_for(path, language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert text_of(app, "#pinned") == "已固定的消息：无（可用 /pin 或 /recall 固定）。"


async def test_non_numbers_and_bad_text_fields_say_why(tmp_path: Path) -> None:
    app = host_for(config_file(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "context_window", "abc")
        assert text_of(app, "#error-context_window") == (
            "expected a whole number >= 0 (0 = auto), got 'abc'"
        )
        await type_into(pilot, "keep_recent_turns", "2.5")
        assert text_of(app, "#error-keep_recent_turns") == (
            "expected a whole number between 0 and 1000, got '2.5'"
        )
        await type_into(pilot, "base_url", "ftp://x")
        assert text_of(app, "#error-base_url") == (
            "expected a URL starting with http:// or https://, got 'ftp://x'"
        )
        await type_into(pilot, "model", "   ")
        assert "expected a non-empty model name" in text_of(app, "#error-model")
        assert save_button(app).disabled
        await pilot.press("ctrl+s")
        status = text_of(app, "#status")
        assert status.startswith("Not saved: Context window (tokens): expected a whole number")
        assert "Base URL:" in status and "Model:" in status
        # input text is never read as markup
        await type_into(pilot, "context_window", MARKUP)
        assert text_of(app, "#error-context_window") == (
            f"expected a whole number >= 0 (0 = auto), got '{MARKUP}'"
        )


async def test_window_zero_uses_the_known_model(tmp_path: Path) -> None:
    app = host_for(config_file(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "context_window", "0")
        assert text_of(app, "#budget") == (
            "Budget: 128000 − 1024 − 256 = 126720 tokens, compacting at 88704 tokens"
            " (window of the known model)"
        )
        await type_into(pilot, "model", "my-own-model")
        assert text_of(app, "#budget").startswith("Budget: 8192 − 1024 − 256 = 6912 tokens")
        assert text_of(app, "#budget").endswith("(default window: model not known)")
        # with the default window a big reserve is caught too
        await type_into(pilot, "response_reserve", "8000")
        assert "8192 − 8000 − 256 = −64 tokens" in text_of(app, "#problems")
        assert save_button(app).disabled


async def test_cancel_discards_and_leaves_the_file_alone(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    before = path.read_bytes()
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "response_reserve", "2000")
        await type_into(pilot, "model", "qwen")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)
    assert app.results == [None]
    assert path.read_bytes() == before


async def test_cancel_button(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    before = path.read_bytes()
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "model", "qwen")
        await pilot.click("#cancel")
        await pilot.pause()
    assert app.results == [None]
    assert path.read_bytes() == before


async def choose_theme(pilot, name: str) -> None:
    select = pilot.app.screen.query_one("#field-theme", Select)
    select.focus()
    await pilot.pause()
    await pilot.press("enter")  # open the list
    await pilot.pause()
    for _ in range(THEMES.index(name) - THEMES.index(str(select.value))):
        await pilot.press("down")
    await pilot.press("enter")
    await pilot.pause()
    assert select.value == name


async def test_theme_preview_and_restore_on_cancel(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    before = path.read_bytes()
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.theme == "t-dark"
        await choose_theme(pilot, "t-light")
        assert app.theme == "t-light"  # previewed at once
        await choose_theme(pilot, "not-registered")
        assert app.theme == "t-light"  # unknown to the app: the preview stays as it was
        await pilot.press("escape")
        await pilot.pause()
        assert app.theme == "t-dark"
    assert app.results == [None]
    assert path.read_bytes() == before


async def test_theme_saved_stays(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await choose_theme(pilot, "t-light")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.theme == "t-light"
    assert tomllib.loads(path.read_text(encoding="utf-8"))["theme"] == "t-light"
    assert app.results[0] is not None and app.results[0].theme == "t-light"


async def test_language_select_saves(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        app.screen.query_one("#field-language", Select).value = "zh"
        await pilot.pause()
        assert app.screen_under_test.changes() == {"language": "zh"}
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert tomllib.loads(path.read_text(encoding="utf-8"))["language"] == "zh"


async def test_chinese_interface(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    app = host_for(path, language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        assert text_of(app, "#title") == "设置"
        assert text_of(app, "#path") == f"设置文件：{path}"
        assert str(save_button(app).label) == "保存 (ctrl+s)"
        labels = [str(s.render()) for s in app.screen.query(".label").results(Static)]
        assert labels[:4] == ["上下文窗口（token）", "回复预留（token）", "系统预留（token）",
                              "压缩阈值（%）"]
        assert text_of(app, "#budget") == (
            "预算：4096 − 1024 − 256 = 2816 个 token，用到 1971 个 token 时压缩"
        )
        await type_into(pilot, "response_reserve", "abc")
        assert text_of(app, "#error-response_reserve") == "应为大于或等于 1 的整数，当前为 'abc'"
        await type_into(pilot, "compact_threshold", "七十")
        assert text_of(app, "#error-compact_threshold") == (
            "应为 10 到 100 之间的百分数（70 即 0.70），当前为 '七十'"
        )
        await pilot.press("ctrl+s")
        assert text_of(app, "#status").startswith("未保存：回复预留（token）：应为")
        await type_into(pilot, "compact_threshold", "70")
        await type_into(pilot, "response_reserve", "4000")
        assert text_of(app, "#problems") == (
            "预留之后的预算必须为正：4096 − 4000 − 256 = −160 个 token；至少需要 256 个"
        )
        # Chinese model names are text like any other
        await type_into(pilot, "response_reserve", "1024")
        await type_into(pilot, "summary_model", "通义千问")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert tomllib.loads(path.read_text(encoding="utf-8"))["summary_model"] == "通义千问"


async def test_write_failure_keeps_the_screen_and_the_typing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be", encoding="utf-8")
    path = blocker / "config.toml"
    app = Host(Settings(theme="t-dark"), path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "model", "qwen")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        status = text_of(app, "#status")
        assert status.startswith(f"Could not save: {path}: cannot read the config file")
        assert app.screen.query_one("#field-model", Input).value == "qwen"
        assert app.results == []
        # typing again clears the stale error; cancelling still works
        await type_into(pilot, "model", "qwen2")
        assert text_of(app, "#status") == ""
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_os_error_while_writing_is_shown(tmp_path: Path) -> None:
    # Reading a missing file is fine, but the temporary file's name (".<name>.<random>.tmp")
    # is longer than the filesystem allows, so the atomic write itself raises OSError.
    path = tmp_path / ("c" * 250)
    app = Host(Settings(theme="t-dark"), path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_into(pilot, "model", "qwen")
        await pilot.click("#save")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert text_of(app, "#status").startswith("Could not save: [Errno 36]")
        assert app.screen.query_one("#field-model", Input).value == "qwen"
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


async def test_markup_in_settings_and_path_is_literal(tmp_path: Path) -> None:
    folder = tmp_path / "[bold]cfg[i]"
    folder.mkdir()
    path = config_file(folder, FILE_TEXT.replace('"gpt-4o"', '"[bold]x[/] [/]"'))
    app = host_for(path)
    async with app.run_test(size=(100, 40)) as pilot:
        assert text_of(app, "#path") == f"Settings file: {path}"
        assert app.screen.query_one("#field-model", Input).value == MARKUP
        await type_into(pilot, "response_reserve", "2048")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results[0] is not None and app.results[0].model == MARKUP


async def test_fits_and_scrolls_in_80x24(tmp_path: Path) -> None:
    app = host_for(config_file(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen_region = Region(0, 0, 80, 24)
        for button_id in ("#save", "#cancel"):
            button = app.screen.query_one(button_id, Button)
            assert button.region.area > 0
            assert screen_region.contains_region(button.region)
        body = app.screen.query_one("#body")
        assert body.max_scroll_y > 0  # more fields than fit: the body scrolls
        language = app.screen.query_one("#field-language", Select)
        language.focus()
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()  # focusing may scroll smoothly
        await pilot.pause()
        assert body.scroll_y > 0
        assert body.region.contains_region(language.region)
        # the buttons stay put while the body scrolls
        assert screen_region.contains_region(app.screen.query_one("#save", Button).region)
