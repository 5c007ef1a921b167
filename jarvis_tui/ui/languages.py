"""The app's words on Textual's own surfaces: the language the running app shows, and its
screens' key bindings described in it (the footer and help show them)."""

from __future__ import annotations

from dataclasses import replace

from jarvis_tui.texts.i18n import LANGS, Texts
from jarvis_tui.ui.textual_compat import bindings_by_key


def ui_language(app: object) -> str:
    """The language the running app shows its interface in (`en` when it has none set)."""
    lang = getattr(app, "language", "en")
    return lang if lang in LANGS else "en"


def translate_bindings(node: object, lang: str, texts: Texts) -> None:
    """Give a screen's key bindings descriptions in `lang` (the footer and help show them).

    Descriptions are looked up as `key_<action>`; bindings without an entry keep theirs."""
    bindings = bindings_by_key(node)
    if bindings is None:
        return  # a Textual that keeps them elsewhere: the descriptions stay as declared
    for key, items in bindings.items():
        bindings[key] = [
            replace(b, description=texts(lang, f"key_{b.action.rsplit('.', 1)[-1]}"))
            if f"key_{b.action.rsplit('.', 1)[-1]}" in texts.tables["en"] else b
            for b in items
        ]
