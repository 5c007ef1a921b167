"""The next request as the model will receive it: its parts in order, each with its tokens, and
what becomes of every message of the branch shown. Shared vocabulary: the engine builds it (the
same plan its rounds send, request_plan.py), the UI shows it (the "Next request" screen and the
mark in each message's header).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# What the next request does with a stored message.
VERBATIM = "verbatim"  # sent as stored
CUT = "cut"  # sent as its head and tail, with a marker in the middle
FOLDED = "folded"  # covered by the summary: the summary speaks for it
STUBBED = "stubbed"  # a tool output sent as a one-line stub
RECALLED = "recalled"  # folded, but brought back word for word beside the newest message
EXCLUDED = "excluded"  # the user left it out
PINNED = "pinned"  # always sent whole, never folded
LEFT_OUT = "left out"  # did not fit the window this time (or its round failed)
STATES = (VERBATIM, CUT, FOLDED, STUBBED, RECALLED, EXCLUDED, PINNED, LEFT_OUT)

# The parts of a request, in the order the model reads them.
SYSTEM = "system"
MEMORY = "memory"
SUMMARY = "summary"
LEDGER = "ledger"
RECALL = "recalled"
MESSAGE = "message"
TOOLS = "tools"
PART_KINDS = (SYSTEM, MEMORY, SUMMARY, LEDGER, RECALL, MESSAGE, TOOLS)


@dataclass(frozen=True)
class RequestPart:
    kind: str  # one of PART_KINDS
    text: str  # as the model receives it
    tokens: int  # the engine's count, calibrated as the gauge's
    role: str = ""  # a message's role
    message_id: int | None = None  # a stored message's id (None: the text being typed)
    state: str = ""  # a message's state (STATES)


@dataclass(frozen=True)
class NextRequest:
    parts: list[RequestPart]
    wire: list[dict[str, Any]]  # the request's messages, exactly as the provider is given them
    tools: list[dict[str, Any]]  # the tool definitions sent with them
    states: dict[int, str]  # stored message id -> its state, for the branch shown
    budget: int  # the room the request's prompt has (window - reserves)
    compacts_first: bool = False  # past the threshold: the round compacts before sending

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.parts)

    def to_json(self) -> str:
        """The request's body as far as the conversation goes: messages and tools."""
        body: dict[str, Any] = {"messages": self.wire}
        if self.tools:
            body["tools"] = self.tools
        return json.dumps(body, ensure_ascii=False, indent=2)
