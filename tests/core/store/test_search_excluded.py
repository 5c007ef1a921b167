"""Every reader of the full-text index leaves out what a request would not send: messages the
user took out (x, /forget) and failed ones, in the query itself. A caller's filter afterwards is
not enough: the excluded turns would fill the reader's LIMIT of hits and hide the turns the user
kept (tests/excluded_turns.py holds more of them than any LIMIT)."""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.search_index import terms
from jarvis_tui.core.store.store import Store
from tests.excluded_turns import QUERY, store_session


def test_in_session_search_finds_the_kept_turn_and_never_an_excluded_one(store: Store):
    stored = store_session(store)
    for covered_only in (False, True):
        found = [h.message_id for h in store.search(stored.conversation_id, QUERY, limit=3,
                                                    covered_only=covered_only)]
        assert stored.kept_id in found, covered_only
        assert not set(found) & set(stored.excluded_ids), covered_only


def test_postings_count_only_what_could_be_sent(store: Store):
    stored = store_session(store)
    found = store.postings(stored.conversation_id, terms(QUERY).split(), cap=5)
    # Only the kept message holds the words: with the 48 excluded holders counted, each would
    # be too common to say anything (None), and recall would find nothing.
    assert found == {t: [stored.kept_id] for t in terms(QUERY).split()}


def test_the_readers_across_sessions_leave_them_out_too(store: Store):
    stored = store_session(store)
    asking = store.create_conversation(title="new").id
    store.add_message(asking, Message("user", "hello"))
    hits = store.search_sessions(QUERY, limit=3, beside=asking)
    assert stored.kept_id in [h.message_id for h in hits]
    assert not {h.message_id for h in hits} & set(stored.excluded_ids)
    beyond = store.postings_beyond(asking, terms(QUERY).split(), cap=5)
    assert beyond == {t: {stored.kept_id: stored.conversation_id} for t in terms(QUERY).split()}
    kept_messages = [m for m in store.messages(stored.conversation_id)
                     if m.id not in stored.excluded_ids]
    assert store.sendable_beyond(asking) == len(kept_messages)
