"""The settings' one error type, and how a bad value is quoted in it.

config.toml, the [keys] table and the MCP server tables (TOML or JSON) all say what was wrong in
the same words: a value is quoted the one way, and an API key or a URL's credentials never are.
"""

from __future__ import annotations

from jarvis_tui.core.providers.http import hide_url_secrets


class ConfigError(Exception):
    """One line: where the bad value came from, which key, and what was expected."""


def shown(value: object, key: str = "") -> str:
    """The value as quoted in a message: never an API key (not even one of the wrong type), and
    a base URL without the credentials it may carry."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if key == "api_key":
        return "a string" if isinstance(value, str) else "a number"
    if key == "base_url" and isinstance(value, str):
        return repr(hide_url_secrets(value))
    if isinstance(value, int) and len(digits := str(abs(value))) > 30:
        return f"a number of {len(digits)} digits"
    return repr(value)
