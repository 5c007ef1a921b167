"""`visible` (core/textsafe.py): what a model or a tool server wrote, with every character that
shows nothing written out, so a name cannot read reversed or hide a part (issue 25, item 17)."""

from __future__ import annotations

import sys
import unicodedata

from jarvis_tui.core.textsafe import visible


def test_every_character_that_shows_nothing_is_written_out():
    """Against this Python's own Unicode tables: a character a new Unicode version adds to Cf
    fails here until the table in textsafe.py has it."""
    missed = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")
              and visible(chr(c)) != f"<U+{c:04X}>"]
    assert missed == []


def test_the_rest_of_the_text_stays_and_escape_sequences_go():
    assert visible("read\u202etxt.exe \x1b]0;x\x07ok 中文😀 عربي\tend\n") == \
        "read<U+202E>txt.exe ok 中文😀 عربي\tend\n"
    assert visible("plain") == "plain"
