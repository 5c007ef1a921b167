"""Settings loading, precedence, validation and saving, with real files in tmp_path."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from jarvis_tui.core.costs import Price
from jarvis_tui.core.settings.config import (
    TABLE_KEYS,
    ConfigError,
    Settings,
    config_path,
    config_warnings,
    field_names,
    load_settings,
    price_for,
    provider_chosen,
    save_settings,
    update_settings_file,
    validate,
    with_overrides,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return tmp_path / "config.toml"


def test_defaults_when_no_file(cfg: Path) -> None:
    s = load_settings(cfg, env={})
    assert s == Settings()
    assert (s.provider, s.model, s.compact_threshold, s.keep_recent_turns) == (
        "openai", "gpt-4o-mini", 0.70, 3
    )
    assert validate(s) == []
    assert field_names() == [f.name for f in fields(Settings)]
    assert "api_key" in field_names()


def test_api_key_is_not_in_repr() -> None:
    assert "sk-secret" not in repr(Settings(api_key="sk-secret"))


def test_file_values(cfg: Path) -> None:
    write(cfg, 'model = "qwen2.5:7b"\nprovider = "ollama"\nbase_url = "http://localhost:11434"\n'
               "context_window = 32768\ncompact_threshold = 1\nrequest_timeout = 30\n"
               'system_prompt = "你是贾维斯。"\nlanguage = "zh"\n')
    s = load_settings(cfg, env={})
    assert (s.model, s.provider, s.context_window) == ("qwen2.5:7b", "ollama", 32768)
    assert s.compact_threshold == 1.0 and isinstance(s.compact_threshold, float)
    assert s.request_timeout == 30.0 and isinstance(s.request_timeout, float)
    assert s.system_prompt == "你是贾维斯。" and s.language == "zh"
    assert s.theme == "jarvis-dark"  # untouched default


def test_env_over_file_and_overrides_over_env(cfg: Path) -> None:
    write(cfg, 'model = "from-file"\ncontext_window = 1000000\napi_key = "file-key"\n')
    env = {"JARVIS_MODEL": "from-env", "JARVIS_CONTEXT_WINDOW": " 16384 ", "JARVIS_API_KEY": "k"}
    s = load_settings(cfg, env=env)
    assert (s.model, s.context_window, s.api_key) == ("from-env", 16384, "k")
    s = load_settings(cfg, env=env, overrides={"model": "from-cli", "context_window": None})
    assert (s.model, s.context_window) == ("from-cli", 16384)  # None = flag not given
    s = load_settings(cfg, env=env, overrides={"context_window": "8192"})
    assert s.context_window == 8192


def test_jarvis_env_beats_openai_env(cfg: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    s = load_settings(cfg, env=env)
    assert (s.api_key, s.base_url) == ("sk-openai", "http://127.0.0.1:8080/v1")
    env |= {"JARVIS_API_KEY": "jk", "JARVIS_BASE_URL": "http://10.0.0.2/v1"}
    s = load_settings(cfg, env=env)
    assert (s.api_key, s.base_url) == ("jk", "http://10.0.0.2/v1")


def test_openai_key_is_not_given_to_another_provider(cfg: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
    s = load_settings(cfg, env=env, overrides={"provider": "anthropic"})
    assert s.api_key == "sk-ant"
    s = load_settings(cfg, env={"OPENAI_API_KEY": "sk-openai", "JARVIS_PROVIDER": "ollama"})
    assert s.api_key == ""


def test_empty_env_var_counts_as_unset(cfg: Path) -> None:
    write(cfg, 'model = "from-file"\n')
    assert load_settings(cfg, env={"JARVIS_MODEL": ""}).model == "from-file"


def test_default_path_uses_os_environ(cfg: Path, monkeypatch) -> None:
    monkeypatch.setenv("JARVIS_MODEL", "env-model")
    assert load_settings(cfg).model == "env-model"


def one_line(err: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


def test_wrong_type_names_file_and_key(cfg: Path) -> None:
    write(cfg, 'compact_threshold = "high"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert one_line(err) == (
        f"{cfg}: key 'compact_threshold': expected a number between 0.1 and 1.0 "
        "(70% is written 0.7), got 'high'"
    )


@pytest.mark.parametrize(
    ("toml", "key", "fragment"),
    [
        ("max_retries = true", "max_retries", "got true"),  # bool is not an int
        ("context_window = 8192.5", "context_window", "whole number"),
        ("model = 5", "model", "got 5"),
        ("theme = { name = 'x' }", "theme", "got a table"),
        ("compact_threshold = 0.05", "compact_threshold", "between 0.1 and 1.0"),
        ("compact_threshold = nan", "compact_threshold", "got nan"),
        ("max_retries = 99", "max_retries", "between 0 and 20"),
        ("context_window = -1", "context_window", ">= 0"),
        ("request_timeout = 0", "request_timeout", "> 0"),
        ("provider = 'gemini'", "provider", "one of openai, anthropic, ollama"),
        ("language = 'fr'", "language", "one of auto, en, zh"),
        ("base_url = 'localhost:8080'", "base_url", "http://"),
    ],
)
def test_bad_values(cfg: Path, toml: str, key: str, fragment: str) -> None:
    write(cfg, toml + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    text = one_line(err)
    assert text.startswith(f"{cfg}: key '{key}': expected ")
    assert fragment in text


def test_unknown_key_suggests_close_matches(cfg: Path) -> None:
    write(cfg, 'modle = "x"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert one_line(err) == f"{cfg}: unknown key 'modle'; did you mean 'model'?"
    write(cfg, 'zzz = 1\n')
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert "unknown key 'zzz'; known keys: provider, base_url" in one_line(err)


def test_syntax_error_has_line_and_column(cfg: Path) -> None:
    write(cfg, 'model = "ok"\ntheme = \n')
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    text = one_line(err)
    assert text.startswith(f"{cfg}: TOML syntax error: ")
    assert "line 2" in text and "column" in text


def test_not_utf8_file(cfg: Path) -> None:
    cfg.write_bytes(b'model = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(cfg, env={})


def test_bad_env_number_names_the_variable(cfg: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={"JARVIS_CONTEXT_WINDOW": "32k"})
    assert one_line(err) == (
        "environment variable JARVIS_CONTEXT_WINDOW: expected a whole number >= 0 (0 = auto), "
        "got '32k'"
    )
    with pytest.raises(ConfigError, match="JARVIS_PROVIDER"):
        load_settings(cfg, env={"JARVIS_PROVIDER": "nope"})


def test_bad_override_names_the_option(cfg: Path) -> None:
    with pytest.raises(ConfigError, match="--context-window"):
        load_settings(cfg, env={}, overrides={"context_window": "lots"})
    with pytest.raises(ConfigError, match="unknown key 'modl'; did you mean 'model'"):
        load_settings(cfg, env={}, overrides={"modl": "x"})


def test_budget_that_leaves_no_room_is_refused(cfg: Path) -> None:
    write(cfg, "context_window = 1024\nresponse_reserve = 1024\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert one_line(err).startswith(f"{cfg}: context window 1024 minus response reserve 1024")


def test_validate_reports_problems() -> None:
    assert validate(Settings(context_window=0, response_reserve=100_000)) == []  # auto window
    bad = Settings(compact_threshold=3.0, max_retries=-1, model="")
    problems = validate(bad)
    assert len(problems) == 3
    assert any(p.startswith("compact_threshold:") for p in problems)
    assert validate(Settings(context_window=600, response_reserve=300, system_reserve=200))
    assert validate(Settings(retry_base_delay=10, retry_max_delay=5)) == [
        "retry_max_delay 5 is smaller than retry_base_delay 10"
    ]


def test_save_round_trips_atomically_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "config.toml"
    s = Settings(model="gpt-4.1", context_window=65536, compact_threshold=0.5,
                 system_prompt="你是贾维斯。\n\"引号\"", language="zh", api_key="sk-env")
    assert save_settings(s, path) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # no temp file left
    data = tomllib.loads(path.read_text("utf-8"))
    assert "api_key" not in data  # a key from the environment never lands on disk
    # Price tables are the user's to write: saving never writes them (see the prices tests).
    assert set(data) == set(field_names()) - {"api_key", *TABLE_KEYS}
    loaded = load_settings(path, env={})
    assert loaded == Settings(**{**s.__dict__, "api_key": ""})


def test_save_replaces_existing_file_and_keeps_its_key(cfg: Path) -> None:
    write(cfg, 'api_key = "sk-in-file"\nmodel = "old"\n')
    os.chmod(cfg, 0o644)
    inode = cfg.stat().st_ino
    save_settings(Settings(model="new", api_key="sk-from-env"), cfg)
    assert cfg.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o644  # the user's own choice of mode stays
    loaded = load_settings(cfg, env={})
    assert (loaded.model, loaded.api_key) == ("new", "sk-in-file")


def test_save_with_api_key(cfg: Path) -> None:
    save_settings(Settings(api_key="sk-typed"), cfg, include_api_key=True)
    assert load_settings(cfg, env={}).api_key == "sk-typed"


def test_save_refuses_invalid_settings_and_broken_file(cfg: Path) -> None:
    with pytest.raises(ConfigError, match="compact_threshold"):
        save_settings(Settings(compact_threshold=7.0), cfg)
    assert not cfg.exists()
    write(cfg, "model = \n")
    with pytest.raises(ConfigError, match="not saved"):
        save_settings(Settings(), cfg)
    assert cfg.read_text() == "model = \n"


def test_failed_write_leaves_old_file(cfg: Path, monkeypatch) -> None:
    save_settings(Settings(model="first"), cfg)
    before = cfg.read_bytes()

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)  # the disk refuses the new file's bytes
    with pytest.raises(OSError, match="disk full"):
        save_settings(Settings(model="second"), cfg)
    assert cfg.read_bytes() == before
    assert [p.name for p in cfg.parent.iterdir()] == ["config.toml"]


def test_with_overrides_checks_values() -> None:
    s = with_overrides(Settings(), model="m2", compact_threshold="0.8")
    assert (s.model, s.compact_threshold) == ("m2", 0.8)
    with pytest.raises(ConfigError, match="compact_threshold"):
        with_overrides(Settings(), compact_threshold=2)


def test_config_path_honours_xdg_config_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = config_path()
    assert path == tmp_path / "xdg" / "jarvis-tui" / "config.toml"
    write_dir = path.parent
    write_dir.mkdir(parents=True)
    write(path, 'theme = "jarvis-light"\n')
    assert load_settings(env={}).theme == "jarvis-light"
    save_settings(Settings(theme="solar"))
    assert load_settings(env={}).theme == "solar"


def test_update_file_changes_only_the_given_keys(cfg: Path) -> None:
    cfg.write_text('model = "qwen"\napi_key = "sk-file"\n# a comment the user wrote\n')
    cfg.chmod(0o600)
    update_settings_file(cfg, {"response_reserve": 2048, "theme": "jarvis-light"})
    data = tomllib.loads(cfg.read_text())
    # env/CLI values and defaults are not pinned to disk; the user's key stays.
    assert data == {"model": "qwen", "api_key": "sk-file", "response_reserve": 2048,
                    "theme": "jarvis-light"}
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600


def test_update_file_refuses_bad_values_and_keys(cfg: Path) -> None:
    cfg.write_text('context_window = 4096\n')
    with pytest.raises(ConfigError, match="leaves"):
        update_settings_file(cfg, {"response_reserve": 4000})
    with pytest.raises(ConfigError, match="API key"):
        update_settings_file(cfg, {"api_key": "sk-x"})
    assert cfg.read_text() == 'context_window = 4096\n'


@pytest.mark.parametrize(("env", "flags", "expected"), [
    ({"ANTHROPIC_API_KEY": "k"}, {}, ("anthropic", "https://api.anthropic.com", "claude")),
    ({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}, {},
     ("openai", "https://api.openai.com/v1", "gpt-4o-mini")),
    ({}, {"provider": "ollama"}, ("ollama", "http://127.0.0.1:11434", "llama3.2")),
    ({"OLLAMA_HOST": "gpu-box:11434"}, {"provider": "ollama"},
     ("ollama", "http://gpu-box:11434", "llama3.2")),
    ({"JARVIS_PROVIDER": "anthropic"}, {"base_url": "http://proxy:9/"},
     ("anthropic", "http://proxy:9/", "claude")),
])
def test_provider_from_keys_flags_and_its_own_defaults(cfg: Path, env, flags, expected) -> None:
    s = load_settings(cfg, env=env, overrides=flags)
    assert (s.provider, s.base_url) == expected[:2] and s.model.startswith(expected[2])
    # A key is only ever taken for its own provider.
    assert s.api_key == ({"anthropic": env.get("ANTHROPIC_API_KEY", ""),
                          "openai": env.get("OPENAI_API_KEY", "")}.get(s.provider, ""))


@pytest.mark.parametrize(("file_text", "env", "overrides", "chosen"), [
    ("", {}, {}, False),  # a fresh machine: nothing anywhere
    ('model = "llama3.2"\ntheme = "jarvis-light"\n', {"JARVIS_MODEL": "m"}, {"model": "m"},
     False),  # a model name alone says nothing about where
    ('base_url = "http://127.0.0.1:8080/v1"\n', {}, {}, True),
    ('provider = "ollama"\n', {}, {}, True),
    ("", {"OPENAI_API_KEY": "sk-x"}, {}, True),
    ("", {"ANTHROPIC_API_KEY": "sk-ant"}, {}, True),
    ("", {"JARVIS_PROVIDER": "ollama"}, {}, True),
    ("", {"OPENAI_BASE_URL": "http://127.0.0.1:1234/v1"}, {}, True),
    ("", {"OLLAMA_HOST": "127.0.0.1:11434"}, {}, False),  # only used once Ollama is chosen
    ("", {"OPENAI_API_KEY": ""}, {}, False),  # empty counts as unset
    ("", {}, {"base_url": "http://127.0.0.1:9/v1"}, True),
    ("", {}, {"provider": "anthropic", "base_url": None}, True),
])
def test_provider_chosen(cfg: Path, file_text: str, env: dict, overrides: dict,
                         chosen: bool) -> None:
    cfg.write_text(file_text, encoding="utf-8")
    assert provider_chosen(cfg, env=env, overrides=overrides) is chosen


# -- keys and addresses: trimmed, refused when broken inside, never quoted ---------------------

KEY = "sk-abc-0123456789"


@pytest.mark.parametrize("source", ["file", "JARVIS_API_KEY", "OPENAI_API_KEY",
                                    "ANTHROPIC_API_KEY", "flag", "with_overrides"])
@pytest.mark.parametrize("padding", ["\r\n", "\n", " ", "\t\r\n"])
def test_a_key_with_a_line_end_or_spaces_around_it_is_trimmed(cfg: Path, source: str,
                                                             padding: str) -> None:
    raw = padding + KEY + padding if padding == " " else KEY + padding
    provider = {"provider": "anthropic"} if source == "ANTHROPIC_API_KEY" else {}
    if source == "file":
        cfg.write_text(f"api_key = {toml_string(raw)}\n", encoding="utf-8")
    env = {source: raw} if source.endswith("_API_KEY") else {}
    overrides = {**provider, **({"api_key": raw} if source == "flag" else {})}
    s = load_settings(cfg, env=env, overrides=overrides)
    if source == "with_overrides":
        s = with_overrides(s, api_key=raw)
    assert s.api_key == KEY


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string too


@pytest.mark.parametrize(("inside", "said"), [
    ("\n", "a line break inside it"),
    ("\r\n", "a line break inside it"),
    (" ", "a space"),
    ("\t", "a tab"),
    ("\x07", "a control character (U+0007)"),
    ("\u200b", "an invisible character (U+200B)"),
    ("\u00a0", "a space-like character (U+00A0)"),
    ("\u201c", "a character that is not ASCII (U+201C)"),
    ("é", "a character that is not ASCII (U+00E9)"),
])
def test_a_key_broken_inside_is_one_line_that_never_shows_it(cfg: Path, inside: str,
                                                             said: str) -> None:
    key = KEY[:8] + inside + KEY[8:]
    expected = f"the API key contains {said} (the value is not shown); copy the key again"
    cases = [
        ({"OPENAI_API_KEY": key}, {}, f"environment variable OPENAI_API_KEY: {expected}"),
        ({"JARVIS_API_KEY": key}, {}, f"environment variable JARVIS_API_KEY: {expected}"),
        ({}, {"api_key": key}, f"command line option --api-key: {expected}"),
    ]
    for env, overrides, line in cases:
        with pytest.raises(ConfigError) as err:
            load_settings(cfg, env=env, overrides=overrides)
        assert one_line(err) == line
    cfg.write_text(f"api_key = {toml_string(key)}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert one_line(err) == f"{cfg}: key 'api_key': {expected}"
    with pytest.raises(ConfigError) as err:
        with_overrides(Settings(), api_key=key)
    assert one_line(err) == f"key 'api_key': {expected}"
    assert validate(Settings(api_key=key)) == [f"api_key: {expected}"]


@pytest.mark.parametrize("toml", ["api_key = 123456789012", "api_key = 1.5e300",
                                  "api_key = ['sk-abc-0123456789']"])
def test_a_key_of_the_wrong_type_is_not_quoted(cfg: Path, toml: str) -> None:
    write(cfg, toml + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    text = one_line(err)
    assert text.startswith(f"{cfg}: key 'api_key': expected a string, got a")
    assert "123456789012" not in text and "1.5e" not in text and "0123456789" not in text


@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:8080/v1\nhttp://other", "a line break inside it"),
    ("http://127.0.0.1:8080/my models", "a space"),
    ("http://127.0.0.1:8080/v1\x00", "a control character (U+0000)"),
    ("https://ex\u200bample.com/v1", "an invisible character (U+200B)"),
])
def test_a_base_url_broken_inside_is_one_line(cfg: Path, url: str, said: str) -> None:
    expected = f"the base URL contains {said}; write the address on one line, without spaces"
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={"OPENAI_BASE_URL": url})
    assert one_line(err) == f"environment variable OPENAI_BASE_URL: {expected}"
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={}, overrides={"base_url": url})
    assert one_line(err) == f"command line option --base-url: {expected}"


def test_a_base_url_is_trimmed_and_may_have_an_international_host(cfg: Path) -> None:
    write(cfg, 'base_url = "  https://例子.测试/v1\\r\\n"\n')
    assert load_settings(cfg, env={}).base_url == "https://例子.测试/v1"
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={}, overrides={"base_url": "https://☃.com/v1"})
    assert one_line(err) == ("command line option --base-url: the base URL 'https://☃.com/v1' "
                             "is not usable: Invalid IDNA hostname: '☃.com'")


@pytest.mark.parametrize("url", ["localhost:8080/v1?key=sk-abc-0123456789",
                                 "user:sk-abc-0123456789@localhost:8080/v1",
                                 "http://u:sk-abc-0123456789@h:port/v1"])
def test_a_bad_base_url_is_quoted_without_its_credentials(cfg: Path, url: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={}, overrides={"base_url": url})
    text = one_line(err)
    assert text.startswith("command line option --base-url: ") and KEY not in text


@pytest.mark.parametrize("toml", [
    "theme = " + "[" * 100_000 + "]" * 100_000,
    "theme = " + "{ a = " * 5_000 + "1" + " }" * 5_000,
])
def test_deeply_nested_toml_is_one_line(cfg: Path, toml: str) -> None:
    write(cfg, toml + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, env={})
    assert one_line(err).startswith(f"{cfg}: ")
    with pytest.raises(ConfigError, match="not saved"):
        update_settings_file(cfg, {"theme": "x"})


# -- saving edits the file: comments, order, line ends, symlinks and modes stay ---------------

COMMENTED = """# My jarvis settings. Keep the key out of git!
model = "qwen2.5:7b"   # the one that fits my GPU

# budget
compact_threshold = 0.70
theme = "jarvis-dark"  # dark at night
api_key = "sk-in-file"
"""


def test_update_keeps_comments_blank_lines_and_order(cfg: Path) -> None:
    write(cfg, COMMENTED)
    update_settings_file(cfg, {"theme": "jarvis-light", "response_reserve": 2048,
                               "compact_threshold": 0.7})
    assert cfg.read_text(encoding="utf-8") == COMMENTED.replace(
        '"jarvis-dark"  # dark', '"jarvis-light"  # dark') + "response_reserve = 2048\n"


def test_save_settings_keeps_comments_and_appends_the_rest(cfg: Path) -> None:
    write(cfg, COMMENTED)
    save_settings(with_overrides(load_settings(cfg, env={}), model="llama3"), cfg)
    text = cfg.read_text(encoding="utf-8")
    assert text.startswith(COMMENTED.replace('"qwen2.5:7b"   #', '"llama3"   #'))
    assert load_settings(cfg, env={}) == with_overrides(load_settings(cfg, env={}),
                                                          model="llama3")
    assert set(tomllib.loads(text)) == set(field_names()) - set(TABLE_KEYS)


def test_update_keeps_windows_line_ends(cfg: Path) -> None:
    cfg.write_bytes(b'model = "m"\r\n# note\r\ntheme = "a"\r\n')
    update_settings_file(cfg, {"theme": "b"})
    assert cfg.read_bytes() == b'model = "m"\r\n# note\r\ntheme = "b"\r\n'


def test_update_writes_through_a_symlink_and_keeps_the_mode(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "jarvis.toml"
    dotfiles.parent.mkdir()
    write(dotfiles, COMMENTED)
    dotfiles.chmod(0o640)
    link = tmp_path / "config" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(Path("..") / "dotfiles" / "jarvis.toml")
    update_settings_file(link, {"theme": "jarvis-light"})
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "dotfiles",
                                                                   "jarvis.toml")
    assert load_settings(link, env={}).theme == "jarvis-light"
    assert "# dark at night" in dotfiles.read_text(encoding="utf-8")
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o640
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["jarvis.toml"]  # no temp left
    assert sorted(p.name for p in link.parent.iterdir()) == ["config.toml"]


def test_a_new_config_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    update_settings_file(path, {"theme": "jarvis-light"})
    assert path.read_text(encoding="utf-8") == 'theme = "jarvis-light"\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_key_in_the_base_url_of_a_readable_file_is_warned_about(cfg: Path) -> None:
    write(cfg, 'base_url = "https://gateway.example/v1?key=sk-abc-0123456789"\n')
    cfg.chmod(0o644)
    assert config_warnings(cfg) == [f"{cfg} can be read by other users (mode 0644) and may hold "
                                    f"an API key; run: chmod 600 {cfg}"]


# -- prices ---------------------------------------------------------------------------------------

PRICED = """model = "gpt-4o"  # the chat model
[prices."gpt-4o"]
input = 2.5
cached_input = 1.25
output = 10

[prices."claude-3.5-haiku"]  # a dot in the name: quoted
input = 0.8
cached_input = 0.08
cache_write = 1
output = 4
currency = "€"
"""


def test_prices_are_read_per_model_with_their_defaults(cfg: Path) -> None:
    write(cfg, PRICED + '[prices."local"]\ninput = 0\noutput = 0\n')
    s = load_settings(cfg, env={})
    assert s.prices["gpt-4o"] == Price(input=2.5, output=10.0, cached_input=1.25)
    assert s.prices["claude-3.5-haiku"] == Price(0.8, 4.0, 0.08, 1.0, "€")
    free = s.prices["local"]
    assert (free.cached_input, free.cache_write, free.currency) == (None, None, "$")
    assert price_for(s, "gpt-4o") is s.prices["gpt-4o"]
    assert price_for(s, "gpt-4o-mini") is None  # exact names only: no guessing by prefix
    assert validate(s) == []


def test_no_prices_built_in() -> None:
    assert Settings().prices == {}
    assert load_settings(Path("/nonexistent/config.toml"), env={}).prices == {}


@pytest.mark.parametrize(("toml", "key", "fragment"), [
    ('[prices."m"]\ninput = -1\noutput = 1\n', "prices.\"m\".input", "got -1"),
    ('[prices."m"]\ninput = "cheap"\noutput = 1\n', "prices.\"m\".input", "got 'cheap'"),
    ('[prices."m"]\ninput = true\noutput = 1\n', "prices.\"m\".input", "got true"),
    ('[prices."m"]\ninput = nan\noutput = 1\n', "prices.\"m\".input", "got nan"),
    ('[prices."m"]\ninput = 1\noutput = inf\n', "prices.\"m\".output", "got inf"),
    ('[prices."m"]\ninput = 1\noutput = 1\ncached_input = -0.5\n', "prices.\"m\".cached_input",
     "got -0.5"),
    ('[prices."m"]\ninput = 1\noutput = 1\ncache_write = [1]\n', "prices.\"m\".cache_write",
     "got a list"),
    ('[prices."m"]\ninput = 1\noutput = 1\ncurrency = ""\n', "prices.\"m\".currency",
     "currency symbol"),
    ('[prices."m"]\ninput = 1\noutput = 1\ncurrency = "US dollars"\n',
     "prices.\"m\".currency", "short currency symbol"),
    ('[prices."m"]\ninput = 1\noutput = 1\ncurrency = 5\n', "prices.\"m\".currency", "got 5"),
    ('[prices."m"]\ninpt = 1\ninput = 1\noutput = 1\n', "prices.\"m\".inpt",
     "did you mean 'input'?"),
    ('[prices."m"]\noutput = 1\n', "prices.\"m\"", "missing input"),
    ('[prices."m"]\n', "prices.\"m\"", "missing input and output"),
    ('prices = 3\n', "prices", "expected tables like [prices.\"MODEL\"]"),
    ('[prices]\nm = 3\n', "prices.\"m\"", "expected a table with input and output"),
    # Unquoted, the dot makes a table "1" inside "gpt-4": the error says how to write it.
    ('[prices.gpt-4.1]\ninput = 2\noutput = 8\n', "prices.\"gpt-4\".1",
     "must be quoted: [prices.\"gpt-4.1\"]"),
])
def test_bad_prices_are_one_line_naming_file_and_key(cfg: Path, toml: str, key: str,
                                                     fragment: str) -> None:
    write(cfg, toml)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    text = str(info.value)
    assert text.startswith(f"{cfg}: key '{key}'"), text
    assert fragment in text and "\n" not in text


def test_saving_keeps_the_price_tables_as_written(cfg: Path) -> None:
    write(cfg, PRICED)
    loaded = load_settings(cfg, env={})
    save_settings(with_overrides(loaded, theme="jarvis-light"), cfg)
    update_settings_file(cfg, {"response_reserve": 2048})
    text = cfg.read_text(encoding="utf-8")
    assert text.startswith(PRICED.split("[prices")[0])
    assert '[prices."claude-3.5-haiku"]  # a dot in the name: quoted' in text
    assert load_settings(cfg, env={}).prices == loaded.prices


def test_validate_names_a_bad_price() -> None:
    bad = Settings(prices={"m": Price(input=-1.0, output=1.0)})
    assert validate(bad) == [
        'prices."m".input: expected money per million prompt tokens, a number from 0 to '
        "1,000,000, got -1.0"]
