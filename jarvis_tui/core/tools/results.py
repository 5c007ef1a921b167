"""What a tool round leaves in the conversation: results (an error reads "Error: ..."), the calls
a reply made, the calls still unanswered, and the definitions the model is told of.

Shared by the engine's tool round, the tool-output shaping below it and the UI's tool blocks,
so every side reads a result the way the round wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.messages import COMPLETE, Message

ERROR_PREFIX = "Error: "
INTERRUPTED = ("the tool call was interrupted before it finished (jarvis-tui stopped); "
               "its output is unknown")
CANCELLED = "the user stopped this tool call before it finished (Esc)"


def is_error_result(message: Message) -> bool:
    return message.role == "tool" and message.content.startswith(ERROR_PREFIX)


def tool_result_message(call: ToolCall, text: str, *, error: bool = False) -> Message:
    content = f"{ERROR_PREFIX}{text}" if error and not text.startswith(ERROR_PREFIX) else text
    return Message("tool", content, tool_call_id=call.id, name=call.name, status=COMPLETE)


def calls_of(message: Message) -> list[ToolCall]:
    return [ToolCall.from_wire(c) for c in message.tool_calls or [] if isinstance(c, dict)]


def unanswered(messages: list[Message]) -> list[tuple[Message, ToolCall]]:
    """Calls of the newest turn with no stored result (a process killed while a tool ran).
    Only the newest turn: an older one was answered before its next round began."""
    start = len(messages)
    while start > 0 and messages[start - 1].role != "user":
        start -= 1
    answered = {m.tool_call_id for m in messages[start:] if m.role == "tool"}
    return [(m, c) for m in messages[start:] if m.role == "assistant"
            for c in calls_of(m) if c.id not in answered]


def tool_definitions(specs: Iterable[ToolSpec]) -> list[dict]:
    return [s.wire() for s in specs]


def definitions_text(defs: list[dict]) -> str:
    """The tool definitions as the model reads them, near enough for counting: they go with
    every request, so they take room like the system prompt."""
    return json.dumps(defs, ensure_ascii=False) if defs else ""
