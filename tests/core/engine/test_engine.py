"""The engine end to end over real HTTP: layers 1-3, retries, and what ends up in the store."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import COMPLETE, FAILED, PARTIAL, Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.calibration import DECISIVE_TOKENS
from jarvis_tui.core.window.system_message import SUMMARY_HEADER
from tests.engine_helpers import (
    Sleeps,
    final,
    is_prefix_summary,
    is_summary_request,
    kinds,
    make_engine,
    send,
    summarising_replies,
    summary_material,
)


async def test_a_round_streams_stores_and_calibrates(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    # Text the fake server counts differently from the estimate (42 estimated, 43 counted), so
    # the calibration from its report shows.
    events = await send(engine, "Hello there, 你好，今天天气怎么样？")
    assert kinds(events)[0] == "WindowFitted"
    deltas = "".join(e.text for e in events if isinstance(e, ev.Delta))
    assert deltas == fake_server.chat_requests[-1].reply
    usage = next(e for e in events if isinstance(e, ev.Usage))
    assert usage.prompt_tokens == fake_server.chat_requests[-1].prompt_tokens
    assert isinstance(final(events), ev.Finished)
    stored = engine.store.messages(engine.conversation.id)
    assert [(m.role, m.status) for m in stored] == [("user", COMPLETE), ("assistant", COMPLETE)]
    assert stored[1].content == deltas
    assert usage.prompt_tokens != usage.estimated_prompt_tokens, "the server counted as we did"
    # The first report moves the factor toward what the server counted over what we estimated,
    # by the request's size: a request this short is too much framing to be believed whole.
    assert engine.counter.source == "calibrated"
    ratio = usage.prompt_tokens / usage.estimated_prompt_tokens
    share = usage.estimated_prompt_tokens / DECISIVE_TOKENS
    assert share < 1
    assert engine.counter.factor == pytest.approx(1 + share * (ratio - 1))
    body = fake_server.chat_requests[-1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 512


async def test_threshold_compaction_folds_old_turns_into_a_summary(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path)
    seen: list[ev.Event] = []
    for i in range(30):
        seen += await send(engine, f"Turn {i}: tell me about topic {i}. " + "detail " * 150)
        assert isinstance(final(seen), ev.Finished)
    assert "CompactionFinished" in kinds(seen)
    summaries = engine.store.summaries(engine.conversation.id)
    assert summaries and all(s.kind == "auto" for s in summaries)
    # Incremental: a later summary request carried the previous summary.
    summary_bodies = [r.body for r in fake_server.chat_requests if is_summary_request(r.body)]
    assert len(summary_bodies) >= 2
    # The summary model is the chat model: asked at the end of the chat request's own front,
    # whose system message holds the summary so far.
    assert all(is_prefix_summary(b) for b in summary_bodies)
    assert SUMMARY_HEADER in summary_bodies[-1]["messages"][0]["content"]
    assert all(not b.get("stream") for b in summary_bodies)  # never the chat path
    # The chat request after compaction carries the summary in its one system message.
    last_chat = [r.body for r in fake_server.chat_requests if not is_summary_request(r.body)][-1]
    assert SUMMARY_HEADER in last_chat["messages"][0]["content"]
    assert engine.summary.content in last_chat["messages"][0]["content"]
    # Nothing deleted: every message still stored, the old ones marked covered.
    stored = engine.store.messages(engine.conversation.id)
    assert len(stored) == 60
    assert any(m.covered for m in stored)
    assert not any(m.covered for m in stored[-6:])  # the last 3 turns stay verbatim
    assert all(r.status == 200 for r in fake_server.chat_requests)


async def test_chunked_summary_when_the_material_exceeds_the_window(make_fake_server, tmp_path):
    """The user moves a long conversation to a model with a quarter of the window: what is to
    be folded in is more than one summary request can hold, and goes in chunks, then a merge.
    (A single paste larger than the window does not: it is folded as it was sent, cut.)"""
    fake = make_fake_server(limit=16384)
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, context_window=16384)
    turns = [f"part {i}: " + f"第{i}部分的设计说明 and the reasons behind it. " * 110
             for i in range(6)]
    for text in turns:
        assert isinstance(final(await send(engine, text)), ev.Finished)
    assert not engine.store.summaries(engine.conversation.id)
    fake.limit = 4096
    engine.apply_settings(replace(engine.settings, context_window=4096))
    before = len(fake.chat_requests)
    events = await send(engine, "now on the small model: what did we decide?")
    assert isinstance(final(events), ev.Finished) and "CompactionFinished" in kinds(events)
    summary_requests = [r for r in fake.chat_requests[before:] if is_summary_request(r.body)]
    assert len(summary_requests) >= 3  # several chunks, then a merge
    assert all(r.status == 200 and not r.overflowed for r in summary_requests)
    assert all(r.prompt_tokens + r.body["max_tokens"] <= 4096 for r in summary_requests)
    merge = summary_requests[-1].body["messages"][-1]["content"]
    assert "summaries of consecutive parts" in merge
    chunks = [summary_material(r.body) for r in summary_requests[:-1]]
    folded = [m for m in engine.store.messages(engine.conversation.id) if m.covered]
    assert folded and all(any(m.content[:40] in c for c in chunks) for m in folded)
    assert [m.content for m in engine.store.messages(engine.conversation.id)
            if m.role == "user"][:6] == turns


async def test_summariser_failure_still_sends_the_turn_with_history_intact(
        fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, compact_threshold=0.1)
    await send(engine, "first question " + "x " * 200)
    # Down for the first try and both retries of the summary request.
    fake_server.faults.extend([("status", 500, {}, {"error": {"message": "summariser down"}})] * 3)
    events = await send(engine, "second question " + "y " * 200)
    assert "CompactionFailed" in kinds(events)
    failed = next(e for e in events if isinstance(e, ev.CompactionFailed))
    assert "summariser down" in failed.error
    assert isinstance(final(events), ev.Finished)
    stored = engine.store.messages(engine.conversation.id)
    assert len(stored) == 4 and not any(m.covered for m in stored)
    assert engine.store.summaries(engine.conversation.id) == []


@pytest.mark.parametrize("flavor, learned", [
    ("openai", 2048), ("vllm", 2048), ("vllm_new", 2048), ("llamacpp", 2048),
    ("llamacpp_old", None),  # its body names no limit: only an upper bound can be learned
    ("openrouter", 2048), ("anthropic", 2048), ("gemini", 2048)])
async def test_overflow_learns_the_limit_compacts_and_retries(make_fake_server, tmp_path,
                                                              flavor, learned):
    fake = make_fake_server(limit=2048, flavor=flavor)
    summarising_replies(fake, chat_words=10)
    # We believe the window is 8192 and never reach the threshold: only layer 3 can save us.
    engine = make_engine(fake, tmp_path, context_window=8192, compact_threshold=1.0,
                         keep_recent_turns=2)
    for i in range(12):
        events = await send(engine, f"message {i} " + "lorem ipsum dolor sit amet " * 40)
        assert isinstance(final(events), ev.Finished), (i, events[-1])
    assert any(r.overflowed for r in fake.chat_requests)
    assert any(isinstance(e, ev.CompactionFinished) and e.reason == "overflow" for e in events) \
        or engine.store.summaries(engine.conversation.id)
    stored = engine.store.messages(engine.conversation.id)
    assert len(stored) == 24 and all(m.status == COMPLETE for m in stored)
    stored_limit = engine.store.get_meta(engine.conversation.id, "context_limit")
    if learned is None:
        # The refused request's own size bounds the window: never below the real one.
        assert 2048 <= stored_limit < 8192 and engine.context_window == stored_limit
    else:
        assert stored_limit == learned
        assert engine.context_window == learned
        # A resumed session starts with the learned limit.
        again = make_engine(fake, tmp_path, context_window=8192, store=engine.store,
                            conversation_id=engine.conversation.id)
        assert again.context_window == learned


async def test_overflow_with_nothing_to_compact_trims_and_retries(make_fake_server, tmp_path):
    fake = make_fake_server(limit=2048)
    engine = make_engine(fake, tmp_path, context_window=16384, compact_threshold=1.0)
    pasted = "日志行 log line with some words\n" * 2000
    events = await send(engine, pasted)
    assert isinstance(final(events), ev.Finished), events[-1]
    assert "ContextLimitLearned" in kinds(events)
    sent = fake.chat_requests[-1].body["messages"][-1]["content"]
    assert "tokens omitted ..." in sent
    assert engine.store.messages(engine.conversation.id)[0].content == pasted


async def test_overflow_that_never_resolves_fails_cleanly(make_fake_server, tmp_path):
    fake = make_fake_server(limit=2048)
    body = {"error": {"message": "This model's maximum context length is 2048 tokens. However, "
                      "your messages resulted in 9000 tokens. Please reduce the length of the "
                      "messages.", "type": "invalid_request_error", "param": "messages",
                      "code": "context_length_exceeded"}}
    fake.faults.extend([("status", 400, {}, body)] * 5)
    engine = make_engine(fake, tmp_path)
    events = await send(engine, "hello")
    assert isinstance(final(events), ev.Failed)
    assert "context" in final(events).error
    assert len(fake.chat_requests) == 4  # first try + 3 retries, then a clear failure
    user = engine.store.messages(engine.conversation.id)[0]
    assert user.content == "hello" and user.status == FAILED


async def test_retry_after_is_honoured(fake_server, tmp_path):
    sleeps = Sleeps(cap=1.0)
    fake_server.faults.append(("status", 429, {"Retry-After": "1"},
                               {"error": {"message": "Rate limit reached", "code": 429}}))
    engine = make_engine(fake_server, tmp_path, sleep=sleeps)
    events = await send(engine, "hi")
    retry = next(e for e in events if isinstance(e, ev.Retrying))
    assert retry.delay_s == 1.0 and retry.attempt == 1
    assert "429" in retry.reason or "rate" in retry.reason.lower()
    assert sleeps.delays == [1.0]
    assert isinstance(final(events), ev.Finished)


async def test_5xx_backs_off_exponentially_then_succeeds(fake_server, tmp_path):
    sleeps = Sleeps()
    fake_server.faults.extend([("status", 503, {}, "upstream busy"),
                               ("status", 502, {}, "bad gateway"), ("status", 500, {}, "oops")])
    engine = make_engine(fake_server, tmp_path, sleep=sleeps, retry_base_delay=0.01,
                         retry_max_delay=1.0)
    events = await send(engine, "hi")
    assert isinstance(final(events), ev.Finished)
    # equal jitter with jitter()=0.5: 0.75 x base x 2^(n-1)
    assert sleeps.delays == pytest.approx([0.0075, 0.015, 0.03])
    assert [e.attempt for e in events if isinstance(e, ev.Retrying)] == [1, 2, 3]


async def test_retries_are_bounded_and_the_user_message_is_kept(fake_server, tmp_path):
    fake_server.faults.extend([("status", 503, {}, "down")] * 10)
    engine = make_engine(fake_server, tmp_path, max_retries=2)
    events = await send(engine, "are you there?")
    assert isinstance(final(events), ev.Failed)
    assert len(fake_server.chat_requests) == 3
    stored = engine.store.messages(engine.conversation.id)
    assert stored[0].content == "are you there?" and stored[0].status == FAILED
    # The failed message is not sent again with the next one.
    fake_server.faults.clear()
    await send(engine, "second try")
    sent = [m["content"] for m in fake_server.chat_requests[-1].body["messages"]]
    assert "are you there?" not in sent and "second try" in sent


async def test_auth_error_fails_at_once(fake_server, tmp_path):
    fake_server.faults.append(("status", 401, {}, {"error": {"message": "Incorrect API key"}}))
    engine = make_engine(fake_server, tmp_path)
    events = await send(engine, "hi")
    assert isinstance(final(events), ev.Failed)
    assert "API key" in final(events).error
    assert len(fake_server.chat_requests) == 1
    assert "Retrying" not in kinds(events)


async def test_cut_stream_keeps_the_partial_reply(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "one two three four five six seven eight nine ten"
    fake_server.faults.append(("cut", 2))
    engine = make_engine(fake_server, tmp_path)
    events = await send(engine, "count")
    end = final(events)
    assert isinstance(end, ev.Failed) and end.message is not None
    assert end.message.status == PARTIAL and end.message.content
    stored = engine.store.messages(engine.conversation.id)
    assert [m.status for m in stored] == [COMPLETE, PARTIAL]


async def test_cancelled_reply_is_stored_as_partial(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "word " * 200
    engine = make_engine(fake_server, tmp_path)
    stream = engine.stream_reply("talk a lot")
    async for event in stream:
        if isinstance(event, ev.Delta):
            break  # the user pressed Esc
    await stream.aclose()
    stored = engine.store.messages(engine.conversation.id)
    assert [m.status for m in stored] == [COMPLETE, PARTIAL]
    assert stored[1].content.startswith("word")


async def test_stopped_before_any_text_withdraws_the_question(fake_server, tmp_path):
    fake_server.faults.append(("delay", 2))  # the model has not started answering
    engine = make_engine(fake_server, tmp_path)
    user = Message("user", "are you there?")
    stream = engine.stream_reply(user)
    async for event in stream:
        if isinstance(event, ev.WindowFitted):
            break  # Esc while waiting for the first token
    await stream.aclose()
    # The caller's record is the stored one; kept, but not sent again as if it were answered.
    assert user.id is not None and user.status == FAILED
    assert [m.status for m in engine.store.messages(engine.conversation.id)] == [FAILED]
    assert user not in engine.history()


async def test_pinned_message_is_stored(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "remember: the port is 8080")
    engine.set_pinned(engine.messages[0])
    assert engine.store.messages(engine.conversation.id)[0].pinned


async def test_connection_refused_retries_then_fails_clearly(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = make_engine(f"http://127.0.0.1:{port}/v1", tmp_path, max_retries=2)
    events = await send(engine, "anyone?")
    assert kinds(events).count("Retrying") == 2
    assert isinstance(final(events), ev.Failed)
    assert f"127.0.0.1:{port}" in final(events).error


async def test_manual_compaction_with_focus(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    for i in range(4):
        await send(engine, f"turn {i} about the database schema")
    events = [e async for e in engine.compact(reason="manual", focus="the schema")]
    assert kinds(events) == ["CompactionStarted", "CompactionFinished"]
    summary = engine.store.latest_summary(engine.conversation.id)
    assert summary.kind == "manual" and summary.focus == "the schema"
    request = [r for r in fake_server.chat_requests if is_summary_request(r.body)][-1]
    assert "Pay special attention to: the schema" in request.body["messages"][-1]["content"]
    edited = engine.edit_summary("用户在设计数据库 schema。")
    assert edited.kind == "edited"
    await send(engine, "next")
    system = fake_server.chat_requests[-1].body["messages"][0]["content"]
    assert "用户在设计数据库 schema。" in system


async def test_manual_compaction_with_nothing_to_fold_says_so(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "only one turn")
    events = [e async for e in engine.compact(reason="manual")]
    assert kinds(events) == ["CompactionFailed"]
    assert "nothing to compact" in events[0].error


async def test_store_survives_reopen(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "remember me")
    engine.store.close()
    with Store(tmp_path / "sessions.db") as store:
        assert [m.content for m in store.messages(engine.conversation.id)][0] == "remember me"


async def test_after_compaction_nothing_is_left_out_unsummarised(fake_server, tmp_path):
    """Big recent turns are not kept verbatim if the window would drop them unsummarised."""
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=4096, response_reserve=1024,
                         system_reserve=512)
    after_compaction: list[ev.WindowFitted] = []  # the request sent after each compaction
    for i in range(8):
        events = await send(engine, f"Paste {i}: " + "some long text with words " * 300)
        assert isinstance(final(events), ev.Finished)
        if "CompactionFinished" in kinds(events):
            after_compaction.append([e for e in events if isinstance(e, ev.WindowFitted)][-1])
    assert after_compaction and all(f.dropped_messages == 0 for f in after_compaction)
    assert engine.store.summaries(engine.conversation.id)
    covered = [m for m in engine.messages if m.covered]
    assert len(covered) >= 12


async def test_a_summary_request_that_overflows_is_rechunked(make_fake_server, tmp_path):
    fake = make_fake_server(limit=16384, flavor="llamacpp")
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, context_window=16384, keep_recent_turns=1)
    for i in range(3):
        await send(engine, f"part {i}: " + "a fairly long explanation of the design " * 130)
    # The server turns out smaller than we think (another model was loaded): the summary
    # request is too big for it, and the summariser must learn that and go in chunks.
    fake.limit = 1200
    before = len(fake.chat_requests)
    events = [e async for e in engine.compact(reason="manual")]
    assert kinds(events) == ["CompactionStarted", "CompactionFinished"]
    summary_requests = fake.chat_requests[before:]
    # The chat prefix plus the instruction was tried first; refused, the small prompt went
    # in chunks over the stored originals.
    assert summary_requests[0].overflowed and is_prefix_summary(summary_requests[0].body)
    assert not any(is_prefix_summary(r.body) for r in summary_requests[1:])
    assert len([r for r in summary_requests if r.status == 200]) >= 3  # chunks, then a merge
    stored = engine.store.messages(engine.conversation.id)
    assert [m.covered for m in stored] == [True] * 4 + [False] * 2


async def test_a_rate_limited_summariser_is_retried_not_abandoned(fake_server, tmp_path):
    summarising_replies(fake_server)
    sleeps = Sleeps()
    engine = make_engine(fake_server, tmp_path, sleep=sleeps, keep_recent_turns=1,
                         compact_threshold=0.1)
    await send(engine, "first question " + "x " * 200)
    fake_server.faults.append(("status", 429, {"Retry-After": "0.02"},
                               {"error": {"message": "slow down"}}))
    events = await send(engine, "second question " + "y " * 200)
    assert "CompactionFinished" in kinds(events) and "CompactionFailed" not in kinds(events)
    assert sleeps.delays == [0.02]
    assert engine.store.summaries(engine.conversation.id)


async def test_leaving_during_compaction_does_not_lock_the_next_round(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, compact_threshold=0.1)
    await send(engine, "first question " + "x " * 200)
    fake_server.faults.append(("delay", 0.3))  # the summary request is slow
    stream = engine.stream_reply("second question " + "y " * 200)
    started = False
    async for event in stream:
        if isinstance(event, ev.CompactionStarted):
            started = True
            break  # the user pressed Esc while the summary was being written
    await stream.aclose()
    assert started, "the second question did not start threshold compaction"
    events = await asyncio.wait_for(send(engine, "third question"), timeout=10)
    assert isinstance(final(events), ev.Finished)


async def test_new_settings_apply_from_the_next_request(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "hello")
    assert engine.budget.tokens == 4096 - 512 - 256
    engine.apply_settings(replace(engine.settings, response_reserve=1024, context_window=8192))
    assert engine.budget.tokens == 8192 - 1024 - 256
    await send(engine, "again")
    assert fake_server.chat_requests[-1].body["max_tokens"] == 1024


async def test_calibration_is_per_provider_and_model_and_resumes(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path, model="some-local-model")
    for i in range(4):
        await send(engine, f"一些中文和 English mixed {i} " * 20)
    factor = engine.counter.factor
    assert factor != 1.0 and engine.counter.source == "calibrated"
    factors = engine.store.get_meta(engine.conversation.id, "calibration")
    assert factors == {"openai:some-local-model": factor}
    # A resumed session starts calibrated; the same model name behind another protocol doesn't.
    again = make_engine(fake_server, tmp_path, model="some-local-model", store=engine.store,
                        conversation_id=engine.conversation.id)
    assert again.counter.factor == factor
    other = make_engine(fake_server, tmp_path, model="some-local-model", provider="ollama",
                        store=engine.store, conversation_id=engine.conversation.id)
    assert other.counter.factor == 1.0
