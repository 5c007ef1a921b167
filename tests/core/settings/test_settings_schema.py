"""The one settings schema and the one provider registry, and what is built from them: the
Settings record, README's config block, the flags, the settings screen's fields."""

from __future__ import annotations

import re
import tomllib
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from jarvis_tui.cli import OVERRIDE_KEYS, build_parser
from jarvis_tui.core.providers.registry import PROVIDERS
from jarvis_tui.core.settings.config import (
    TABLE_KEYS,
    Settings,
    load_settings,
    validate,
    with_overrides,
)
from jarvis_tui.core.settings.doc import MARKER, config_block, with_block
from jarvis_tui.core.settings.schema import SCHEMA, Range, with_env

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_block() -> str:
    text = README.read_text(encoding="utf-8")
    assert MARKER in text, "README's config block lost its marker line"
    return text.split(MARKER, 1)[1].split("```toml\n", 1)[1].split("\n```", 1)[0] + "\n"


def test_settings_has_every_setting_of_the_schema_with_its_default() -> None:
    got = {f.name: f.default if f.default is not MISSING else f.default_factory()
           for f in fields(Settings)}
    assert got == {**{s.name: s.default for s in SCHEMA},
                   **{name: table.default() for name, table in TABLE_KEYS.items()}}


def test_every_default_passes_its_own_check() -> None:
    assert validate(Settings()) == []
    for setting in SCHEMA:
        assert isinstance(setting.default, setting.kind), setting.name
        assert with_overrides(Settings(), **{setting.name: setting.default}) == Settings()


def test_readme_config_block_is_the_generated_one() -> None:
    assert readme_block() == config_block(), (
        "README's config block disagrees with the schema: "
        "run python -m jarvis_tui.core.settings.doc")


def test_readme_config_block_names_every_setting_with_its_default_and_comment(
        tmp_path: Path) -> None:
    block = readme_block()
    data = tomllib.loads(block)
    assert {k: v for k, v in data.items() if k not in TABLE_KEYS} == {
        s.name: s.default for s in SCHEMA}
    assert set(TABLE_KEYS) <= set(data)  # each table's example is there...
    path = tmp_path / "config.toml"
    path.write_text(block, encoding="utf-8")
    load_settings(path, env={})  # ...and it reads without a complaint
    lines = block.splitlines()
    for setting in SCHEMA:
        assert comment_of(lines, setting.name) == f"{setting.comment} [{setting.env}]", \
            setting.name


def comment_of(lines: list[str], name: str) -> str:
    """The comment beside `name = ...` with its continuation lines, or the one just above."""
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{name} = "))
    beside = re.match(r"^\S+ = .*?\s+# (.*)$", lines[at])
    if not beside:
        return lines[at - 1].removeprefix("# ")
    said = [beside[1]]
    for line in lines[at + 1:]:
        more = re.match(r"^ +# (.*)$", line)
        if not more:
            break
        said.append(more[1])
    return " ".join(said)


def test_the_block_is_rewritten_in_place() -> None:
    text = README.read_text(encoding="utf-8")
    stale = text.replace("compact_threshold = 0.7 ", "compact_threshold = 0.9 ")
    assert stale != text
    assert with_block(stale) == text


def test_readme_names_every_environment_variable() -> None:
    text = README.read_text(encoding="utf-8")
    names = set(with_env())
    names |= {var for spec in PROVIDERS.values() for var in spec.vendor_env()}
    # A setting's own variable in brackets after its comment in the config block.
    assert [var for var in sorted(names) if f"`{var}`" not in text and f"[{var}]" not in text] \
        == []


def test_each_flag_of_the_schema_is_an_option_that_overrides() -> None:
    flagged = [s.name for s in SCHEMA if s.flag]
    assert list(OVERRIDE_KEYS) == flagged
    args = build_parser().parse_args(["--provider", "ollama", "--context-window", "4096",
                                      "--compact-threshold", "0.8"])
    assert (args.provider, args.context_window, args.compact_threshold) == ("ollama", 4096, 0.8)


def test_screen_fields_have_both_languages_and_percent_fields_a_range() -> None:
    for setting in SCHEMA:
        shown = setting.shown
        if shown is None:
            continue
        assert shown.label.zh and shown.hint.zh, setting.name
        if shown.look in ("text", "number"):
            assert setting.expected.zh, f"{setting.name}: the screen says it in Chinese too"
        if shown.look == "percent":
            assert isinstance(setting.check, Range) and "{range}" in shown.hint.en


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_each_provider_entry_makes_its_provider(name: str) -> None:
    spec = PROVIDERS[name]
    provider = spec.make(spec.base_url, "")
    assert type(provider).__name__ == spec.provider_class.rpartition(":")[2]
    assert provider.key_env == spec.key_named  # what a refused key is told to set
    await provider.aclose()
    settings = load_settings(Path("/nonexistent/config.toml"), env={},
                             overrides={"provider": name})
    assert (settings.base_url, settings.model) == (spec.base_url, spec.model)
