"""The prompt's history as the core gives it: this session's messages with their ids, every
session's from the store; against the fake server and a real SQLite file."""

from __future__ import annotations

from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.prompt_history import HistoryEntry, entries_of
from jarvis_tui.core.store.store import Store
from tests.core.test_session import answer, open_session


def test_entries_newest_first_with_ids_and_no_repeats_or_blanks():
    messages = [Message("user", "a", id=1), Message("assistant", "reply", id=2),
                Message("user", "b", id=3), Message("user", " ", id=4),
                Message("user", "b", id=5), Message("user", "c", id=6, status=FAILED)]
    # A failed message was typed and sent too: it is there to send again.
    assert entries_of(messages) == [HistoryEntry("c", 6), HistoryEntry("b", 5),
                                    HistoryEntry("a", 1)]
    assert entries_of(messages, limit=2) == [HistoryEntry("c", 6), HistoryEntry("b", 5)]
    assert entries_of([]) == []


async def test_this_session_or_every_session(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    session = open_session(fake_server, tmp_path, store)
    await answer(session, "in the first session")
    session.open(None)
    await answer(session, "in the second")
    await answer(session, "and again")
    ids = [m.id for m in session.messages if m.role == "user"]
    assert session.sent_prompts(False) == [HistoryEntry("and again", ids[1]),
                                           HistoryEntry("in the second", ids[0])]
    assert session.sent_prompts(True) == [HistoryEntry("and again"),
                                          HistoryEntry("in the second"),
                                          HistoryEntry("in the first session")]
    await session.aclose()
