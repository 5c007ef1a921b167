"""The message record and how messages group into turns and atomic units.

A *turn* starts at a user message and runs until the next user message. Inside a turn, the
*groups* are the units the window keeps or drops whole: the user message together with the reply
to it, and an assistant message that calls tools together with all of its tool results. Sending
half a group would give the provider an orphan tool result (rejected with a 400) or a question
whose answer was cut off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

ROLES = ("system", "user", "assistant", "tool")

COMPLETE = "complete"
PARTIAL = "partial"
FAILED = "failed"


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
    created_at: float = field(default_factory=time.time)
    # Raw token estimate cached with the content it was computed for (see tokens.TokenCounter).
    _tokens: tuple[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def covered(self) -> bool:
        return self.summary_id is not None

    def to_wire(self, content: str | None = None) -> dict[str, Any]:
        """The OpenAI chat-completions shape of this message; `content` overrides the text."""
        text = self.content if content is None else content
        out: dict[str, Any] = {"role": self.role, "content": text}
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name and self.role != "tool":
            out["name"] = self.name
        return out


def split_turns(messages: list[Message]) -> list[list[Message]]:
    """Messages split into turns; anything before the first user message is a turn of its own."""
    turns: list[list[Message]] = []
    for msg in messages:
        if msg.role == "user" or not turns:
            turns.append([msg])
        else:
            turns[-1].append(msg)
    return turns


def split_groups(messages: list[Message]) -> list[list[Message]]:
    """Messages split into the atomic units the window keeps or drops whole.

    A user message opens a group and takes the first assistant reply after it; an assistant
    message with tool calls takes every tool result that answers one of its call ids (and any
    tool result directly following it). A tool result with no call before it is a group of its
    own so the window can recognise and drop it.
    """
    groups: list[list[Message]] = []
    open_calls: set[str] = set()
    user_waiting = False  # the last group is a user message still waiting for its reply
    for msg in messages:
        if msg.role == "user":
            groups.append([msg])
            user_waiting = True
            open_calls = set()
        elif msg.role == "tool":
            if groups and (open_calls or _ends_in_tool_call(groups[-1])):
                groups[-1].append(msg)
                open_calls.discard(msg.tool_call_id or "")
            else:
                groups.append([msg])
        elif msg.role == "assistant":
            if user_waiting:
                groups[-1].append(msg)
                user_waiting = False
            else:
                groups.append([msg])
            open_calls = {c.get("id", "") for c in (msg.tool_calls or [])}
        else:
            groups.append([msg])
            user_waiting = False
            open_calls = set()
    return groups


def _ends_in_tool_call(group: list[Message]) -> bool:
    return any(m.role == "assistant" and m.tool_calls for m in group)


def is_orphan(group: list[Message]) -> bool:
    """A group a provider would reject: tool results without their call, or calls unanswered."""
    if group[0].role == "tool":
        return True
    asked = {c.get("id", "") for m in group if m.role == "assistant" for c in (m.tool_calls or [])}
    answered = {m.tool_call_id for m in group if m.role == "tool"}
    return not asked <= answered
