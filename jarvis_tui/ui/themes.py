"""Colour themes read from TOML files: the built-in ones shipped with the package, then the user's.

A bad file never stops the app: it is skipped with one line saying which file and what is wrong,
and every good file next to it still loads. A user theme with a built-in theme's name replaces it,
which is how a user adjusts a shipped theme without copying it under a new name.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.design import ColorSystem
from textual.theme import Theme

from jarvis_tui.core.settings.config import config_path

COLOUR_KEYS = (
    "primary", "secondary", "accent", "warning", "error", "success",
    "foreground", "background", "surface", "panel", "boost",
)
NUMBER_KEYS = ("luminosity_spread", "text_alpha")  # Theme fields a Textual theme may carry
KNOWN_KEYS = ("name", "dark", *COLOUR_KEYS, *NUMBER_KEYS, "variables")
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def _colour_variables() -> frozenset[str]:
    # Variables whose default is a colour must stay colours: a typo there would only surface as
    # a stylesheet error when the theme is switched on, long after loading said it was fine.
    out = set()
    for name, value in ColorSystem(primary="#000000").generate().items():
        try:
            Color.parse(value)
        except ColorParseError:
            continue
        out.add(name)
    return frozenset(out)


_COLOUR_VARIABLES = _colour_variables()


def builtin_theme_dir() -> Path | None:
    """The shipped themes: inside the package in a wheel, the repo's `themes/` when editable."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / "themes", here.parents[2] / "themes"):
        if candidate.is_dir():
            return candidate
    return None


def user_theme_dir() -> Path:
    """Where the user puts their own theme files, next to the config file."""
    return config_path().parent / "themes"


def _is_colour(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        Color.parse(value)
    except ColorParseError:
        return False
    return True


def _check(data: dict[str, Any]) -> list[str]:
    """Everything wrong with one file's table, in reading order; empty when it makes a theme."""
    issues = []
    for key in data:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            issues.append(f"unknown key {key!r}{hint}")
    name = data.get("name")
    if name is None:
        issues.append("missing name")
    elif not isinstance(name, str) or not name.strip():
        issues.append("name must be a non-empty string")
    elif name != name.strip() or "," in name:
        # App.get_theme splits on commas, so such a name could never be selected.
        issues.append(f"name {name!r} must not contain commas or surrounding spaces")
    if "primary" not in data:
        issues.append("missing primary colour")
    for key in COLOUR_KEYS:
        if key in data and not _is_colour(data[key]):
            issues.append(f"{key} = {data[key]!r} is not a colour")
    if "dark" in data and not isinstance(data["dark"], bool):
        issues.append("dark must be true or false")
    for key in NUMBER_KEYS:
        value = data.get(key)
        if key in data and (isinstance(value, bool) or not isinstance(value, int | float)
                            or not 0 <= value <= 1):
            issues.append(f"{key} must be a number between 0 and 1")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        issues.append("variables must be a table")
        variables = {}
    for var, value in variables.items():
        if not _VARIABLE_NAME.match(var):
            issues.append(f"variable name {var!r} is not valid")
        elif not isinstance(value, str) or not value.strip():
            issues.append(f"variable {var} must be a non-empty string")
        elif var in _COLOUR_VARIABLES and not _is_colour(value):
            issues.append(f"variable {var} = {value!r} is not a colour")
    return issues


def _read(path: Path) -> tuple[Theme | None, str | None]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        return None, f"not valid TOML ({e})"
    except (OSError, UnicodeDecodeError) as e:
        return None, f"cannot be read ({e})"
    issues = _check(data)
    if issues:
        return None, "; ".join(issues)
    theme = Theme(**data)
    try:
        theme.to_color_system().generate()  # the same work the app does when switching to it
    except Exception as e:  # a theme file must never take the app down
        return None, f"cannot be turned into colours ({e})"
    return theme, None


def load_themes(dirs: list[Path]) -> tuple[list[Theme], list[str]]:
    """Themes from every *.toml in `dirs`, plus one "<path>: <problem>; skipped" line per bad file.

    Later directories replace earlier themes of the same name; within one directory a repeated
    name is a mistake and the later file is skipped."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in dirs:
        if not directory.is_dir():
            continue
        seen_here: dict[str, Path] = {}
        for path in sorted(directory.glob("*.toml")):
            theme, problem = _read(path)
            if theme is not None and theme.name in seen_here:
                problem = f"theme {theme.name!r} is already defined in {seen_here[theme.name].name}"
            if problem is not None or theme is None:
                problems.append(f"{path}: {problem}; skipped")
                continue
            seen_here[theme.name] = path
            themes[theme.name] = theme
    return list(themes.values()), problems


def register_themes(app: App[Any], dirs: list[Path] | None = None) -> list[str]:
    """Register every good theme with `app`; returns the problem lines for the bad files."""
    if dirs is None:
        dirs = [d for d in (builtin_theme_dir(), user_theme_dir()) if d is not None]
    themes, problems = load_themes(dirs)
    for theme in themes:
        app.register_theme(theme)
    return problems
