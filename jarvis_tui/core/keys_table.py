"""The config file's [keys] table: action id -> key string, as the user wrote it.

Only its shape is checked here (the core never imports Textual): which action ids and key names
exist is the interface's to say, so ui/actions.py checks those before the app starts.
"""

from __future__ import annotations

from pathlib import Path


def _keys(path: Path, raw: object) -> dict[str, str]:
    """The [keys] table as action id -> key string; ConfigError names the first bad line."""
    from jarvis_tui.core.config import ConfigError  # config imports this module

    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key 'keys': expected a table: [keys] with lines like "
                          'summary = "f6"')
    table: dict[str, str] = {}
    for action, key in raw.items():
        if not isinstance(key, str) or not key.strip():
            shown = "a table" if isinstance(key, dict) else repr(key)
            raise ConfigError(f"{path}: [keys] {action} = {shown}: expected a key in quotes, "
                              'like "ctrl+t" (a comma between several: "f6,ctrl+t")')
        table[action] = key.strip()
    return table
