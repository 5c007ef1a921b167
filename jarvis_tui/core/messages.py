"""The message record and how messages group into turns and atomic units.

A *turn* starts at a user message and runs until the next user message. Inside a turn, the
*groups* are the units the window keeps or drops whole: the user message together with the reply
to it, and an assistant message that calls tools together with all of its tool results. Sending
half a group would give the provider an orphan tool result (rejected with a 400) or a question
whose answer was cut off.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jarvis_tui.core.calls.tool_args import arguments_or_none

ROLES = ("system", "user", "assistant", "tool")

COMPLETE = "complete"
PARTIAL = "partial"
FAILED = "failed"
ROOT = 0  # parent_id of a message with none before it

# How an attachment was sent (Attached.how): whole, a line range, or its digest, which names
# the built-in tool the model reads the rest with (core/attach writes it, core/tools runs it).
WHOLE = "whole"
PART = "part"
DIGEST = "digest"
READ_TOOL = "read_attachment"


@dataclass(frozen=True)
class Attached:
    """A file the message carries, as it was when it was sent (core/attach): its block is
    content[start:end]. A later edit of the file on disk changes none of this."""

    path: str  # absolute, when it was attached
    kind: str  # text, listing or image
    sha256: str  # of the bytes read
    size: int  # bytes
    mtime: float
    start: int  # the block's [start, end) in the message's content
    end: int
    how: str = "whole"  # whole, part or digest
    first: int = 1  # the lines sent, for a part (last 0: to the end)
    last: int = 0
    media_type: str = "text/plain"
    width: int = 0  # an image's pixels
    height: int = 0
    # What the block does not hold (a digest's or a part's whole text, an image's bytes), on
    # its way to the store; never read back with the message (store.attachment_body).
    body: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(eq=False)
class Message:
    role: str
    content: str
    id: int | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    status: str = COMPLETE
    pinned: bool = False
    summary_id: int | None = None  # the summary that first folded this message in
    # Taken out of every request by the user (/forget), kept in the store and exports.
    excluded: bool = False
    # The message this one follows: a session is a tree, one path of which is shown and sent
    # (see core/tree.py). None: not decided yet (the store puts it after the current
    # branch's newest message); ROOT: the first message of a branch starting at the top.
    parent_id: int | None = None
    created_at: float = field(default_factory=time.time)
    # [start, end) spans of `content` the user pasted rather than typed (core/pasted.py): never
    # read for memory suggestions.
    pasted: tuple[tuple[int, int], ...] = ()
    # The files it carries, each with its block's span in `content` (which also counts as
    # pasted: someone else's words).
    attachments: tuple[Attached, ...] = ()
    # Raw token estimate cached with the content it was computed for (see tokens.TokenCounter).
    _tokens: tuple[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def covered(self) -> bool:
        return self.summary_id is not None

    def images(self) -> list[dict[str, str]]:
        """The images the message carries, as the wire takes them (to_wire's "images")."""
        return images_of(self.attachments) if self.attachments else []

    def to_wire(self, content: str | None = None) -> dict[str, Any]:
        """The OpenAI chat-completions shape of this message; `content` overrides the text. A
    message with images has them under "images" (images_of), which each provider puts on its
    own wire: content parts, image blocks, Ollama's own "images"."""
        text = self.content if content is None else content
        out: dict[str, Any] = {"role": self.role, "content": text}
        if images := self.images():
            out["images"] = images
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name and self.role != "tool":
            out["name"] = self.name
        return out


def images_of(attachments: tuple[Attached, ...]) -> list[dict[str, str]]:
    """The images among `attachments` as every provider's wire takes them (each translates
    this neutral shape): media type and base64 data, in order."""
    return [{"media_type": a.media_type, "data": base64.b64encode(a.body).decode("ascii")}
            for a in attachments if a.kind == "image" and a.body]


def fenced_body(block: str) -> str | None:
    """The file's text inside an attachment's block as core/attach/message.py writes it (a
    header line, a fence of three or more backticks, the text, the same fence), without its
    last newline; None when the block is not fenced so (a digest, an image's line)."""
    _, _, rest = block.partition("\n")
    fence, _, body = rest.partition("\n")
    ticks = fence[:len(fence) - len(fence.lstrip("`"))]
    if len(ticks) < 3 or not body.endswith("\n" + ticks):
        return None
    return body[:-len(ticks) - 1]


def describe_calls(tool_calls: list[dict[str, Any]] | None) -> str:
    """The calls as a reader sees them, one a line: `called git_log {"max_count": 5}`; for the
    summariser and the details ledger, which should know what tools touched."""
    lines = []
    for call in tool_calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments", "")
        args = args if isinstance(args, str) else str(args)
        lines.append(f"called {fn.get('name', '?')} {' '.join(args.split())}".rstrip())
    return "\n".join(lines)


def call_commands(tool_calls: list[dict[str, Any]] | None, longest: int = 200) -> list[str]:
    """Each call as a command line, `git_log repo_path=/tmp/r max_count=30`: the shape the
    details ledger keeps whole (the call is the detail, a path in it one more)."""
    lines = []
    for call in tool_calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments", "")
        parsed = arguments_or_none(args)
        words = [str(fn.get("name", "?"))]
        if isinstance(parsed, dict):
            for key, value in parsed.items():
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                words.append(f"{key}={text}")
        line = " ".join(" ".join(words).split())
        lines.append(line if len(line) <= longest else line[:longest - 1] + "…")
    return lines


def split_turns(messages: list[Message]) -> list[list[Message]]:
    """Messages split into turns; anything before the first user message is a turn of its own."""
    turns: list[list[Message]] = []
    for msg in messages:
        if msg.role == "user" or not turns:
            turns.append([msg])
        else:
            turns[-1].append(msg)
    return turns


def turn_span(messages: list[Message], index: int) -> tuple[int, int]:
    """(start, stop) of the turn holding `messages[index]`: back to its user message, on to
    the next one. Walks only that turn, so a search hit's context costs what the turn holds."""
    start = index
    while start > 0 and messages[start].role != "user":
        start -= 1
    stop = index + 1
    while stop < len(messages) and messages[stop].role != "user":
        stop += 1
    return start, stop


def split_groups(messages: list[Message]) -> list[list[Message]]:
    """Messages split into the atomic units the window keeps or drops whole, oldest first."""
    spans = list(group_spans(messages))
    return [messages[a:b] for a, b in reversed(spans)]


def group_spans(messages: list[Message], end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, stop) of each group of `messages[:end]`, newest first, found walking backwards.

    An assistant message takes the tool results that follow it (if it made tool calls) and the
    user message just before it (the question it answers). Tool results with no calling assistant
    before them, and anything else, are groups of their own. Walking backwards lets the window
    stop at the budget without ever touching older history.
    """
    i = len(messages) - 1 if end is None else end - 1
    while i >= 0:
        stop = i + 1
        if messages[i].role == "tool":
            while i >= 0 and messages[i].role == "tool":
                i -= 1
            if i < 0 or messages[i].role != "assistant" or not messages[i].tool_calls:
                yield i + 1, stop  # orphan tool results
                continue
        if messages[i].role == "assistant" and i > 0 and messages[i - 1].role == "user":
            i -= 1
        yield i, stop
        i -= 1


def group_of(messages: list[Message], index: int) -> tuple[int, int]:
    """The span of the group holding `messages[index]`, looking only at its own turn."""
    end = index + 1
    while end < len(messages) and messages[end].role != "user":
        end += 1
    for start, stop in group_spans(messages, end):
        if start <= index:
            return start, stop
    return index, index + 1


def sendable(group: list[Message]) -> list[Message]:
    """What of a group a provider accepts: tool results nobody asked for are left out, and a
    group with a tool call never answered (or nothing but stray results) is empty."""
    if all(m.role != "tool" and not m.tool_calls for m in group):
        return group  # plain talk, nearly every group: nothing to check
    asked = {c.get("id", "") for m in group if m.role == "assistant" for c in (m.tool_calls or [])}
    answered = {m.tool_call_id for m in group if m.role == "tool"}
    if not asked <= answered:
        return []
    return [m for m in group if m.role != "tool" or m.tool_call_id in asked]


def is_orphan(group: list[Message]) -> bool:
    """A group that can never be sent: tool results without their call, or calls unanswered."""
    return not sendable(group)
