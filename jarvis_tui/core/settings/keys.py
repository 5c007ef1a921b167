"""The config file's [keys] table: action id -> key string, as the user wrote it.

Only its shape is checked here (the core never imports Textual): which action ids and key names
exist is the interface's to say, so ui/actions.py checks those before the app starts. What is
checked here is what no interface can change: the keys a terminal cannot send at all.
"""

from __future__ import annotations

import json
from pathlib import Path

from jarvis_tui.core.settings.errors import ConfigError

# Ctrl with these makes the same control byte as another key (ctrl+m is CR, which Enter
# sends), so the app receives that other key and a binding to this one never runs. Each: the
# byte a terminal sends, and the key the app reads it as, in the config's (Textual's) names.
SENT_AS: dict[str, tuple[str, str]] = {
    "ctrl+m": ("\r", "enter"),
    "ctrl+i": ("\t", "tab"),
    "ctrl+[": ("\x1b", "escape"),
    "ctrl+left_square_bracket": ("\x1b", "escape"),
    "ctrl+3": ("\x1b", "escape"),
    "ctrl+h": ("\x08", "backspace"),
    "ctrl+8": ("\x7f", "backspace"),
    "ctrl+space": ("\x00", "ctrl+@"),  # ctrl+@ itself arrives as such and can be bound
    "ctrl+at": ("\x00", "ctrl+@"),
    "ctrl+2": ("\x00", "ctrl+@"),
}


def unsendable(key: str) -> str | None:
    """The key the app receives when `key` is pressed ("enter" for ctrl+m), or None when a
    terminal can send `key` itself."""
    found = SENT_AS.get(key.strip().lower())
    return found[1] if found else None


def _keys(path: Path, raw: object) -> dict[str, str]:
    """The [keys] table as action id -> key string; ConfigError names the first bad line."""

    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key 'keys': expected a table: [keys] with lines like "
                          'summary = "f9"')
    table: dict[str, str] = {}
    for action, key in raw.items():
        if not isinstance(key, str) or not key.strip():
            shown = "a table" if isinstance(key, dict) else repr(key)
            raise ConfigError(f"{path}: [keys] {action} = {shown}: expected a key in quotes, "
                              'like "ctrl+g" (a comma between several: "f9,ctrl+g")')
        for one in key.split(","):
            sent = unsendable(one)
            if sent:
                raise ConfigError(
                    f"{path}: [keys] {action} = {json.dumps(key.strip(), ensure_ascii=False)}: "
                    f"a terminal sends {one.strip()} as {sent}, so {action} would never run; "
                    'pick another key, like "ctrl+g" or "f9"')
        table[action] = key.strip()
    return table
