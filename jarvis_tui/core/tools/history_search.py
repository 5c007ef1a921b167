"""Searching the turns compaction folded away, for the model's built-in `search_history`
tool (core/tools/history_tool.py offers it).

Recall (core/recall/turns.py) brings a folded turn back only when the user's new message is plainly
about it; a model that notices, mid-answer, that it lacks a detail ("the port we chose earlier")
has no way to ask. This searches as recall ranks (recall/turns.py's search_covered: the
index's words, and while recall_by_meaning is on the meaning too, so "what car does Evan drive"
finds "my new Prius"), in this conversation's branch only and among the covered turns only
(what the model cannot see), and gives whole turns back, each message labelled with its id
and date, within a token cap. Bad arguments and no match are results the model reads, never
exceptions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from jarvis_tui.core.calls.specs import ToolCall, ToolResult
from jarvis_tui.core.messages import Message, describe_calls
from jarvis_tui.core.window.fit import truncate_middle
from jarvis_tui.core.window.tokens import TokenCounter

HISTORY_TOOL = "search_history"
DEFAULT_LIMIT = 3
MAX_LIMIT = 10
MIN_TOKENS = 256  # the least room a result gets, whatever the settings say


class BadArguments(ValueError):
    """What is wrong with a call's arguments, in words the model can act on."""


def _arguments(call: ToolCall) -> tuple[str, int, bool]:
    try:
        args = call.parsed()
    except ValueError as err:
        raise BadArguments(str(err)) from None
    query = args.get("query")
    if query is None:
        raise BadArguments('a "query" is needed: the words to look for, e.g. '
                           '{"query": "port number"}')
    if not isinstance(query, str):
        raise BadArguments(f'"query" must be a string of words, not {_json_type(query)}')
    if not query.strip():
        raise BadArguments('"query" is empty: give the words to look for')
    return query.strip(), _limit(args.get("limit", DEFAULT_LIMIT)), _everywhere(args)


def _everywhere(args: dict) -> bool:
    """The "all_sessions" asked for; "true"/"false" as text too (models quote them)."""
    value = args.get("all_sessions", False)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if value is None or isinstance(value, bool):
        return bool(value)
    raise BadArguments(f'"all_sessions" must be true or false, not {_json_type(value)}')


# The largest limit read as "as many as may be": a whole number a model could mean (a JSON
# Schema integer, 64 bits). Past it, a number is garbage, and so is text that is longer:
# reading 5,000 digits as a number is an error in Python itself.
_LARGEST = 2**63 - 1


def _limit(value: object) -> int:
    """The limit asked for: a whole number from 1 up, held to MAX_LIMIT (more than the most
    gets the most); a number written as text in the digits 0-9 is read too (models often quote
    them). Anything else (a fraction, a boolean, zero or less, text such as "²" or "٣", a
    number too large to mean anything) is a BadArguments saying what a limit is."""
    if value is None:
        return DEFAULT_LIMIT
    number: int | None = None
    if isinstance(value, str):
        text = value.strip()
        # Only what JSON writes for a number: str.isdigit() takes "²" and int() takes "٣".
        if text.isascii() and text.isdigit() and len(text) <= len(str(_LARGEST)):
            number = int(text)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    if number is None or not 1 <= number <= _LARGEST:
        raise BadArguments(f'"limit" must be a whole number from 1 to {MAX_LIMIT}, not '
                           f"{_number_or_type(value)}")
    return min(number, MAX_LIMIT)


def _number_or_type(value: object) -> str:
    """A short number as written ("not -3" says more than "not a number"), else its type: a
    huge one is never written out (Python refuses to for over 4,300 digits)."""
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)
                                    and abs(value) <= _LARGEST):
        return repr(value)
    return _json_type(value)


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(value), "null" if value is None else "that")


@dataclass(frozen=True)
class HistorySearch:
    """One conversation's folded turns, searched as the tool is called. `cap`: the most tokens
    a result may take (counted by `counter`, the engine's)."""

    # This conversation's covered turns of the branch shown that match (query, limit), best
    # first, each whole (its messages the model may be shown: not failed, not excluded by the
    # user): recall/turns.py's search_covered, as the engine wires it (recall sits beside
    # tools), ranked by meaning too while recall_by_meaning is on.
    find: Callable[[str, int], list[list[Message]]]
    counter: TokenCounter
    cap: int
    # The other sessions' turns that match (query, limit): (turn, where it is from), best
    # first; None: this conversation's only. The engine wires it too.
    others: Callable[[str, int], list[tuple[list[Message], str]]] | None = None

    def run(self, call: ToolCall) -> ToolResult:
        try:
            query, limit, everywhere = _arguments(call)
        except BadArguments as err:
            return ToolResult(f"{HISTORY_TOOL} was not run: {err}", True)
        turns = self.find(query, limit)
        labels = [""] * len(turns)
        if everywhere:
            others = self.others(query, limit) if self.others is not None else []
            # Half the turns at least for the other sessions: that is what was asked for.
            turns = turns[:max(limit - len(others), (limit + 1) // 2)]
            others = others[:limit - len(turns)]
            labels = [""] * len(turns) + [where for _, where in others]
            turns += [turn for turn, _ in others]
        # The user keeps sessions apart (recall_other_sessions = false): say so, or the model
        # reads "nothing in any session" as the user never having said it.
        apart = ("Other sessions are not searched: the user keeps each session's turns to "
                 "itself (setting recall_other_sessions). " if everywhere and self.others is None
                 else "")
        if not turns:
            where = ("in any session" if everywhere and not apart
                     else "in the earlier turns folded into the summary")
            return ToolResult(
                f"{apart}Nothing {where} matches {query!r}. Try other words: a name, a number, "
                "a rarer word, or the words in the language they were said in.")
        return ToolResult(apart + self.render(query, turns, labels))

    def render(self, query: str, turns: list[list[Message]],
               labels: list[str] | None = None) -> str:
        """The turns, oldest first, within `cap` tokens: the best ones whole; the best one cut
        in the middle when even it alone does not fit (a detail is likelier kept than not).
        `labels`: per turn, the other session it is from ("": this one)."""
        labels = labels or [""] * len(turns)
        what = ("Earlier turns folded into the summary, and turns of the user's other "
                "sessions," if any(labels) else "Earlier turns folded into the summary")
        head = f"{what} that match {query!r} (oldest first; #N is a message's id):"
        room = self.cap - self.counter.text(head)
        kept: list[tuple[int, str]] = []  # (rank, text)
        for rank, turn in enumerate(turns):
            text = _turn_text(turn, labels[rank])
            cost = self.counter.text(text) + 1
            if cost <= room:
                kept.append((rank, text))
                room -= cost
            elif rank == 0:
                cut, _ = truncate_middle(text, max(room, 32), self.counter)
                kept.append((rank, cut))
                room = 0
        parts = [head, *(text for _, text in sorted(kept, key=lambda k: _when(turns[k[0]])))]
        if left := len(turns) - len(kept):
            parts.append(f"({left} more matching turn{'s' if left > 1 else ''} did not fit in "
                         f"the {self.cap} tokens a result may take: search with more specific "
                         "words.)")
        return "\n\n".join(parts)


def _when(turn: list[Message]) -> float:
    return turn[0].created_at


def _date(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _turn_text(turn: list[Message], where: str = "") -> str:
    ids = [m.id for m in turn if m.id is not None]
    span = f"#{ids[0]}" if len(ids) == 1 else f"#{ids[0]}-#{ids[-1]}" if ids else "unsaved"
    where = f" {where}," if where else ""
    lines = [f"--- turn of {_date(turn[0].created_at)},{where} messages {span} ---"]
    for msg in turn:
        who = f"{msg.role} {msg.name}" if msg.role == "tool" and msg.name else msg.role
        text = msg.content
        if msg.role == "assistant" and msg.tool_calls:
            text = "\n".join(t for t in (text, describe_calls(msg.tool_calls)) if t)
        lines.append(f"[#{msg.id} {who}, {_date(msg.created_at)}] {text}")
    return "\n".join(lines)


def result_cap(context_window: int, recall_budget: float, budget_tokens: int,
               tool_output_share: float) -> int:
    """The most tokens a result takes: the room recall has, but never more than one tool
    result may take in a request (a larger one would be sent head and tail, turns cut
    anywhere); at least MIN_TOKENS."""
    return max(MIN_TOKENS, min(int(context_window * recall_budget),
                               int(budget_tokens * tool_output_share)))
