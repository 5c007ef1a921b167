"""The memory as the interface reaches it, through ChatSession only: remember, edit, pin,
delete, accept or dismiss a suggestion, and what the next request carries; against the fake
server and a real SQLite file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jarvis_tui.core.memory.section import HEADER
from jarvis_tui.core.messages import Message
from jarvis_tui.core.session import ChatSession, MemoryRefused, StoreError
from tests.core.test_session import answer, open_session
from tests.engine_helpers import BASE

KEY = "sk-proj-" + "Tq3x9VbN2mLk7RwZ4yHcP1sDfG8jKa0eUo6iBnMv"


def last_system(fake) -> str:  # type: ignore[no-untyped-def]
    return fake.chat_requests[-1].body["messages"][0]["content"]


async def test_what_is_remembered_goes_to_every_sessions_next_request(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    await answer(session, "hello")
    said = session.messages[0]
    entry = session.memory.remember("  Answer in Chinese, keep code comments in English. \n", said)
    assert (entry.text, entry.kind, entry.state) == (
        "Answer in Chinese, keep code comments in English.", "instruction", "active")
    assert (entry.conversation_id, entry.message_id) == (session.id, said.id)
    memory = session.usage().memory  # the gauge counts it at once, before any round
    sent = session.memory.sent()
    assert sent.sent == (entry.id,) and sent.left_out == ()
    assert memory == sent.tokens > 0
    await answer(session, "next")
    assert last_system(fake_server) == f"{BASE.system_prompt}\n\n{sent.text}"
    session.open(None)  # a new session: the same memory
    await answer(session, "a new session")
    assert last_system(fake_server) == f"{BASE.system_prompt}\n\n{sent.text}"
    typed = session.memory.remember("Alice is our SRE.")  # typed: no message it came from
    assert (typed.kind, typed.conversation_id, typed.message_id) == ("person", session.id, None)


async def test_a_secret_is_refused_in_one_line_and_nothing_is_stored(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path, api_key="my plain server key 42")
    with pytest.raises(MemoryRefused) as refused:
        session.memory.remember(f"the staging key is {KEY}")
    assert str(refused.value) == ("a memory never holds a secret: this looks like an OpenAI API "
                                  "key")
    with pytest.raises(MemoryRefused, match="a key jarvis-tui was given"):
        session.memory.remember("remember my plain server key 42 for later")
    with pytest.raises(MemoryRefused, match="memory entries are short"):
        session.memory.remember("x" * 5000)
    entry = session.memory.remember("Our staging cluster is in Frankfurt.")
    with pytest.raises(MemoryRefused, match="this looks like an OpenAI API key"):
        session.memory.edit(entry.id, f"Frankfurt, key {KEY}")
    assert [e.text for e in session.memory.entries()] == ["Our staging cluster is in Frankfurt."]


async def test_edit_pin_and_delete_change_the_next_request(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    older = session.memory.remember("I prefer short answers.")
    newer = session.memory.remember("Our staging cluster is in Frankfurt.")
    assert session.memory.sent().sent == (newer.id, older.id)  # newest first
    session.memory.pin(older.id, True)
    assert session.memory.sent().sent == (older.id, newer.id)  # pinned first
    edited = session.memory.edit(newer.id, "Our staging cluster is in Frankfurt (eu-central-1).")
    assert edited.text.endswith("(eu-central-1).") and edited.id == newer.id
    await answer(session, "hello")
    assert last_system(fake_server).endswith(
        f"{HEADER}\n- I prefer short answers.\n"
        "- Our staging cluster is in Frankfurt (eu-central-1).")
    session.memory.delete(older.id)
    await answer(session, "again")
    assert last_system(fake_server).endswith(
        f"{HEADER}\n- Our staging cluster is in Frankfurt (eu-central-1).")
    with pytest.raises(StoreError, match=f"memory entry {older.id} does not exist"):
        session.memory.pin(older.id, False)


async def test_a_suggestion_waits_for_the_users_yes(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    store = session._store
    yes = store.add_memory("We decided to use Postgres.", kind="decision", state="suggested",
                           conversation_id=session.id)
    no = store.add_memory("I like green.", kind="preference", state="suggested")
    assert {e.id for e in session.memory.entries()} == {yes.id, no.id}
    assert session.memory.entries(include_suggested=False) == []
    assert session.memory.sent().text == ""  # a suggestion is not sent
    accepted = session.memory.accept(yes.id)
    assert accepted.state == "active" and session.memory.sent().sent == (yes.id,)
    session.memory.dismiss(no.id)
    # The dismissed one is gone from view...
    assert [e.id for e in session.memory.entries()] == [yes.id]
    assert [e.state for e in store.memories(("dismissed",))] == ["dismissed"]  # but kept
    with pytest.raises(StoreError, match="not a suggestion; delete it to forget it"):
        session.memory.dismiss(yes.id)
    with pytest.raises(StoreError, match="memory entry 999 does not exist"):
        session.memory.accept(999)
    await answer(session, "hello")
    assert last_system(fake_server).endswith(f"{HEADER}\n- We decided to use Postgres.")


async def test_a_suggestion_holding_a_secret_cannot_be_accepted(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    bad = session._store.add_memory(f"From now on use {KEY}.", state="suggested")
    with pytest.raises(MemoryRefused, match="a memory never holds a secret"):
        session.memory.accept(bad.id)
    assert session.memory.entries(include_suggested=False) == []


async def test_remembering_a_text_already_there_is_that_entry(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    first = session.memory.remember("Answer in Chinese.")
    assert session.memory.remember("answer in  chinese").id == first.id
    dismissed = session._store.add_memory("I like green", state="dismissed")
    again = session.memory.remember("I like green.")  # the user's own yes, later
    assert (again.id, again.state, again.text) == (dismissed.id, "active", "I like green.")
    assert len(session.memory.entries()) == 2


async def test_memory_another_window_adds_is_what_memory_sent_reports(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    other = ChatSession(session.settings, type(session._store)(tmp_path / "sessions.db"),
                        lambda s: session.provider)
    entry = other.memory.remember("Alice is our SRE.")
    assert session.memory.sent().sent == (entry.id,)
    await answer(session, "hello")
    assert last_system(fake_server).endswith("- Alice is our SRE.")
    unsaved = session.memory.remember("remembered here", Message("user", "not stored"))
    assert unsaved.message_id is None  # a message not stored is no source


async def test_the_gauge_follows_each_change_without_waiting_for_a_round(fake_server, tmp_path):
    long = "Our staging cluster is in Frankfurt, behind the VPN, and deploys go through Argo."
    session = open_session(fake_server, tmp_path)
    older = session.memory.remember(long)
    # Saved on the settings screen: room for the header and the long entry, not one more.
    budget = session.tokens(f"{HEADER}\n- {long}") + 1
    await session.apply_settings(replace(session.settings, memory_budget=budget - 2))
    assert session.usage().memory == 0  # too little room for it: left out at once
    await session.apply_settings(replace(session.settings, memory_budget=budget))
    assert session.usage().memory == budget - 1
    newer = session.memory.remember("I prefer tabs.")  # newest first: only it fits with the header
    short = session.usage().memory
    assert 0 < short < budget
    session.memory.pin(older.id, True)  # now the long one goes first, and alone
    assert session.usage().memory > short
    session.memory.edit(older.id, "Staging is in Frankfurt.")
    both = session.usage().memory  # shorter now: both fit
    assert both == session.memory.sent().tokens < budget
    assert session.memory.sent().sent == (older.id, newer.id)
    session.memory.delete(newer.id)
    assert session.usage().memory < both
