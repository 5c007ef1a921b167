"""Theme files: the shipped ones load, register, switch and read well; bad files are skipped."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.theme import Theme
from textual.widgets import Static

from jarvis_tui.ui import themes
from jarvis_tui.ui.themes import builtin_theme_dir, load_themes, register_themes, user_theme_dir

REPO = Path(__file__).resolve().parents[2]
GOOD = """
name = "{name}"
dark = true
primary = "#3366cc"
background = "#101010"
"""


def write(directory: Path, filename: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(text, encoding="utf-8")
    return path


def by_name(found: list[Theme]) -> dict[str, Theme]:
    return {t.name: t for t in found}


class Panel(Static):
    DEFAULT_CSS = "Panel { background: $surface; color: $foreground; }"


class Host(App[None]):
    def __init__(self, dirs: list[Path] | None = None) -> None:
        super().__init__()
        self.problems = register_themes(self, dirs)

    def compose(self) -> ComposeResult:
        yield Panel("x", id="panel")


# -- the shipped themes -----------------------------------------------------------------------

def test_builtin_dir_is_the_repo_themes_folder_in_a_development_install():
    assert builtin_theme_dir() == REPO / "themes"


def test_both_shipped_themes_load_without_problems():
    found, problems = load_themes([REPO / "themes"])
    assert problems == []
    named = by_name(found)
    assert set(named) == {"jarvis-dark", "jarvis-light"}
    assert named["jarvis-dark"].dark is True
    assert named["jarvis-light"].dark is False
    assert named["jarvis-dark"].primary == "#4ea1e0"
    assert named["jarvis-dark"].variables["block-cursor-text-style"] == "none"


async def test_app_registers_and_switches_to_both_themes(tmp_path, monkeypatch):
    monkeypatch.setattr(themes, "config_path", lambda: tmp_path / "config.toml")
    app = Host()  # default directories: built-in, then the (empty) user folder
    async with app.run_test(size=(60, 10)) as pilot:
        assert app.problems == []
        assert {"jarvis-dark", "jarvis-light"} <= set(app.available_themes)
        panel = app.query_one("#panel", Panel)

        app.theme = "jarvis-dark"
        await pilot.pause()
        assert app.current_theme.name == "jarvis-dark"
        assert app.get_css_variables()["primary"] == "#4EA1E0"
        assert panel.styles.background == Color.parse("#151d27")
        assert panel.styles.color == Color.parse("#d6dde6")

        app.theme = "jarvis-light"
        await pilot.pause()
        assert app.current_theme.name == "jarvis-light"
        assert app.current_theme.dark is False
        assert panel.styles.background == Color.parse("#ffffff")
        assert panel.styles.color == Color.parse("#1c2733")


def _luminance(c: Color) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)


def contrast(fore: str, back: str) -> float:
    """WCAG 2 contrast ratio; a translucent foreground is first laid over the background."""
    b = Color.parse(back)
    f = b + Color.parse(fore)
    hi, lo = sorted((_luminance(f), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("name", ["jarvis-dark", "jarvis-light"])
def test_shipped_themes_keep_text_readable(name):
    theme = by_name(load_themes([REPO / "themes"])[0])[name]
    colours = theme.to_color_system().generate()
    # Code blocks draw their tokens in the $text-* colours, so these are what "readable" means.
    texts = ["foreground", "text-primary", "text-secondary", "text-accent", "text-warning",
             "text-error", "text-success"]
    for back in ("background", "surface", "panel"):
        for fore in texts:
            ratio = contrast(colours[fore], colours[back])
            assert ratio >= 7.0, f"{name}: {fore} on {back} is only {ratio:.2f}:1"
        # Widgets also draw text straight in the base colours (`color: $warning`): WCAG AA.
        for fore in ("primary", "secondary", "accent", "warning", "error", "success"):
            ratio = contrast(colours[fore], colours[back])
            assert ratio >= 4.5, f"{name}: {fore} on {back} is only {ratio:.2f}:1"
    for fore, back in (("footer-key-foreground", "footer-background"),
                       ("input-selection-foreground", "input-selection-background")):
        ratio = contrast(colours[fore], colours[back])
        assert ratio >= 4.5, f"{name}: {fore} on {back} is only {ratio:.2f}:1"


# -- bad files --------------------------------------------------------------------------------

BAD_FILES = {
    "a-syntax.toml": ('name = "broken"\nprimary = "#ffffff\n', "not valid TOML"),
    "b-noname.toml": ('primary = "#ffffff"\n', "missing name"),
    "c-colour.toml": ('name = "c"\nprimary = "#12345"\n', "primary = '#12345' is not a colour"),
    "d-unknown.toml": ('name = "d"\nprimay = "#ffffff"\nprimary = "#ffffff"\n',
                       "unknown key 'primay' (did you mean 'primary'?)"),
    "e-dark.toml": ('name = "e"\nprimary = "#ffffff"\ndark = "yes"\n',
                    "dark must be true or false"),
    "f-variable.toml": ('name = "f"\nprimary = "#ffffff"\n[variables]\nborder = "bluish"\n',
                        "variable border = 'bluish' is not a colour"),
    "g-comma.toml": ('name = "a,b"\nprimary = "#ffffff"\n', "must not contain commas"),
    "h-noprimary.toml": ('name = "h"\n', "missing primary colour"),
    "i-number.toml": ('name = "i"\nprimary = "#fff"\ntext_alpha = 3\n', "between 0 and 1"),
    "j-colourtype.toml": ('name = "j"\nprimary = 12\n', "primary = 12 is not a colour"),
}


def test_bad_files_are_reported_and_skipped_while_good_ones_load(tmp_path):
    folder = tmp_path / "themes"
    for filename, (text, _) in BAD_FILES.items():
        write(folder, filename, text)
    write(folder, "m-good.toml", GOOD.format(name="good") + '[variables]\nmy-own = "anything"\n')
    (folder / "n-binary.toml").write_bytes(b"name = \"\xff\xfe\"\n")
    write(folder, "z-dup.toml", GOOD.format(name="good"))
    write(folder, "notes.txt", "not a theme, not read")

    found, problems = load_themes([folder])

    assert [t.name for t in found] == ["good"]
    assert found[0].variables == {"my-own": "anything"}
    assert len(problems) == len(BAD_FILES) + 2
    for line in problems:
        assert line.startswith(str(folder)) and line.endswith("; skipped")
    for filename, (_, what) in BAD_FILES.items():
        [line] = [p for p in problems if p.startswith(f"{folder / filename}: ")]
        assert what in line, line
    [binary] = [p for p in problems if "n-binary.toml" in p]
    assert "cannot be read" in binary
    [dup] = [p for p in problems if "z-dup.toml" in p]
    assert "theme 'good' is already defined in m-good.toml" in dup


def test_several_problems_in_one_file_are_one_line(tmp_path):
    write(tmp_path, "t.toml", 'primary = "nope"\nbackgroud = "#000000"\n')
    found, [line] = load_themes([tmp_path])
    assert found == []
    assert line == (f"{tmp_path / 't.toml'}: unknown key 'backgroud' (did you mean "
                    "'background'?); missing name; primary = 'nope' is not a colour; skipped")


def test_missing_directories_are_fine(tmp_path):
    assert load_themes([tmp_path / "nowhere", tmp_path / "also-not"]) == ([], [])


async def test_user_theme_replaces_builtin_and_bad_user_file_does_not_stop_the_app(
        tmp_path, monkeypatch):
    monkeypatch.setattr(themes, "config_path", lambda: tmp_path / "config.toml")
    user = user_theme_dir()
    assert user == tmp_path / "themes"
    write(user, "mine.toml", GOOD.format(name="jarvis-dark"))
    write(user, "oops.toml", 'name = "oops"\nprimary = "not a colour"\n')

    app = Host()
    async with app.run_test(size=(60, 10)) as pilot:
        assert app.problems == [
            f"{user / 'oops.toml'}: primary = 'not a colour' is not a colour; skipped"]
        assert "oops" not in app.available_themes
        assert app.get_theme("jarvis-dark").primary == "#3366cc"
        assert app.get_theme("jarvis-light") is not None
        app.theme = "jarvis-dark"
        await pilot.pause()
        assert app.get_css_variables()["primary"] == "#3366CC"


# -- packaging --------------------------------------------------------------------------------

def test_the_wheel_ships_the_themes_and_finds_them_inside_the_package(tmp_path):
    import hatchling  # noqa: F401  the build below runs without isolation, so it must be here

    out = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    [wheel] = out.glob("jarvis_tui-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert {"jarvis_tui/themes/jarvis-dark.toml", "jarvis_tui/themes/jarvis-light.toml",
                "jarvis_tui/ui/themes.py"} <= names
        zf.extractall(tmp_path / "site")

    # Installed from the wheel there is no repo around: the themes must be found in the package.
    probe = ("import jarvis_tui, jarvis_tui.ui.themes as t; d = t.builtin_theme_dir(); "
             "print(jarvis_tui.__file__); print(d); "
             "print(sorted(x.name for x in t.load_themes([d])[0]))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    module, directory, names_line = ran.stdout.splitlines()
    assert module.startswith(str(tmp_path / "site"))
    assert directory == str(tmp_path / "site" / "jarvis_tui" / "themes")
    assert names_line == "['jarvis-dark', 'jarvis-light']"
