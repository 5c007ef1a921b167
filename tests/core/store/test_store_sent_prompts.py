"""Store.sent_prompts, the prompt's history, against a real SQLite file in tmp_path."""

from __future__ import annotations

from pathlib import Path

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.db import MAX_ID
from jarvis_tui.core.store.store import Store


def said(store: Store, conv_id: int, role: str, text: str, at: float) -> Message:
    return store.add_message(conv_id, Message(role, text, created_at=at))


def test_one_session_newest_first_without_blanks_replies_or_repeats(store: Store) -> None:
    conv = store.create_conversation()
    said(store, conv.id, "user", "first", 1.0)
    said(store, conv.id, "assistant", "an answer is not something the user sent", 2.0)
    said(store, conv.id, "user", "again", 3.0)
    said(store, conv.id, "user", "  \n ", 4.0)
    said(store, conv.id, "user", "again", 5.0)
    said(store, conv.id, "user", "first", 6.0)
    said(store, conv.id, "user", "多行\n的问题", 7.0)
    # "again" twice with only a blank between is one entry; "first" sent again later is not
    # a repeat of the one before it.
    assert store.sent_prompts(conv.id) == ["多行\n的问题", "first", "again", "first"]


def test_every_session_by_time_then_id(store: Store) -> None:
    a = store.create_conversation()
    b = store.create_conversation()
    said(store, a.id, "user", "a1", 10.0)
    said(store, b.id, "user", "b1", 20.0)
    said(store, a.id, "user", "a2", 30.0)
    said(store, b.id, "user", "b2 same moment, stored first", 40.0)
    said(store, a.id, "user", "a3 same moment, stored last", 40.0)
    assert store.sent_prompts(None) == ["a3 same moment, stored last",
                                        "b2 same moment, stored first", "a2", "b1", "a1"]
    assert store.sent_prompts(b.id) == ["b2 same moment, stored first", "b1"]


def test_repeats_across_sessions_collapse_only_when_next_to_each_other(store: Store) -> None:
    a = store.create_conversation()
    b = store.create_conversation()
    said(store, a.id, "user", "status?", 1.0)
    said(store, b.id, "user", "status?", 2.0)
    said(store, b.id, "user", "thanks", 3.0)
    said(store, a.id, "user", "status?", 4.0)
    assert store.sent_prompts(None) == ["status?", "thanks", "status?"]


def test_limit_counts_the_listed_texts(store: Store) -> None:
    conv = store.create_conversation()
    for i, text in enumerate(["x", "y", "y", "y", "z", ""]):
        said(store, conv.id, "user", text, float(i))
    assert store.sent_prompts(conv.id, limit=2) == ["z", "y"]
    assert store.sent_prompts(None, limit=3) == ["z", "y", "x"]
    assert store.sent_prompts(conv.id, limit=0) == []


def test_kept_after_reopening_and_nothing_for_unknown_sessions(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with Store(path) as store:
        conv = store.create_conversation()
        said(store, conv.id, "user", "remember me", 1.0)
    with Store(path) as store:
        assert store.sent_prompts(conv.id) == ["remember me"]
        assert store.sent_prompts(conv.id + 1) == []
        assert store.sent_prompts(MAX_ID + 1) == []
        assert store.sent_prompts(0) == []
