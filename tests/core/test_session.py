"""The session boundary: what the interface asks of one object, against the fake server and a
real SQLite file; and a reading of the interface's sources that keeps it from reaching around."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import jarvis_tui.ui
from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.session import ChatSession
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.tokens import estimate
from tests.engine_helpers import BASE, summarising_replies

UI = Path(jarvis_tui.ui.__path__[0])


class Factory:
    """Builds real providers and remembers each, to see which the session uses and closes."""

    def __init__(self) -> None:
        self.made: list[OpenAIProvider] = []

    def __call__(self, settings):  # type: ignore[no-untyped-def]
        provider = OpenAIProvider(settings.base_url, settings.api_key,
                                  timeout=settings.request_timeout,
                                  connect_timeout=settings.connect_timeout)
        self.made.append(provider)
        return provider


def open_session(fake, tmp_path: Path, store: Store | None = None, **changes) -> ChatSession:
    settings = replace(BASE, base_url=fake.base_url, **changes)
    return ChatSession(settings, store or Store(tmp_path / "sessions.db"), Factory())


async def answer(session: ChatSession, text: str) -> list[ev.Event]:
    return [event async for event in session.stream_reply(Message("user", text))]


def test_the_interface_never_reaches_the_store_the_counter_or_engine_attributes():
    reach = re.compile(r"engine\.(store|counter|provider|conversation|streaming_reply)\b"
                       r"|\.store\.|\.engine\b")
    found = [f"{path.relative_to(UI)}:{n}: {line.strip()}"
             for path in UI.rglob("*.py")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if reach.search(line)]
    assert found == []


async def test_it_reopens_the_latest_session_and_switches_between_sessions(fake_server,
                                                                          tmp_path):
    store = Store(tmp_path / "sessions.db")
    first = open_session(fake_server, tmp_path, store)
    await answer(first, "the first session's question")
    assert first.refresh_title().startswith("the first session")
    first.open(None)
    await answer(first, "the second session's question")
    second_id = first.id
    again = open_session(fake_server, tmp_path, store)
    assert again.id == second_id  # the newest one reopens
    older = [c.id for c in again.list_sessions() if c.id != second_id]
    again.open(older[0])
    assert [m.content for m in again.messages][0] == "the first session's question"
    assert open_session(fake_server, tmp_path, store).id == older[0]  # touched: reopens next
    try:
        again.open(10_000)
    except ValueError as err:
        assert "no session 10000" in str(err)
    assert again.id == older[0]  # a failed switch stays where it was


async def test_a_new_address_gets_a_new_provider_and_the_old_one_is_closed(fake_server,
                                                                           make_fake_server,
                                                                           tmp_path):
    session = open_session(fake_server, tmp_path)
    factory: Factory = session._factory  # type: ignore[assignment]
    await answer(session, "hello")
    other = make_fake_server()
    await session.apply_settings(replace(session.settings, base_url=other.base_url))
    assert len(factory.made) == 2 and factory.made[0]._client.is_closed
    await answer(session, "where does this go?")
    assert other.chat_requests and other.chat_requests[-1].body["messages"][-1]["content"] \
        == "where does this go?"
    await session.apply_settings(replace(session.settings, compact_threshold=0.6))
    assert len(factory.made) == 2  # a budget change keeps the connection
    assert session.usage().threshold == int(session.usage().budget * 0.6)
    await session.aclose()


async def test_numbers_are_the_gauges_own_calibrated_counts(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    cid = store.create_conversation(model="fake-model").id
    store.set_meta(cid, "calibration", {"openai:fake-model": 2.0})
    session = open_session(fake_server, tmp_path, store)
    assert session.id == cid
    text = "京都的红叶在十一月最美 and the maples in November"
    assert session.tokens(text) == session._engine.counter.text(text)
    assert session.tokens(text) > estimate(text)  # calibrated, as the gauge counts
    assert session.unstored_reply_tokens("") == 0
    assert session.unstored_reply_tokens(text) == session.tokens(text)


async def test_pinning_export_search_and_the_reply_to_copy(fake_server, tmp_path):
    session = open_session(fake_server, tmp_path)
    await answer(session, "the launch budget is 4,200 euros")
    await answer(session, "and the venue is in Lyon")
    first = session.messages[0]
    changed = session.branches.set_pinned([first], True)
    assert changed == ev.MessagesChanged((first.id,), "pinned")
    assert session.branches.pinned_usage()[0] == 1
    assert session.branches.set_pinned([first], False).what == "unpinned"
    turns = session.search("launch budget")
    assert turns and turns[0][0].content == "the launch budget is 4,200 euros"
    reply = session.last_reply()
    assert reply is not None and reply is session.messages[-1]
    assert session.branches.last_pinnable() is session.messages[-1]
    out = tmp_path / "export.json"
    assert session.export(out) == 4
    assert "4,200 euros" in out.read_text(encoding="utf-8")


async def test_a_compaction_names_the_messages_it_covered(fake_server, tmp_path):
    summarising_replies(fake_server)
    session = open_session(fake_server, tmp_path, keep_recent_turns=1)
    for i in range(3):
        await answer(session, f"question {i} about the window")
    events = [e async for e in session.compaction.run("manual")]
    done = events[-1]
    assert isinstance(done, ev.CompactionFinished)
    covered = [m.id for m in session.compaction.covered()]
    assert list(done.covered_ids) == covered and len(covered) == 4
    cost = session.compaction.last_cost()
    assert cost is not None and cost.model == session.summary_model
