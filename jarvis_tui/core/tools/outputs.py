"""Tool outputs in the request: the biggest thing a window ever holds (the seed's own case: one
call returned a whole file and the conversation overflowed).

Two shapes, both in the request only (the stored result stays whole, in the store, exports and
recall):
- a result larger than its share of the budget is sent head and tail, with a marker saying how
  to read the rest; decided once per result, so every later request sends the same bytes;
- when the conversation passes the threshold, older results (beyond the newest few) become a
  one-line stub naming the tool, its arguments and the output's size, before anything is
  summarised: the cheapest tokens to give back, and the call/result pair stays whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jarvis_tui.core.messages import Message
from jarvis_tui.core.tools.results import calls_of
from jarvis_tui.core.window.fit import Counts, truncate_middle
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD, TokenCounter

CUT_MARKER = ("\n[... {n} tokens of this tool output are left out of the request here (its "
              "start and end are kept). The whole output is stored; to read the middle, call "
              "the tool again with narrower arguments (a path, a line range, fewer entries) "
              "...]\n")
STUB = ("[Tool output not repeated: {tool}({args}) returned {chars:,} characters (about "
        "{tokens:,} tokens), stored in the session. Call the tool again if it is needed.]")
ARGS_SHOWN = 160  # characters of the arguments a stub repeats
STUB_WORTH = 2  # a result is stubbed only when that frees at least this many times the stub


class RawCounts:
    """A counter's uncalibrated estimate, where the same text must always count the same."""

    def __init__(self, counter: TokenCounter) -> None:
        self.text = counter.raw_text


def cut_output(text: str, max_tokens: int, counter: Counts) -> str | None:
    """The result as sent when it is over `max_tokens`: head and tail; None when it fits."""
    cut, omitted = truncate_middle(text, max(max_tokens - MESSAGE_OVERHEAD, 32), counter,
                                   marker=CUT_MARKER)
    return cut if omitted else None


def is_cut(sent: str) -> bool:
    """Whether a text sent in a message's place is a tool output's head and tail."""
    return CUT_MARKER.split("{n}")[1][:60] in sent


def is_stub(sent: str) -> bool:
    """Whether a text sent in a tool result's place is its one-line stub."""
    return sent.startswith(STUB.split("{tool}")[0])


def arguments_of(messages: list[Message], result: Message) -> str:
    """The arguments the result's call was made with, read from the call before it."""
    for msg in reversed(messages):
        for call in calls_of(msg) if msg.tool_calls else ():
            if call.id == result.tool_call_id:
                args = " ".join(call.arguments.split())
                return args if len(args) <= ARGS_SHOWN else args[:ARGS_SHOWN - 1] + "…"
    return "…"


def stub_for(messages: list[Message], result: Message, counter: TokenCounter) -> str:
    # The raw estimate, not the calibrated one: the stub must read the same after a restart.
    return STUB.format(tool=result.name or "tool", args=arguments_of(messages, result),
                       chars=len(result.content), tokens=counter.raw_text(result.content))


@dataclass(frozen=True)
class Pruned:
    stubs: dict[int, str]  # result id -> the stub sent instead of it
    freed: int  # tokens the stubs give back, counted as the results were sent


def prune(active: list[Message], keep: int, sent_as: dict[int, str],
          counter: TokenCounter) -> Pruned:
    """Stubs for the tool results of `active` older than the newest `keep`, not pinned and not
    stubbed already, where a stub is worth it."""
    results = [m for m in active if m.role == "tool" and m.id is not None]
    old = results[:max(0, len(results) - keep)]
    stubs: dict[int, str] = {}
    freed = 0
    for msg in old:
        if msg.pinned or sent_as.get(msg.id, "").startswith("[Tool output not repeated"):
            continue
        stub = stub_for(active, msg, counter)
        now = counter.text(sent_as.get(msg.id, msg.content))
        after = counter.text(stub)
        if now >= after * STUB_WORTH:
            stubs[msg.id] = stub
            freed += now - after
    return Pruned(stubs, freed)


def tool_tokens(active: Iterable[Message], sent_as: dict[int, str],
                counter: TokenCounter) -> int:
    """Tokens of tool calls and results as they are sent, for the gauge's segment."""
    total = 0
    for m in active:
        if m.role == "tool" or m.tool_calls:
            text = sent_as.get(m.id) if m.id is not None else None
            total += (counter.message(m) if text is None
                      else counter.text(text) + MESSAGE_OVERHEAD)
    return total
