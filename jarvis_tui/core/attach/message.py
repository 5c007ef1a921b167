"""How attachments go into the user's message: each as a block before what the user typed (a
long document first and the question after it is how models read best), fenced so no line of
the file can end the fence early or pass for the user's words. The message holds them as
sent, so export, search, recall and the ledger read them with the rest of the conversation.

A file too large for the window goes as a part (a line range) or as a digest (kind, size,
top-level names: the ledger's line for a paste) the model can read on from, in ranges, with the
built-in read_attachment tool.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from jarvis_tui.core.attach.attachment import IMAGE, LISTING, TEXT, Attachment
from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.attach.refusal import BAD_RANGE, MISSING, AttachRefused
from jarvis_tui.core.details.blocks import digest, language
from jarvis_tui.core.messages import DIGEST, PART, READ_TOOL, WHOLE, Attached, Message
from jarvis_tui.core.pasted import Spans, shifted, tidy
from jarvis_tui.core.window.tokens import TokenCounter

_TICKS = re.compile(r"`{3,}")
_RANGE = re.compile(r"^(?P<path>.+):(?P<first>\d+)-(?P<last>\d*)$")
_NAMED = 20_000  # characters the language is told from: enough, and bounded for a 16 MB log


@dataclass(frozen=True)
class Sending:
    """One attachment as the user chose to send it: whole, a line range (`first`, `last`,
    1-based and inclusive), or its digest."""

    attachment: Attachment
    how: str = WHOLE
    first: int = 1
    last: int = 0  # 0: to the end


def fence_for(text: str) -> str:
    """A fence longer than any run of backticks in `text` (CommonMark's rule)."""
    longest = max((len(m.group()) for m in _TICKS.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def lines_of(text: str, first: int, last: int) -> str:
    """Lines `first`..`last` (1-based, inclusive; 0: to the end) of `text`."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[max(first, 1) - 1:last or len(lines)])


# What a file's name says it holds, before its words are read for it: a README that mentions
# SELECT is still Markdown.
_SUFFIXES = {".py": "python", ".md": "markdown", ".rst": "rst", ".js": "javascript",
             ".mjs": "javascript", ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx",
             ".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml",
             ".toml": "toml", ".ini": "ini", ".cfg": "ini", ".sh": "bash", ".bash": "bash",
             ".zsh": "zsh", ".fish": "fish", ".rs": "rust", ".go": "go", ".java": "java",
             ".kt": "kotlin", ".swift": "swift", ".c": "c", ".h": "c", ".cpp": "cpp",
             ".cc": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
             ".sql": "sql", ".html": "html", ".css": "css", ".xml": "xml", ".lua": "lua",
             ".r": "r", ".diff": "diff", ".patch": "diff", ".log": "log", ".csv": "csv",
             ".dockerfile": "dockerfile", ".tex": "latex", ".txt": "text"}


def kind_of(att: Attachment) -> str:
    """The file's language or kind: from its name's suffix when it names one, else from
    its text (details/blocks.py's reading)."""
    return _SUFFIXES.get(Path(att.path).suffix.lower()) or language(att.text[:_NAMED])


def block(sending: Sending) -> str:
    """The attachment's block in the message."""
    att = sending.attachment
    if att.kind == IMAGE:
        # As sent: a scaled image's pixels and bytes, not the file's.
        return (f"[Attached image {att.shown}: {att.width}x{att.height} pixels, "
                f"{size_text(len(att.data) or att.size)}]")
    if att.kind == LISTING:
        return f"Attached folder {fenced(att.text, 'text')}"
    kind = kind_of(att)
    fence_kind = "" if kind == "text" else kind
    if sending.how == DIGEST:
        return (f"Attached file (digest only; it is too large to send whole): "
                f"{digest(att.text, kind, att.shown)}, {size_text(att.size)}. "
                f"Read the lines you need with the {READ_TOOL} tool (path "
                f"{json.dumps(att.shown, ensure_ascii=False)}, first_line, last_line).")
    if sending.how == PART:
        last = sending.last or att.lines
        part = lines_of(att.text, sending.first, sending.last)
        return (f"Attached file {att.shown}, lines {sending.first}-{last} of {att.lines}:\n"
                f"{fenced(part, fence_kind)}")
    return (f"Attached file {att.shown} ({att.lines:,} lines, {size_text(att.size)}):\n"
            f"{fenced(att.text, fence_kind)}")


def fenced(text: str, kind: str) -> str:
    fence = fence_for(text)
    return f"{fence}{kind}\n{text.rstrip(chr(10))}\n{fence}"


def with_attachments(typed: str, sendings: list[Sending]) -> tuple[str, list[tuple[int, int]]]:
    """The message's text: each attachment's block, then what the user typed; and the
    [start, end) span of each block in it (kept as pasted text: someone else's words, which
    memory never suggests from)."""
    text, spans = "", []
    for sending in sendings:
        piece = block(sending)
        spans.append((len(text), len(text) + len(piece)))
        text += piece + "\n\n"
    return text + typed, spans


def message_with(typed: str, sendings: list[Sending], typed_pasted: Spans = ()) -> Message:
    """The user's message carrying `sendings`: their blocks, then `typed` (of which
    `typed_pasted` was pasted); each block counts as pasted too."""
    text, spans = with_attachments(typed, sendings)
    offset = len(text) - len(typed)
    records = tuple(
        Attached(s.attachment.path, s.attachment.kind, s.attachment.sha256, s.attachment.size,
                 s.attachment.mtime, start, end, s.how, s.first, s.last,
                 s.attachment.media_type, s.attachment.width, s.attachment.height,
                 body_of(s))
        for s, (start, end) in zip(sendings, spans, strict=True))
    pasted = tidy([*spans, *shifted(typed_pasted, offset)], len(text))
    return Message("user", text, pasted=pasted, attachments=records)


def fitted(sending: Sending, tokens: int, budget: int, counter: TokenCounter,
           ranges: bool = True) -> Sending:
    """`sending` as it goes by default, `tokens` being what it adds. A text file sent whole
    that the request's `budget` cannot hold goes in a way that keeps the conversation whole:
    as its digest when the model can read it in ranges (`ranges`: read_attachment is offered
    to it), else as its first lines, within half the budget."""
    att = sending.attachment
    if not (sending.how == WHOLE and att.kind == TEXT and tokens > budget):
        return sending
    if ranges:
        return Sending(att, DIGEST)
    return Sending(att, PART, 1, lines_within(att.text, budget // 2, counter))


def lines_within(text: str, room: int, counter: TokenCounter) -> int:
    """How many of `text`'s first lines fit in `room` tokens (one at least)."""
    used = n = 0
    for n, line in enumerate(text.splitlines(keepends=True), 1):  # noqa: B007
        used += counter.text(line)
        if used > room:
            return max(1, n - 1)
    return max(1, n)


def body_of(sending: Sending) -> bytes | None:
    """What the store keeps beside the block: a digest's or a part's whole text (what
    read_attachment reads; a later edit of the file changes nothing), an image's bytes."""
    att = sending.attachment
    if att.kind == IMAGE:
        return att.data
    return att.text.encode() if sending.how in (DIGEST, PART) else None


def sending_as(att: Attachment, how: str) -> Sending:
    """`att` sent as `how` says: "whole", "digest", or FIRST-LAST for those lines (LAST
    empty: to the end). ValueError for anything else; AttachRefused for lines not in it."""
    if how in (WHOLE, DIGEST):
        if att.kind != TEXT and how == DIGEST:
            raise ValueError("only a text file has a digest")
        return Sending(att, how)
    ranged = _RANGE.match(f"{att.path}:{how}")
    if ranged is None or att.kind != TEXT:
        raise ValueError(f"not a way to send it: {how!r}")
    return _part(att, int(ranged["first"]), int(ranged["last"] or 0))


def _part(att: Attachment, first: int, last: int) -> Sending:
    if first < 1 or (last and last < first) or first > max(att.lines, 1):
        raise AttachRefused(BAD_RANGE, path=att.shown, first=first, last=last,
                            lines=att.lines)
    return Sending(att, PART, first, last)


def sending_of(given: str, cwd: Path) -> Sending:
    """What `--attach`/`/attach` names: a path, or PATH:FIRST-LAST for those lines (LAST
    empty: to the end). A path that exists as written is the whole file, colon or not."""
    try:
        return Sending(read_path(given, cwd))
    except AttachRefused as refused:
        ranged = _RANGE.match(given)
        if refused.reason != MISSING or ranged is None:
            raise
    return _part(read_path(ranged["path"], cwd), int(ranged["first"]), int(ranged["last"] or 0))
