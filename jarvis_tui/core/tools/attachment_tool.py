"""The built-in tool `read_attachment`: the model reads lines of a file the user attached, for
a file sent as a digest because it is larger than the window (core/attach/message.py).

It reads only what the user attached to this branch of the session, as it was sent (the store
keeps the text; a later edit on disk changes nothing), so it never asks for approval. It is
offered from the first digest on, and then in every request of the branch: the definitions
change once, not from turn to turn, so the provider's prefix cache holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.messages import DIGEST, PART, READ_TOOL, Attached, Message, fenced_body
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.tools.builtin import Builtin
from jarvis_tui.core.window.tokens import TokenCounter

TEXT_KINDS = ("text", "listing")

ATTACHMENT_SPEC = ToolSpec(
    name=READ_TOOL,
    description=(
        "Read lines of a file the user attached to this conversation. A file too large to "
        "send whole is attached as a digest (its kind, size and top-level names); read the "
        "lines you need here, numbered, as many as fit in one result, then ask from the next "
        "line on for more. Only files the user attached can be read."),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string",
                     "description": "the file's path as the attachment names it"},
            "first_line": {"type": "integer", "minimum": 1,
                           "description": "the first line to read, counting from 1 "
                                          "(default 1)"},
            "last_line": {"type": "integer", "minimum": 1,
                          "description": "the last line to read (default: as many as fit)"},
        },
        "required": ["path"],
    },
    tool=READ_TOOL,
)


@dataclass(frozen=True)
class AttachedFile:
    """A text file a message of the branch carries: what it is, and how to get its text."""

    attached: Attached
    text: Callable[[], str]  # a part's: only its lines

    @property
    def first(self) -> int:
        """The file's line number of the text's first line (a part starts where it does)."""
        return self.attached.first if self.attached.how == PART else 1


def files_in(messages: Sequence[Message],
             body: Callable[[int, int], bytes | None]) -> list[AttachedFile]:
    """The text attachments of `messages` (the branch, covered turns too), newest first.
    `body(message_id, position)`: what the store keeps beside a block."""
    found = []
    for msg in reversed(messages):
        for position, att in enumerate(msg.attachments):
            if att.kind in TEXT_KINDS and msg.id is not None:
                found.append(AttachedFile(att, _reader(msg, position, att, body)))
    return found


def has_digest(messages: Sequence[Message]) -> bool:
    return any(a.how == DIGEST for m in messages for a in m.attachments)


def _reader(msg: Message, position: int, att: Attached,
            body: Callable[[int, int], bytes | None]) -> Callable[[], str]:
    def read() -> str:
        kept = body(msg.id or 0, position)
        if kept is not None:
            text = kept.decode("utf-8", "replace")
            # A part: the user chose those lines, and those are what may be read.
            return _lines(text, att.first, att.last) if att.how == PART else text
        text = fenced_body(msg.content[att.start:att.end])
        return text + "\n" if text else ""
    return read


def _lines(text: str, first: int, last: int) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[max(first, 1) - 1:last or len(lines)])


class BadArguments(ValueError):
    pass


class AttachmentReader:
    """Answers read_attachment calls from `files` (asked at each call: the branch as it is),
    within `cap` tokens a result."""

    def __init__(self, files: Callable[[], list[AttachedFile]], counter: TokenCounter,
                 cap: int) -> None:
        self.files = files
        self.counter = counter
        self.cap = cap

    def builtin(self) -> Builtin:
        return Builtin(ATTACHMENT_SPEC, self.run)

    def run(self, call: ToolCall) -> ToolResult:
        files = self.files()
        try:
            path, first, last = _arguments(call)
            found = _find(files, path)
        except BadArguments as err:
            return ToolResult(f"{READ_TOOL} was not run: {err}", True)
        try:
            lines = found.text().splitlines()
        except StoreError as err:  # the session's file is locked, gone or damaged
            return ToolResult(f"{path} could not be read from this session's store: {err}",
                              True)
        start, end = found.first, found.first + len(lines) - 1
        first = max(first, start)
        last = min(last or end, end)
        if first > end:
            where = (f"only lines {start:,}-{end:,} of it were attached" if start > 1
                     else f"{path} has {end:,} lines")
            return ToolResult(f"{where}; line {first:,} is not in it.", True)
        if last < first:
            return ToolResult(f"last_line ({last}) is before first_line ({first}).", True)
        return ToolResult(self._render(path, lines, start, first, last))

    def _render(self, path: str, lines: list[str], start: int, first: int, last: int) -> str:
        """Lines first..last (the file's numbers; `lines` starts at `start`) numbered as
        `cat -n` numbers them, for the model asks for ranges by them; cut where the cap is
        reached, and the result then says where to go on from."""
        total = f"of {start + len(lines) - 1:,}" if start == 1 else \
            f"(attached: lines {start:,}-{start + len(lines) - 1:,})"
        head = f"{path}, lines {{first}}-{{last}} {total}:\n"
        room = self.cap - self.counter.text(head) - 40
        out: list[str] = []
        for n in range(first, last + 1):
            line = f"{n:>6}\t{lines[n - start]}"
            room -= self.counter.text(line) + 1
            if room < 0 and out:
                break
            out.append(line)
        shown_last = first + len(out) - 1
        text = head.format(first=first, last=shown_last) + "\n".join(out)
        if shown_last < last:
            text += (f"\n(That is as much as one result holds. Lines {shown_last + 1:,}-"
                     f"{last:,} are next: ask with first_line {shown_last + 1}.)")
        return text


def _find(files: list[AttachedFile], path: str) -> AttachedFile:
    """The newest attachment named `path`: as the digest names it (relative to the folder it
    was attached from), whole, or by its end."""
    if not files:
        raise BadArguments("no text file is attached in this conversation")
    wanted = path.strip().removeprefix("./")
    for match in (lambda p: p == wanted, lambda p: p.endswith("/" + wanted)):
        for f in files:
            if match(f.attached.path):
                return f
    names = sorted({f.attached.path for f in files})
    raise BadArguments(f"no attached file is named {path!r}; the attached files are: "
                       + ", ".join(names[:20]))


def _arguments(call: ToolCall) -> tuple[str, int, int]:
    try:
        args = call.parsed()
    except ValueError as err:
        raise BadArguments(str(err)) from None
    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        raise BadArguments("'path' must name an attached file")
    bounds = []
    for name, default in (("first_line", 1), ("last_line", 0)):
        value = args.get(name, default)
        if value is None:
            value = default
        if isinstance(value, str) and value.strip().isdigit():  # "12": some models quote it
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) \
                or (value < 1 and value != default):
            raise BadArguments(f"{name!r} must be a line number, counting from 1")
        bounds.append(value)
    return path, bounds[0], bounds[1]
