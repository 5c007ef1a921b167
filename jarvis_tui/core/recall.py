"""Recall: the original turns behind a summary, brought back when the new message needs them.

A summary keeps the gist and loses the detail: the cat's name, the exact figure, the error text.
Every original is still in the store, so before each request the new user message is searched
against the messages a summary covers; the best few whole turns that share enough of its words
go into the request after the summary, labelled, oldest first, within the recall budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jarvis_tui.core.history import History
from jarvis_tui.core.messages import FAILED, Message, split_turns, turn_span
from jarvis_tui.core.recall_index import query_terms, terms
from jarvis_tui.core.store import Store
from jarvis_tui.core.tokens import TokenCounter

RECALL_HEADER = ("Recalled from earlier in this conversation (original messages that the "
                 "summary above covers, oldest first):")
MAX_TURNS = 3
SEARCH_DEPTH = 12  # hits looked at to find MAX_TURNS relevant turns
_SUFFIXES = ("ing", "ed", "es", "s")


@dataclass
class Recalled:
    turns: list[list[Message]] = field(default_factory=list)  # whole turns, oldest first
    tokens: int = 0  # calibrated tokens of the block as sent

    @property
    def block(self) -> str:
        """The text that follows the summary in the system message ("" when nothing)."""
        if not self.turns:
            return ""
        lines = [RECALL_HEADER]
        for turn in self.turns:
            for msg in turn:
                lines.append(f"[{msg.role}] {msg.content}")
        return "\n".join(lines)


def _stem(term: str) -> str:
    for suffix in _SUFFIXES:
        if len(term) > len(suffix) + 2 and term.endswith(suffix):
            return term[: -len(suffix)]
    return term


def _shared(query: set[str], text: str) -> int:
    return len(query & {_stem(t) for t in terms(text).split()})


def _recallable(msg: Message) -> bool:
    # Pinned ones are sent anyway: never recall what is already in the window.
    return msg.covered and not msg.pinned and msg.status != FAILED and msg.id is not None


def recall(store: Store, conversation_id: int, history: History, query: str,
           counter: TokenCounter, budget: int) -> Recalled:
    """The turns a summary covers that `query` is about, within `budget` tokens.

    Relevant means sharing at least two of the query's search terms (one when the query has
    only one): a single common word ("weather", "我们") is not enough to bring a turn back.
    Only the hits' own turns are looked at, never the whole session: this runs as the user
    types."""
    wanted = {_stem(t) for t in query_terms(query)}
    if budget <= 0 or not wanted:
        return Recalled()
    need = min(2, len(wanted))
    chosen: dict[int, list[Message]] = {}  # turn start -> its recallable messages, best first
    for hit in store.search(conversation_id, query, limit=SEARCH_DEPTH, covered_only=True):
        position = history.position(hit.message_id)
        if position is None:  # stored since this engine loaded: not in our list
            continue
        start, stop = turn_span(history.all, position)
        if start in chosen:
            continue
        turn = [m for m in history.all[start:stop] if _recallable(m)]
        if turn and _shared(wanted, " ".join(m.content for m in turn)) >= need:
            chosen[start] = turn
        if len(chosen) == MAX_TURNS:
            break
    picked: list[int] = []
    used = counter.text(RECALL_HEADER) if chosen else 0
    for start, turn in chosen.items():  # best first, each turn whole or not at all
        cost = sum(counter.text(f"[{m.role}] {m.content}") + 1 for m in turn)
        if used + cost <= budget:
            picked.append(start)
            used += cost
    if not picked:
        return Recalled()
    return Recalled([chosen[start] for start in sorted(picked)], used)


def search_turns(store: Store, conversation_id: int, messages: Sequence[Message], query: str,
                 limit: int = 10) -> list[list[Message]]:
    """Whole turns of the conversation that match `query`, best first (for /recall and the
    `search` command; unlike recall(), the ones still in the window too)."""
    turns = split_turns([m for m in messages if m.id is not None])
    turn_of = {m.id: i for i, turn in enumerate(turns) for m in turn}
    found: list[int] = []
    for hit in store.search(conversation_id, query, limit=limit * 3):
        index = turn_of.get(hit.message_id)
        if index is not None and index not in found:
            found.append(index)
        if len(found) == limit:
            break
    return [turns[i] for i in found]
