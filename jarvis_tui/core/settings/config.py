"""Settings: defaults < config file < environment < command line, each value checked on the way in.

A bad value stops the app with one line naming where it came from (file and key, or environment
variable) rather than running with something silently wrong.
"""

from __future__ import annotations

import difflib
import os
import tomllib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import platformdirs
import tomlkit
from tomlkit.exceptions import ParseError as TOMLEditError

from jarvis_tui.core.budget import Budget
from jarvis_tui.core.costs import Price
from jarvis_tui.core.files import write_whole
from jarvis_tui.core.providers.http import hide_url_secrets, url_secrets
from jarvis_tui.core.providers.registry import PROVIDERS, ProviderSpec, provider_from_keys
from jarvis_tui.core.settings.errors import ConfigError, shown
from jarvis_tui.core.settings.keys import _keys
from jarvis_tui.core.settings.mcp import EXAMPLE as _MCP_EXAMPLE
from jarvis_tui.core.settings.mcp import merged as _merged_servers
from jarvis_tui.core.settings.mcp import problems as _mcp_problems
from jarvis_tui.core.settings.mcp import read_json_file as _mcp_json
from jarvis_tui.core.settings.mcp import read_toml_table as _mcp_table
from jarvis_tui.core.settings.mcp import servers_file_path as _servers_file_path
from jarvis_tui.core.settings.schema import SCHEMA, SETTINGS, Range, with_env

APP_NAME = "jarvis-tui"


def field_names() -> list[str]:
    return [f.name for f in fields(Settings)]


def config_path() -> Path:
    """The config file; honours XDG_CONFIG_HOME on Linux."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


_BOOLS = {"true": True, "yes": True, "on": True, "1": True,
          "false": False, "no": False, "off": False, "0": False}


def _check(key: str, value: object, *, parse: bool = False) -> tuple[Any, str | None]:
    """(the value as the field's type, None) or (None, the problem). `parse` reads strings."""
    setting = SETTINGS[key]
    kind, ok, expected = setting.kind, setting.check, setting.expected.en
    got = f"expected {expected}, got {shown(value, key)}"
    if kind is bool:
        if parse and isinstance(value, str):
            value = _BOOLS.get(value.strip().lower(), value)
        return (value, None) if isinstance(value, bool) else (None, got)
    if parse and isinstance(value, str) and kind is not str:
        try:
            value = int(value.strip()) if kind is int else float(value.strip())
        except ValueError:
            return None, got
    if kind is str:
        if not isinstance(value, str):
            return None, got
        if key in _ONE_WORD:
            value = value.strip()
            problem = _stray_character(key, value)
            if problem:
                return None, problem
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return None, got
    elif kind is int:
        if not isinstance(value, int):
            return None, got
    else:
        try:
            value = float(value)
        except OverflowError:  # an int of 309 digits or more
            return None, got
    if not ok(value):
        return None, f"expected {expected}, got {shown(value, key)}"
    problem = _address_problem(value) if key == "base_url" else None
    return (None, problem) if problem else (value, None)


# A key or an address copied from a file saved on Windows, a web page or a terminal brings the
# line break or spaces around it along; inside it, any such character means a bad copy.
_ONE_WORD = {"api_key": ("the API key", " (the value is not shown); copy the key again"),
             "base_url": ("the base URL", "; write the address on one line, without spaces")}


def _stray_character(key: str, value: str) -> str | None:
    """What is wrong with a key or address holding a character it cannot hold; never the value:
    HTTP headers take ASCII only, and URLs no spaces or control characters."""
    what, fix = _ONE_WORD[key]
    for ch in value:
        if ch in "\r\n":
            found = "a line break inside it"
        elif ch in " \t":
            found = "a space" if ch == " " else "a tab"
        elif ch.isspace():
            found = f"a space-like character (U+{ord(ch):04X})"
        elif unicodedata.category(ch) == "Cc":
            found = f"a control character (U+{ord(ch):04X})"
        elif unicodedata.category(ch).startswith("C"):
            found = f"an invisible character (U+{ord(ch):04X})"
        elif key == "api_key" and not ch.isascii():
            found = f"a character that is not ASCII (U+{ord(ch):04X})"
        else:
            continue
        return f"{what} contains {found}{fix}"
    return None


def _address_problem(url: str) -> str | None:
    """Why the HTTP client could not use this address (a bad international host name, a bad
    port), or None. Checked here so it stops the app with one line, not a traceback later."""
    try:
        httpx.URL(url)
    except httpx.InvalidURL as e:
        return f"the base URL {shown(url, 'base_url')} is not usable: {hide_url_secrets(str(e))}"
    return None


def _unknown(key: str) -> str:
    close = difflib.get_close_matches(key, field_names(), n=3)
    hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else (
        "known keys: " + ", ".join(field_names())
    )
    return f"unknown key '{key}'; {hint}"


# -- prices ------------------------------------------------------------------------------------

PRICE_KEYS = {
    "input": "money per million prompt tokens",
    "cached_input": "money per million prompt tokens read from the cache (default: input)",
    "cache_write": "money per million prompt tokens written to the cache (default: input)",
    "output": "money per million completion tokens",
    "currency": "the currency symbol shown before the amount (default \"$\")",
}
_PRICE_REQUIRED = ("input", "output")
MAX_PRICE = 1_000_000.0  # per million tokens; more is a typo (a price per token times a million)
MAX_CURRENCY = 8


def _prices(path: Path, raw: object) -> dict[str, Price]:
    """The [prices."MODEL"] tables; ConfigError names the file and the key of the first problem."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key 'prices': expected tables like [prices.\"MODEL\"] "
                          f"with input and output, got {shown(raw)}")
    out = {}
    for model, table in raw.items():
        where = f"prices.{_quote_key(model)}"
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: key '{where}': expected a table with input and output "
                              f"(money per million tokens), got {shown(table)}")
        for key, value in table.items():
            if key in PRICE_KEYS:
                continue
            if isinstance(value, dict):
                # [prices.gpt-4.1] is the table "1" inside "gpt-4": the name needs its quotes.
                hint = (f"a model name with a dot in it must be quoted: "
                        f"[prices.{_quote_key(f'{model}.{key}')}]")
            else:
                close = difflib.get_close_matches(key, list(PRICE_KEYS), n=1)
                hint = f"did you mean '{close[0]}'?" if close else \
                    "known keys: " + ", ".join(PRICE_KEYS)
            raise ConfigError(f"{path}: key '{where}.{key}': unknown; {hint}")
        missing = [key for key in _PRICE_REQUIRED if key not in table]
        if missing:
            raise ConfigError(f"{path}: key '{where}': missing {' and '.join(missing)} "
                              f"({PRICE_KEYS[missing[0]]})")
        values: dict[str, Any] = {}
        for key, value in table.items():
            problem = _price_problem(key, value)
            if problem:
                raise ConfigError(f"{path}: key '{where}.{key}': {problem}")
            values[key] = value.strip() if key == "currency" else float(value)
        out[model] = Price(**values)
    return out


def _price_problem(key: str, value: object) -> str | None:
    if key == "currency":
        if not isinstance(value, str) or not value.strip():
            return f"expected a currency symbol such as \"$\" or \"€\", got {shown(value)}"
        text = value.strip()
        if len(text) > MAX_CURRENCY or any(unicodedata.category(ch).startswith(("C", "Z"))
                                           for ch in text):
            return (f"expected a short currency symbol (at most {MAX_CURRENCY} characters, no "
                    f"spaces or control characters), got {shown(value)}")
        return None
    expected = f"expected {PRICE_KEYS[key]}, a number from 0 to {MAX_PRICE:,.0f}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{expected}, got {shown(value)}"
    if not Range(0, MAX_PRICE)(value):  # an int of any size too
        return f"{expected}, got {shown(value)}"
    return None


def _quote_key(name: str) -> str:
    """A model name as the README tells it to be written, in quotes ([prices."gpt-4.1"])."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _prices_problems(prices: dict[str, Price]) -> list[str]:
    out = []
    for model, price in prices.items():
        for key in PRICE_KEYS:
            value = getattr(price, key)
            problem = None if value is None else _price_problem(key, value)
            if problem:
                out.append(f"prices.{_quote_key(model)}.{key}: {problem}")
    return out


_PRICES_EXAMPLE = """\
# Prices, one table per model, in money per million tokens. Nothing is priced unless you say so.
[prices."gpt-4o"]           # the model's exact name, quoted (a dot in it needs the quotes)
input = 2.50                # prompt tokens
cached_input = 1.25         # prompt tokens read from the provider's cache (default: input)
output = 10.00              # completion tokens
# cache_write = 3.75        # prompt tokens written to the cache (Anthropic; default: input)
# currency = "$"            # shown before the amount (default "$"; "€", "¥", "EUR" ...)
"""


_KEYS_EXAMPLE = """\
# Other keys for actions, one line per action you move (ids: see Keys below).
[keys]
# summary = "f9"
"""


# -- table settings ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TableSetting:
    """A setting held in tables of its own rather than as one value: read from the config file
    only, checked by its own rules, and never written back (the file's table stays as the user
    wrote it). Adding one is an entry in TABLE_KEYS."""

    read: Callable[[Path, object], Any]  # the file's value; ConfigError names file and key
    problems: Callable[[Any], list[str]]  # what validate() says of a value
    example: str  # its part of README's config block
    default: Callable[[], Any] = dict


TABLE_KEYS: dict[str, TableSetting] = {
    # model name: its prices (no built-in list)
    "prices": TableSetting(_prices, _prices_problems, _PRICES_EXAMPLE),
    # action id -> key string (ui/actions.py checks the ids and key names before the app starts)
    "keys": TableSetting(_keys, lambda keys: [], _KEYS_EXAMPLE),
    # MCP servers: the [mcp.servers.NAME] tables, then those of mcp_servers_file whose names
    # the tables do not use (a tuple of mcp_config.McpServerConfig, in that order)
    "mcp": TableSetting(_mcp_table, _mcp_problems, _MCP_EXAMPLE, default=tuple),
}


def _settings_class() -> type:
    specs = [(s.name, s.kind, field(default=s.default, repr=not s.secret)) for s in SCHEMA]
    tables = [(name, dict, field(default_factory=t.default)) for name, t in TABLE_KEYS.items()]
    cls = make_dataclass("Settings", specs + tables)
    cls.__module__ = __name__
    cls.__doc__ = ("Every setting of settings_schema.SCHEMA, with its default, and each of "
                   "TABLE_KEYS.")
    return cls


# Built from the schema, so a setting is declared in one place; api_key is never in a repr.
Settings = _settings_class()


def known_secrets(settings: Settings) -> list[str]:
    """What jarvis-tui was given that is a secret whatever its shape: the API key, and what
    each MCP server was given (tokens in its env and headers, its address, its flags), so a
    memory entry or a suggestion never holds one."""
    found = [settings.api_key] if settings.api_key else []
    return found + [secret for server in settings.mcp for secret in server.secrets]


def price_for(settings: Settings, model: str) -> Price | None:
    """The configured price of `model` (its exact name), or None when it has none."""
    return settings.prices.get(model)


# -- loading -----------------------------------------------------------------------------------

def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file ({e.strerror or e})") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: TOML syntax error: {e}") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(f"{path}: arrays or tables nested too deeply to read; no setting "
                          "needs more than one level") from None


PROVIDER_KEYS = ("provider", "base_url", "api_key")


def provider_chosen(path: Path | None = None, *, env: Mapping[str, str] | None = None,
                    overrides: Mapping[str, object] | None = None) -> bool:
    """Whether the user said where to connect anywhere: a provider, an address or a key in the
    config file, the environment or on the command line. A model name alone says nothing."""
    path = config_path() if path is None else Path(path)
    env = os.environ if env is None else env
    if any(key in PROVIDER_KEYS for key in _read_file(path)):
        return True
    named = [var for var, key in with_env().items() if key in PROVIDER_KEYS]
    # A vendor's address variable may be there for the vendor's own tools (OLLAMA_HOST): such a
    # one applies only once its provider is the chosen one, and chooses nothing.
    named += [var for spec in PROVIDERS.values() for var in spec.vendor_env()
              if var != spec.url_env or spec.url_env_chooses]
    if any(env.get(var) for var in named):
        return True
    return any((overrides or {}).get(key) not in (None, "") for key in PROVIDER_KEYS)


def load_settings(
    path: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Settings:
    """Merged settings; raises ConfigError with one line for the first bad value."""
    path = config_path() if path is None else Path(path)
    env = os.environ if env is None else env
    values: dict[str, Any] = {}

    for key, raw in _read_file(path).items():
        if key in TABLE_KEYS:
            values[key] = TABLE_KEYS[key].read(path, raw)
            continue
        if key not in SETTINGS:
            raise ConfigError(f"{path}: {_unknown(key)}")
        value, problem = _check(key, raw)
        if problem:
            raise ConfigError(f"{path}: key '{key}': {problem}")
        values[key] = value

    def from_env(mapping: Mapping[str, str], skip: set[str],
                 spec: ProviderSpec | None = None) -> None:
        for var, key in mapping.items():
            raw = env.get(var, "")
            if raw == "" or key in skip:  # an empty variable counts as unset
                continue
            if spec and var == spec.url_env:
                raw = spec.url_from_env(raw)
            value, problem = _check(key, raw, parse=True)
            if problem:
                raise ConfigError(f"environment variable {var}: {problem}")
            values[key] = value
            skip.add(key)

    cli: dict[str, Any] = {}
    for key, raw in (overrides or {}).items():
        if raw is None:
            continue
        if key not in SETTINGS:
            raise ConfigError(f"command line: {_unknown(key)}")
        value, problem = _check(key, raw, parse=True)
        if problem:
            raise ConfigError(f"command line option --{key.replace('_', '-')}: {problem}")
        cli[key] = value

    set_by_jarvis: set[str] = set()
    from_env(with_env(), set_by_jarvis)
    provider = cli.get("provider", values.get("provider")) or provider_from_keys(env)
    values["provider"] = provider
    spec = PROVIDERS[provider]
    from_env(spec.vendor_env(), set_by_jarvis, spec)
    values.update(cli)
    # Each provider has its own address and a model it surely serves, unless one was given.
    values.setdefault("base_url", spec.base_url)
    values.setdefault("model", spec.model)

    if values.get("mcp_servers_file"):
        # Read here, not when a server starts, so a bad file stops the program with one line
        # like a bad config file does; the user may have pointed to it from the environment.
        origin = ("command line" if "mcp_servers_file" in cli
                  else "environment variable JARVIS_MCP_SERVERS_FILE"
                  if "mcp_servers_file" in set_by_jarvis else "")
        from_json = _mcp_json(_servers_file_path(values["mcp_servers_file"], path, origin))
        values["mcp"] = _merged_servers(values.get("mcp", ()), from_json)
    settings = Settings(**values)
    problems = _cross_problems(settings)
    if problems:
        raise ConfigError(f"{path}: " + "; ".join(problems))
    return settings


def _cross_problems(s: Settings) -> list[str]:
    out = []
    if s.context_window > 0:
        budget = Budget(s.context_window, s.response_reserve, s.system_reserve, s.compact_threshold)
        out.extend(budget.problems())
    if s.compact_low_water >= s.compact_threshold:
        out.append(
            f"compact_low_water {s.compact_low_water:g} must be below compact_threshold "
            f"{s.compact_threshold:g} (a compaction folds turns in until the request is down "
            "to the low-water mark)")
    if s.retry_max_delay < s.retry_base_delay:
        out.append(
            f"retry_max_delay {s.retry_max_delay:g} is smaller than retry_base_delay "
            f"{s.retry_base_delay:g}"
        )
    return out


def validate(settings: Settings) -> list[str]:
    """Every problem with these settings in words for a person; [] when they are fine."""
    out = []
    for key in field_names():
        if key in TABLE_KEYS:
            continue
        value = getattr(settings, key)
        _, problem = _check(key, value)
        if problem:
            out.append(f"{key}: {problem}")
    for key, table in TABLE_KEYS.items():
        out += table.problems(getattr(settings, key))
    # Cross-field checks compare numbers; skip them when a number is already known to be bad.
    return out or _cross_problems(settings)


# -- saving ------------------------------------------------------------------------------------

def save_settings(
    settings: Settings, path: Path | None = None, *, include_api_key: bool = False
) -> Path:
    """Write every setting into the config file, keeping its comments, order and other keys.

    The API key is written only with `include_api_key=True`; otherwise a key already in the file
    is kept as it was, so a key taken from the environment never lands on disk by accident and a
    key the user put in the file is never dropped.
    """
    path = config_path() if path is None else Path(path)
    problems = validate(settings)
    if problems:
        raise ConfigError(f"{path}: not saved: " + "; ".join(problems))
    doc = _edit_file(path)
    for key in field_names():
        if key != "api_key" and key not in TABLE_KEYS:
            _set(doc, key, getattr(settings, key))
    if include_api_key:
        if settings.api_key:
            _set(doc, "api_key", settings.api_key)
        else:
            doc.pop("api_key", None)
    _write_toml(path, doc)
    return path


def update_settings_file(path: Path | None, changes: Mapping[str, object]) -> Path:
    """Change some keys in the config file and keep the rest of it as it was, comments too.

    Only the changed keys are written: values that came from the environment or the command
    line stay out of it, and defaults stay defaults.
    """
    path = config_path() if path is None else Path(path)
    if "api_key" in changes:
        raise ConfigError("the API key is not saved from here; put it in the environment")
    try:
        file_settings = load_settings(path, env={})  # the file's own values, checked
    except ConfigError as e:
        raise ConfigError(f"{e}; not saved, fix or remove the file first") from None
    updated = with_overrides(file_settings, **changes)
    problems = validate(updated)
    if problems:
        raise ConfigError(f"{path}: not saved: " + "; ".join(problems))
    doc = _edit_file(path)
    for key in changes:
        _set(doc, key, getattr(updated, key))
    _write_toml(path, doc)
    return path


def _edit_file(path: Path) -> tomlkit.TOMLDocument:
    """The config file as an editable document that writes back its comments, blank lines and
    key order unchanged; an empty one if there is no file yet."""
    try:
        _read_file(path)  # one line for a file that cannot be read, is not UTF-8 or not TOML
        return tomlkit.parse(path.read_bytes().decode("utf-8"))  # CRLF line ends stay too
    except FileNotFoundError:
        return tomlkit.document()
    except (TOMLEditError, RecursionError) as e:
        raise ConfigError(f"{path}: not saved, its TOML could not be edited ({e}); fix or "
                          "remove the file first") from None
    except ConfigError as e:
        raise ConfigError(f"{e}; not saved, fix or remove the file first") from None


def _set(doc: tomlkit.TOMLDocument, key: str, value: object) -> None:
    # A value the file already holds is left as written (0.70 stays 0.70, not 0.7).
    if key not in doc or doc[key] != value:
        doc[key] = value


def _write_toml(path: Path, doc: tomlkit.TOMLDocument) -> None:
    # Whole or not at all: a crash mid-write never leaves a half-written config behind.
    write_whole(path, tomlkit.dumps(doc))


def with_overrides(settings: Settings, **changes: Any) -> Settings:
    """A copy with some fields changed, each checked like a command-line value."""
    checked = {}
    for key, raw in changes.items():
        if key not in SETTINGS:
            raise ConfigError(_unknown(key))
        value, problem = _check(key, raw, parse=True)
        if problem:
            raise ConfigError(f"key '{key}': {problem}")
        checked[key] = value
    return replace(settings, **checked)


def config_warnings(path: Path | None = None) -> list[str]:
    """Problems worth a warning but not a stop: a config file other users can read that holds
    a secret (an API key, or a password in base_url). A keyless file with the usual 0644 mode is
    not warned about on every run. POSIX modes only; on Windows the bits mean nothing."""
    path = config_path() if path is None else Path(path)
    if os.name == "nt":
        return []
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:  # no file (the usual case) or no way to look: nothing to warn about
        return []
    if not mode & 0o077:
        return []
    try:
        data = _read_file(path)
    except ConfigError:  # not readable as TOML, yet it may hold a key all the same
        data = {"api_key": True}
    url = data.get("base_url")
    in_url = isinstance(url, str) and bool(url_secrets(url))
    if not data.get("api_key") and not in_url:
        return []
    return [f"{path} can be read by other users (mode {mode:04o}) and may hold an API key; "
            f"run: chmod 600 {path}"]
