"""Every setting of the schema can be given in the environment, by the one rule its declaration
carries (JARVIS_ and the name in capitals), checked as a file's value is, and documented in
README's config block (issue 41, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.core.settings.config import load_settings
from jarvis_tui.core.settings.doc import config_block
from jarvis_tui.core.settings.errors import ConfigError
from jarvis_tui.core.settings.schema import SCHEMA, Choices, Setting

NO_FILE = Path("/nonexistent/config.toml")
# What a user might write for a text setting that is neither a choice nor free text.
TEXTS = ("http://127.0.0.1:9/v1", "sk-test-0123456789", "a-model", "Answer briefly.")


def other_values(s: Setting, tmp_path: Path) -> tuple[object, ...]:
    """Values the setting may take other than its default: what proves the variable was read."""
    if s.name.endswith("_file"):
        servers = tmp_path / "servers.json"
        servers.write_text('{"mcpServers": {}}', encoding="utf-8")
        return (str(servers),)
    if s.kind is bool:
        candidates: tuple[object, ...] = (not s.default,)
    elif isinstance(s.check, Choices):
        candidates = s.check.values
    elif s.kind is str:
        candidates = TEXTS
    elif s.kind is int:
        candidates = (s.default + 1, s.default * 2, 1, 2, 100, 8192)
    else:
        candidates = (round(s.default * 0.9, 4), round(s.default + 0.05, 4), 0.5, 0.1, 2.0)
    return tuple(v for v in candidates if v != s.default and s.check(v))


def as_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("setting", SCHEMA, ids=[s.name for s in SCHEMA])
def test_every_setting_is_read_from_its_variable(setting: Setting, tmp_path: Path) -> None:
    assert setting.env == "JARVIS_" + setting.name.upper()
    loaded = None
    for value in other_values(setting, tmp_path):
        try:  # a value the setting takes alone may not fit with the defaults of the others
            loaded = load_settings(NO_FILE, env={setting.env: as_text(value)})
        except ConfigError:
            continue
        assert getattr(loaded, setting.name) == value
        break
    assert loaded is not None, f"no value other than the default loads for {setting.name}"


def test_a_bad_value_in_a_variable_is_one_line_naming_it() -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(NO_FILE, env={"JARVIS_KEEP_RECENT_TURNS": "three"})
    line = str(err.value)
    assert "\n" not in line and line.startswith("environment variable JARVIS_KEEP_RECENT_TURNS")
    assert "'three'" in line


def test_an_empty_variable_counts_as_unset() -> None:
    default = next(s for s in SCHEMA if s.name == "compact_threshold").default
    assert load_settings(NO_FILE, env={"JARVIS_COMPACT_THRESHOLD": ""}).compact_threshold \
        == default


def test_the_command_line_wins_over_the_variable() -> None:
    loaded = load_settings(NO_FILE, env={"JARVIS_KEEP_RECENT_TURNS": "5"},
                           overrides={"keep_recent_turns": 2})
    assert loaded.keep_recent_turns == 2


def test_readme_names_every_variable() -> None:
    block = config_block()
    missing = [s.env for s in SCHEMA if f"[{s.env}]" not in block]
    assert missing == []
