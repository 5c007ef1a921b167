"""The engine keeps each answered request's counts in the store, against the fake server over real
HTTP and a real SQLite file: one row per answered round, none for a request the server did not
count, and a store that refuses the row does not fail the round."""

from __future__ import annotations

import sqlite3

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.costs import Price, cost
from tests.engine_helpers import final, make_engine, send


def usages(events: list[ev.Event]) -> list[ev.Usage]:
    return [e for e in events if isinstance(e, ev.Usage)]


async def test_each_answered_round_is_recorded_against_its_reply(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    cid = engine.conversation.id
    first = await send(engine, "Hello there")
    second = await send(engine, "And a longer second question about the plan")
    assert isinstance(final(first), ev.Finished) and isinstance(final(second), ev.Finished)
    rows = engine.store.usage_rows(cid)
    requests = fake_server.chat_requests
    assert [(r.kind, r.model) for r in rows] == [("chat", "fake-model")] * 2
    assert [r.message_id for r in rows] == [final(first).message.id, final(second).message.id]
    assert [(r.prompt_tokens, r.completion_tokens) for r in rows] == [
        (q.prompt_tokens, q.completion_tokens) for q in requests]
    # What the server said of its cache (the fake keeps one, as OpenAI does).
    assert [r.cached_tokens for r in rows] == [q.cached_tokens for q in requests]
    assert rows[1].cached_tokens > 0
    assert [(r.cached_tokens, r.cache_write_tokens) for r in rows] == [
        (u.cached_tokens, u.cache_write_tokens) for u in usages(first) + usages(second)]
    assert engine.last_usage == usages(second)[-1]


async def test_a_retried_round_records_only_the_answered_request(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    fake_server.faults.append(("status", 503, {}, {"error": {"message": "overloaded"}}))
    events = await send(engine, "try again please")
    assert isinstance(final(events), ev.Finished)
    assert [type(e).__name__ for e in events].count("Retrying") == 1
    (row,) = engine.store.usage_rows(engine.conversation.id)
    answered = fake_server.chat_requests[-1]
    assert (row.prompt_tokens, row.completion_tokens) == (answered.prompt_tokens,
                                                          answered.completion_tokens)


async def test_a_request_the_server_did_not_count_has_no_row(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "counted")
    counted = engine.last_usage
    fake_server.stream_usage = False
    events = await send(engine, "not counted")
    assert isinstance(final(events), ev.Finished) and usages(events) == []
    assert len(engine.store.usage_rows(engine.conversation.id)) == 1
    assert engine.last_usage is counted  # still the latest request that had counts


async def test_a_store_that_refuses_the_count_does_not_fail_the_round(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    # The real database refuses exactly this row, as a full disk would refuse any write.
    raw = sqlite3.connect(engine.store.path, isolation_level=None)
    raw.execute("CREATE TRIGGER no_room BEFORE INSERT ON usage "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    raw.close()
    events = await send(engine, "the reply must still arrive")
    assert isinstance(final(events), ev.Finished)
    stored = engine.store.messages(engine.conversation.id)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[-1].content == fake_server.chat_requests[-1].reply
    assert engine.store.usage_rows(engine.conversation.id) == []
    assert engine.last_usage is not None  # the screen still shows what it cost


async def test_session_cost_reads_the_store_and_prices_the_model(fake_server, tmp_path):
    price = Price(input=2.5, output=10.0, cached_input=1.25)
    engine = make_engine(fake_server, tmp_path, prices={"fake-model": price})
    for text in ("one", "two", "three"):
        await send(engine, text)
    tally = engine.session_cost()
    requests = fake_server.chat_requests
    assert (tally.chat_requests, tally.summary_requests) == (3, 0)
    assert tally.prompt_tokens == sum(r.prompt_tokens for r in requests)
    assert tally.completion_tokens == sum(r.completion_tokens for r in requests)
    rows = engine.store.usage_rows(engine.conversation.id)
    assert tally.money["$"] == pytest.approx(sum(
        cost(price, r.prompt_tokens, r.completion_tokens, r.cached_tokens) for r in rows))
    assert tally.unpriced == ()
    # Another engine on the same session (a second window, a restart) reads the same totals.
    again = make_engine(fake_server, tmp_path, store=engine.store,
                        conversation_id=engine.conversation.id)
    assert again.session_cost().prompt_tokens == tally.prompt_tokens
    assert again.session_cost().money == {} and again.session_cost().unpriced == ("fake-model",)
