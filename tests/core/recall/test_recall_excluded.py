"""Nothing the user took out comes back, through any reader of the index: recall in the session
and across sessions, /recall and `search` (search_turns), /recall --all and `search --all`
(search_sessions). The session (tests/excluded_turns.py) holds one kept fact and more excluded
turns about it, in the same words, than any reader reads hits: each reader must find the kept
turn, which it can only if the index's query itself leaves the excluded ones out, and bring
back nothing of the others."""

from __future__ import annotations

import pytest

from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.sessions import recall_beyond, search_sessions
from jarvis_tui.core.recall.turns import recall, search_turns
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tree import path_to
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter
from tests.excluded_turns import KEPT, QUERY, QUESTION, leaked, store_session

COUNTER = TokenCounter("m", exact=False)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.db") as s:
        yield s


def texts(turns: list[list[Message]]) -> str:
    return "\n".join(m.content for turn in turns for m in turn)


@pytest.mark.parametrize("question", [QUESTION, "The harbour gate code again, what was it?",
                                      "harbour gate code 是多少来着？"])
def test_recall_brings_the_kept_turn_and_nothing_taken_out(store, question):
    stored = store_session(store)
    history = History(store.messages(stored.conversation_id))
    got = recall(store, stored.conversation_id, history, question, COUNTER, 4000)
    assert KEPT in texts(got.turns), question
    assert leaked(texts(got.turns)) == []


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_recall_and_search_list_the_kept_turn_first_and_no_excluded_one(store, limit):
    stored = store_session(store, covered=False)
    shown = path_to(store.messages(stored.conversation_id), store.head(stored.conversation_id))
    found = search_turns(store, stored.conversation_id, shown, QUERY, limit)
    assert found and found[0][0].content == KEPT, limit
    assert leaked(texts(found)) == []
    assert not any(m.excluded or m.status == "failed" for turn in found for m in turn)


def new_session(store: Store) -> int:
    conv = store.create_conversation(title="New day", model="m")
    store.add_message(conv.id, Message("user", "Good morning, a new day of logistics."))
    return conv.id


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_recall_all_and_search_all_find_the_kept_turn_only(store, limit):
    stored = store_session(store)
    asking = new_session(store)
    found = search_sessions(store, QUERY, limit, beside=asking)
    assert found and found[0].session.id == stored.conversation_id
    assert found[0].turn[0].content == KEPT
    assert leaked(texts([f.turn for f in found])) == []


def test_recall_across_sessions_brings_the_kept_turn_and_nothing_taken_out(store):
    store_session(store)
    asking = new_session(store)
    question = "In the other session we agreed on the harbour gate code: what was it?"
    got = recall_beyond(store, asking, question, COUNTER, 4000)
    assert KEPT in texts(got.turns)
    assert leaked(texts(got.turns)) == []
