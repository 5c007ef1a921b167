"""Interface strings in English and Chinese. Each module keeps its own table next to the code
that uses it; this file only resolves the language and looks strings up."""

from __future__ import annotations

import locale
import os
from collections.abc import Mapping

LANGS = ("en", "zh")


def resolve_language(setting: str, env: Mapping[str, str] | None = None) -> str:
    """`en` or `zh`. `auto` follows the locale (LC_ALL > LC_MESSAGES > LANG, as POSIX says)."""
    if setting in LANGS:
        return setting
    env = os.environ if env is None else env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        code = locale.getlocale()[0] or ""
    except ValueError:
        code = ""
    return "zh" if code.lower().startswith("zh") else "en"


class Texts:
    """One module's strings: Texts(en={...}, zh={...}); texts(lang, key, **values).

    A key missing in Chinese falls back to English, so a new string never shows as a key name."""

    def __init__(self, *, en: dict[str, str], zh: dict[str, str]):
        missing = set(zh) - set(en)
        if missing:
            raise ValueError(f"Chinese strings without an English original: {sorted(missing)}")
        self.tables = {"en": en, "zh": zh}

    def __call__(self, lang: str, key: str, **values: object) -> str:
        text = self.tables.get(lang, self.tables["en"]).get(key) or self.tables["en"][key]
        return text.format(**values) if values else text


def plural_s(n: int) -> str:
    """The English plural ending for `n` of a thing ("1 message", "2 messages"), for a table's
    "{n} message{s}"; Chinese strings leave {s} out."""
    return "" if n == 1 else "s"


def ui_language(app: object) -> str:
    """The language the running app shows its interface in (`en` when it has none set)."""
    lang = getattr(app, "language", "en")
    return lang if lang in LANGS else "en"


def translate_bindings(node: object, lang: str, texts: Texts) -> None:
    """Give a screen's key bindings descriptions in `lang` (the footer and help show them).

    Descriptions are looked up as `key_<action>`; bindings without an entry keep theirs."""
    from dataclasses import replace

    from jarvis_tui.ui.textual_compat import bindings_by_key

    bindings = bindings_by_key(node)
    if bindings is None:
        return  # a Textual that keeps them elsewhere: the descriptions stay as declared
    for key, items in bindings.items():
        bindings[key] = [
            replace(b, description=texts(lang, f"key_{b.action.rsplit('.', 1)[-1]}"))
            if f"key_{b.action.rsplit('.', 1)[-1]}" in texts.tables["en"] else b
            for b in items
        ]
