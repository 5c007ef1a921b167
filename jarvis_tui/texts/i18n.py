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
