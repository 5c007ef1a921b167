"""README's config block, written from the schema: every setting with its default, comment and
environment variable, then each table setting's example.
`python -m jarvis_tui.core.settings.doc [README.md]` rewrites the block in place; a test fails
while README and the schema disagree.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import tomlkit

from jarvis_tui.core.settings.config import TABLE_KEYS
from jarvis_tui.core.settings.schema import SCHEMA

MARKER = "<!-- config block: generated "
COMMENT_AT = 28  # the column the comments start at, when the value leaves room
WIDTH = 100
LONG = 40  # a longer `key = value` line has its comment on the line above


def _lines(name: str, value: str, comment: str) -> list[str]:
    assign = f"{name} = {value}"
    if len(assign) >= LONG:
        return [f"# {comment}", assign]
    at = COMMENT_AT if len(assign) < COMMENT_AT else len(assign) + 3
    parts = textwrap.wrap(comment, WIDTH - at - 2)
    return [assign.ljust(at) + "# " + parts[0], *(" " * at + "# " + p for p in parts[1:])]


def config_block() -> str:
    """The TOML between README's ```toml and ```: a file that reads back as the defaults."""
    lines = []
    for setting in SCHEMA:
        lines += _lines(setting.name, tomlkit.item(setting.default).as_string(),
                        f"{setting.comment} [{setting.env}]")
    text = "\n".join(lines) + "\n"
    for table in TABLE_KEYS.values():
        text += "\n" + table.example
    return text


def with_block(readme: str) -> str:
    """README's text with its config block (the ```toml after MARKER) written anew."""
    head, marker, rest = readme.partition(MARKER)
    if not marker:
        raise ValueError(f"README has no line starting {MARKER!r}")
    marker_line, _, rest = rest.partition("\n")
    opening = "```toml\n"
    if not rest.startswith(opening) or "\n```" not in rest:
        raise ValueError("README's marker line must be followed by a ```toml block")
    end = rest.index("\n```", len(opening) - 1)
    return head + marker + marker_line + "\n" + opening + config_block() + rest[end + 1:]


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[3] / "README.md"
    text = path.read_text(encoding="utf-8")
    new = with_block(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"{path}: config block rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
