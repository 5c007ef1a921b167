"""The model's search_history never gives back a turn the user took out, in this session or
(all_sessions) in another, and finds the turn they kept however many excluded ones match
better (tests/excluded_turns.py): the index's query leaves them out, not only the tool."""

from __future__ import annotations

import json

import pytest

from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.sessions import search_sessions
from jarvis_tui.core.recall.turns import search_covered
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HISTORY_TOOL, HistorySearch
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter
from tests.excluded_turns import KEPT, QUERY, leaked, store_session

COUNTER = TokenCounter("m", exact=False)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.db") as s:
        yield s


def tool(store: Store, conv_id: int) -> HistorySearch:
    """The tool as the engine builds it, other sessions searched as it wires them."""
    history = History(store.messages(conv_id))

    def here(query: str, limit: int) -> list[list[Message]]:
        return search_covered(store, conv_id, history, query, limit)

    def others(query: str, limit: int) -> list[tuple[list[Message], str]]:
        return [(f.turn, f.where) for f in search_sessions(store, query, limit, beside=conv_id)]
    return HistorySearch(here, COUNTER, 4000, others)


def call(**arguments: object) -> ToolCall:
    return ToolCall("c1", HISTORY_TOOL, json.dumps(arguments))


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_in_session_the_kept_turn_and_nothing_taken_out(store, limit):
    stored = store_session(store)
    result = tool(store, stored.conversation_id).run(call(query=QUERY, limit=limit))
    assert not result.is_error and KEPT in result.text, result.text
    assert leaked(result.text) == []


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_in_every_session_the_kept_turn_and_nothing_taken_out(store, limit):
    store_session(store)
    asking = store.create_conversation(title="New day", model="m").id
    store.add_message(asking, Message("user", "Good morning."))
    result = tool(store, asking).run(call(query=QUERY, limit=limit, all_sessions=True))
    assert not result.is_error and KEPT in result.text, result.text
    assert "from another session" in result.text
    assert leaked(result.text) == []
