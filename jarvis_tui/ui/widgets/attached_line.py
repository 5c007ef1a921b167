"""A user's message as the conversation shows it: each attached file's block (a fenced copy of
the whole file, core/attach/message.py) drawn as one line saying what went, then the words the
user typed. A 2,000-line log would otherwise fill screens and push the question out of sight;
the message itself keeps every line, so the model, V, copy and export still have them."""

from __future__ import annotations

import re
from pathlib import Path

from textual.content import Content

from jarvis_tui.core.attach.attachment import IMAGE, LISTING
from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.core.attach.message import DIGEST, PART
from jarvis_tui.core.messages import Attached, Message, fenced_body
from jarvis_tui.core.safety.textsafe import terminal_safe, visible
from jarvis_tui.texts.i18n import Texts

ATTACHED_TEXTS = Texts(
    en={"whole": "{name} · {size} · {lines} line{s}",
        "part": "{name} (lines {first}-{last}) · {size}",
        "digest": "{name} · {size} · digest (the model reads it in ranges)",
        "listing": "{name}/ · listing",
        "image": "{name} · {width}x{height} · {size}"},
    zh={"whole": "{name} · {size} · {lines} 行",
        "part": "{name}（第 {first}-{last} 行）· {size}",
        "digest": "{name} · {size} · 摘要（模型按行段读取）",
        "listing": "{name}/ · 文件夹清单",
        "image": "{name} · {width}x{height} · {size}"},
)

CLIP = "📎 "
# The headers block() writes; the file's name before them is the file system's and may hold
# anything, so they are matched from the end of the first line.
_WHOLE_HEAD = re.compile(r" \(([\d,]+) lines?, [^()]*\):\Z")
_PART_HEAD = re.compile(r", lines (\d+)-(\d+) of (\d+):\Z")


def shown_name(path: str, cwd: Path | None) -> str:
    """The path relative to `cwd` when under it, else its last part: the absolute path is
    long and says little the user does not know."""
    where = Path(path)
    if cwd is not None:
        try:
            relative = where.relative_to(cwd)
        except ValueError:
            relative = None
        if relative is not None and str(relative) != ".":
            return str(relative)
    return where.name or path


def _part_facts(att: Attached, block: str) -> tuple[int, int, int]:
    """First line, last line and bytes of a part as sent: the size of the lines sent, as the
    chip above the prompt said, not the whole file's."""
    head = block.partition("\n")[0]
    ranged = _PART_HEAD.search(head)
    first, last = (int(ranged[1]), int(ranged[2])) if ranged else (att.first, att.last)
    body = fenced_body(block)
    if body is None:
        return first, last, att.size
    # The fence dropped the part's last newline (and any blank lines before it): each is a byte.
    count = last - first + 1 if last else body.count("\n") + 1
    size = len(body.encode("utf-8", "surrogatepass")) + max(1, count - body.count("\n"))
    return first, last or first + body.count("\n"), size


def _whole_lines(block: str) -> int:
    ranged = _WHOLE_HEAD.search(block.partition("\n")[0])
    if ranged:
        return int(ranged[1].replace(",", ""))
    body = fenced_body(block) or ""
    return body.count("\n") + bool(body)


def attached_line(lang: str, att: Attached, block: str, cwd: Path | None) -> str:
    """What one attachment shows as, without the clip: "deploy.py · 77 B · 6 lines"."""
    name = visible(shown_name(att.path, cwd))
    size = size_text(att.size)
    if att.kind == LISTING:
        return ATTACHED_TEXTS(lang, "listing", name=name.rstrip("/") or name)
    if att.kind == IMAGE:
        # The pixels and bytes as sent (a scaled image's), as the chip said.
        return ATTACHED_TEXTS(lang, "image", name=name, width=att.width, height=att.height,
                              size=size_text(len(att.body)) if att.body else size)
    if att.how == DIGEST:
        return ATTACHED_TEXTS(lang, "digest", name=name, size=size)
    if att.how == PART:
        first, last, sent = _part_facts(att, block)
        return ATTACHED_TEXTS(lang, "part", name=name, first=first, last=last,
                              size=size_text(sent))
    lines = _whole_lines(block)
    return ATTACHED_TEXTS(lang, "whole", name=name, size=size, lines=f"{lines:,}",
                          s="" if lines == 1 else "s")


def _spans(message: Message) -> list[tuple[Attached, int, int]]:
    """The attachments whose spans fit the content, in order, none overlapping: a record that
    does not match its text shows that text as it is rather than hide any of it."""
    out, end = [], 0
    for att in sorted(message.attachments, key=lambda a: a.start):
        if end <= att.start < att.end <= len(message.content):
            out.append((att, att.start, att.end))
            end = att.end
    return out


def working_folder() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the folder the app started in was removed
        return None


def user_body(message: Message, lang: str, cwd: Path | None = None) -> Content:
    """The user's message with each attachment as one line. Text never goes through markup:
    a name or a question may hold [brackets]."""
    spans = _spans(message)
    if not spans:
        return Content(terminal_safe(message.content))
    text = message.content
    parts: list[str | tuple[str, str]] = []
    pos = 0
    for i, (att, start, end) in enumerate(spans):
        gap = text[pos:start]
        # block() puts a blank line after each block; the lines read as one list without it.
        parts.append("\n" if i and not gap.strip() else terminal_safe(gap))
        parts += [(CLIP, "$accent"), attached_line(lang, att, text[start:end], cwd)]
        pos = end
    rest = text[pos:]
    if rest.strip():
        parts.append(terminal_safe(rest))
    return Content.assemble(*parts)
