"""AnthropicProvider against the fake Messages API over real loopback sockets."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import httpx
import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import PREFIX_INSTRUCTION
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.messages import COMPLETE
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.providers.anthropic import LEAD_IN, AnthropicProvider, to_anthropic
from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatUsage
from jarvis_tui.core.providers.errors import (
    AuthError,
    ContextOverflow,
    NetworkError,
    ProviderError,
    RateLimited,
    RequestError,
    RetryableError,
    ServerError,
    StreamCut,
    classify,
)
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.system_message import SUMMARY_HEADER
from tests.engine_helpers import BASE, Sleeps, final, send
from tests.fake_anthropic import FakeAnthropic, count_input, error_body
from tests.fake_anthropic import text_of as content_text
from tests.fakeserver import CHUNK_CHARS, count_tokens
from tests.provider_helpers import huge, stream_events, text_of

MODEL = "claude-fake"
collect = partial(stream_events, model=MODEL)
KEY = "sk-ant-api03-secret-0123456789"
HELLO = [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "Tell me about context windows please"}]
# The two overflow bodies the real API sends for a 200k model, verbatim.
EPHEMERAL = {"type": "ephemeral"}
TOO_LONG = error_body("invalid_request_error", "prompt is too long: 208412 tokens > 200000 maximum")
TOO_LONG_WITH_RESERVE = error_body(
    "invalid_request_error", "input length and `max_tokens` exceed context limit: 198465 + 8192 "
    "> 200000, decrease input length or `max_tokens` and try again")


@pytest.fixture
def make_fake(make_fake_anthropic: Callable[..., FakeAnthropic]) -> Callable[..., FakeAnthropic]:
    return make_fake_anthropic


@pytest.fixture
def fake(make_fake: Callable[..., FakeAnthropic]) -> FakeAnthropic:
    return make_fake(api_key=KEY)








# --- streaming ---------------------------------------------------------------------------------

async def test_stream_text_usage_and_finish(fake: FakeAnthropic):
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO)
    rec = fake.message_requests[-1]
    assert rec.status == 200
    assert text_of(events) == rec.reply == "Reply 1: Tell me about context windows please"
    deltas = [e for e in events if isinstance(e, ChatDelta)]
    assert len(deltas) == -(-len(rec.reply) // CHUNK_CHARS)  # it really came in pieces
    # A first request: nothing to read back, the whole prompt written up to its last breakpoint.
    assert events[-2:] == [ChatUsage(rec.prompt_tokens, count_tokens(rec.reply), 0,
                                     rec.prompt_tokens), ChatDone("stop")]
    assert rec.path == "/v1/messages"
    assert rec.headers["x-api-key"] == KEY
    assert rec.headers["anthropic-version"] == "2023-06-01"
    assert rec.headers["content-type"] == "application/json"
    assert rec.body == {"model": MODEL, "max_tokens": 256, "stream": True,
                        "system": [{"type": "text", "text": "You are terse.",
                                    "cache_control": EPHEMERAL}],
                        "messages": [{"role": "user", "content": [
                            {"type": "text", "text": "Tell me about context windows please",
                             "cache_control": EPHEMERAL}]}]}


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_base_url_with_or_without_v1(make_fake: Callable[..., FakeAnthropic], suffix: str):
    fake = make_fake()
    async with AnthropicProvider(fake.base_url + suffix, version="2024-10-22") as provider:
        await collect(provider, HELLO)
    rec = fake.message_requests[-1]
    assert (rec.path, rec.status) == ("/v1/messages", 200)
    assert "x-api-key" not in rec.headers  # no key given, none sent
    assert rec.headers["anthropic-version"] == "2024-10-22"


async def test_every_system_message_goes_top_level(fake: FakeAnthropic):
    wire = [{"role": "system", "content": "You are Jarvis."},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "Summary of earlier turns: the user likes tea."},
            {"role": "user", "content": "what do I like?"}]
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        await collect(provider, wire)
    body = fake.message_requests[-1].body
    assert content_text(body["system"]) == (
        "You are Jarvis.\n\nSummary of earlier turns: the user likes tea.")
    assert [(m["role"], content_text(m["content"])) for m in body["messages"]] == [
        ("user", "hi\n\nwhat do I like?")]
    assert fake.message_requests[-1].prompt_tokens == count_input(body)


async def test_roles_merged_leading_assistant_and_tools_as_text(fake: FakeAnthropic):
    call = {"id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}
    wire = [{"role": "system", "content": "sys"},
            {"role": "assistant", "content": "Earlier answer."},
            {"role": "assistant", "content": "And more."},
            {"role": "user", "content": "First."},
            {"role": "user", "content": "Second."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "file text"},
            {"role": "assistant", "content": "   "},  # blank: the API refuses it
            {"role": "user", "content": "Thanks."}]
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, wire)
    rec = fake.message_requests[-1]
    assert rec.status == 200 and events[-1] == ChatDone("stop")  # the strict fake accepted it
    assert [(m["role"], content_text(m["content"])) for m in rec.body["messages"]] == [
        ("user", LEAD_IN),
        ("assistant", "Earlier answer.\n\nAnd more."),
        ("user", "First.\n\nSecond."),
        ("assistant", '[tool call] read_file({"path": "a.txt"})'),
        ("user", "[tool result] file text\n\nThanks.")]


def test_translation_of_a_system_only_request_still_has_a_user_turn():
    system, turns = to_anthropic([{"role": "system", "content": "only this"}])
    assert (system, turns) == ("only this", [{"role": "user", "content": LEAD_IN}])


async def test_the_fake_refuses_what_the_real_api_refuses(fake: FakeAnthropic):
    """So the translation above is really tested: untranslated input fails against the fake."""
    url = fake.base_url + "/v1/messages"
    head = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    cases = [
        ([{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}],
         'messages: first message must use the "user" role'),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
         'messages: roles must alternate between "user" and "assistant", but found multiple '
         '"user" roles in a row'),
        (HELLO, 'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'),
        ([{"role": "user", "content": " "}, {"role": "assistant", "content": "x"}],
         "messages.0: all messages must have non-empty content except for the optional final "
         "assistant message")]
    async with httpx.AsyncClient() as client:
        for messages, said in cases:
            resp = await client.post(url, headers=head, json={
                "model": MODEL, "max_tokens": 10, "messages": messages})
            assert resp.status_code == 400
            assert resp.json() == error_body("invalid_request_error", said)
            assert isinstance(classify(400, resp.text), RequestError)
        resp = await client.post(url, headers=head, json={
            "model": MODEL, "max_tokens": 10, "stream_options": {},
            "messages": [{"role": "user", "content": "a"}]})
        assert resp.json()["error"]["message"] == "stream_options: Extra inputs are not permitted"
        resp = await client.post(url, headers={"x-api-key": KEY}, json={})
        assert resp.json()["error"]["message"] == "anthropic-version: header is required"


async def test_thinking_and_signature_deltas_are_not_reply_text(fake: FakeAnthropic):
    fake.thinking = "Let me think about windows first."
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO)
    assert text_of(events) == fake.message_requests[-1].reply
    assert "think" not in text_of(events)




async def test_max_tokens_cut_finishes_with_length(fake: FakeAnthropic):
    fake.reply_fn = lambda body: "one two three four five six seven eight nine ten"
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO, max_tokens=3)
        done = await provider.complete(HELLO, model=MODEL, max_tokens=3)
    assert text_of(events) == done.text == "one two three"
    assert events[-1] == ChatDone("length") and done.finish_reason == "length"


async def test_max_tokens_is_always_sent(fake: FakeAnthropic):
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        await collect(provider, HELLO, max_tokens=0)
    assert fake.message_requests[-1].body["max_tokens"] == 1


async def test_empty_reply(fake: FakeAnthropic):
    fake.faults.append(("empty",))
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO)
    prompt = fake.message_requests[-1].prompt_tokens
    assert events == [ChatUsage(prompt, 0, 0, prompt), ChatDone("stop")]


async def test_malformed_line_is_skipped(fake: FakeAnthropic):
    fake.faults.append(("malformed",))
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO)
    assert text_of(events) == fake.message_requests[-1].reply
    assert events[-1] == ChatDone("stop")


async def test_cut_stream_raises_stream_cut_after_the_first_deltas(fake: FakeAnthropic):
    fake.faults.append(("cut", 2))
    got: list = []
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(StreamCut) as caught:
            await collect(provider, HELLO, sink=got)
    reply = fake.message_requests[-1].reply
    assert got == [ChatDelta(reply[:CHUNK_CHARS]), ChatDelta(reply[CHUNK_CHARS:2 * CHUNK_CHARS])]
    assert KEY not in str(caught.value)


@pytest.mark.parametrize("error, kind, status", [
    ({"type": "overloaded_error", "message": "Overloaded"}, ServerError, 529),
    ({"type": "api_error", "message": "Internal server error"}, ServerError, 500),
    ({"type": "rate_limit_error", "message": "Number of request tokens has exceeded your "
      "per-minute rate limit"}, RateLimited, 429),
    ({"type": "invalid_request_error", "message": "prompt is too long: 5000 tokens > 4096 "
      "maximum"}, ContextOverflow, 400)])
async def test_error_event_mid_reply_is_classified(fake: FakeAnthropic, error: dict,
                                                   kind: type, status: int):
    fake.faults.append(("stream_error", 1, {"type": "error", "error": error}))
    got: list = []
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(ProviderError) as caught:
            await collect(provider, HELLO, sink=got)
    assert type(caught.value) is kind and caught.value.status == status
    assert len(got) == 1 and isinstance(got[0], ChatDelta)
    assert error["message"] in caught.value.message
    if kind is ContextOverflow:
        assert (caught.value.limit, caught.value.requested) == (4096, 5000)


async def test_json_answer_to_a_stream_request(fake: FakeAnthropic):
    fake.faults.append(("status", 200, {}, {
        "type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "all at "}, {"type": "text", "text": "once"}],
        "usage": {"input_tokens": 12, "output_tokens": 3}}))
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, HELLO)
    assert events == [ChatDelta("all at once"), ChatUsage(12, 3), ChatDone("stop")]


# --- errors before the stream ------------------------------------------------------------------

async def test_overflow_from_the_fake_names_its_limit(make_fake: Callable[..., FakeAnthropic]):
    fake = make_fake(limit=300)
    async with AnthropicProvider(fake.base_url) as provider:
        with pytest.raises(ContextOverflow) as prompt_alone:
            await collect(provider, huge(400))
        with pytest.raises(ContextOverflow) as with_reserve:
            await collect(provider, HELLO, max_tokens=290)
        with pytest.raises(ContextOverflow) as one_shot:
            await provider.complete(huge(400), model=MODEL, max_tokens=10)
    big, small, _ = fake.message_requests
    assert all(r.overflowed and r.status == 400 for r in fake.message_requests)
    assert (prompt_alone.value.limit, prompt_alone.value.requested) == (300, big.prompt_tokens)
    assert with_reserve.value.limit == 300
    assert with_reserve.value.requested == small.prompt_tokens
    assert with_reserve.value.total_requested == small.prompt_tokens + 290
    assert one_shot.value.limit == 300


@pytest.mark.parametrize("body, requested, total", [
    (TOO_LONG, 208412, 208412), (TOO_LONG_WITH_RESERVE, 198465, 198465 + 8192)])
async def test_real_overflow_bodies_give_the_200k_limit(fake: FakeAnthropic, body: dict,
                                                        requested: int, total: int):
    fake.faults.append(("status", 400, {}, body))
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, HELLO)
    err = caught.value
    assert (err.status, err.limit, err.requested, err.total_requested) == (
        400, 200000, requested, total)


async def test_401_says_check_the_key_but_never_shows_it(make_fake: Callable[..., FakeAnthropic]):
    fake = make_fake(api_key="sk-ant-the-right-one")
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(AuthError) as caught:
            await collect(provider, HELLO)
    assert caught.value.status == 401
    assert "invalid x-api-key" in caught.value.message
    assert "Check your API key" in caught.value.message
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert KEY not in caught.value.message and KEY not in repr(provider)


async def test_429_honours_retry_after(fake: FakeAnthropic):
    fake.faults.append(("status", 429, {"retry-after": "7"}, error_body(
        "rate_limit_error", "This request would exceed your organization's rate limit of "
        "50,000 input tokens per minute.")))
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(RateLimited) as caught:
            await collect(provider, HELLO)
        assert text_of(await collect(provider, HELLO)).startswith("Reply 2:")  # fault spent
    assert caught.value.retry_after == 7.0
    assert "50,000 input tokens per minute" in caught.value.message


@pytest.mark.parametrize("status, body", [
    (529, error_body("overloaded_error", "Overloaded")),
    (500, error_body("api_error", "Internal server error"))])
async def test_overloaded_and_api_errors_are_retryable(fake: FakeAnthropic, status: int,
                                                       body: dict):
    fake.faults.extend([("status", status, {}, body)] * 2)
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        with pytest.raises(ServerError) as streamed:
            await collect(provider, HELLO)
        with pytest.raises(ServerError) as one_shot:
            await provider.complete(HELLO, model=MODEL, max_tokens=10)
    for err in (streamed.value, one_shot.value):
        assert isinstance(err, RetryableError) and err.status == status
        assert body["error"]["message"] in err.message


async def test_the_key_never_appears_in_any_error(make_fake: Callable[..., FakeAnthropic]):
    fake = make_fake(api_key=KEY)
    echo = error_body("invalid_request_error", f"bad header x-api-key: {KEY}")
    fake.faults.extend([
        ("status", 400, {}, echo), ("status", 401, {}, error_body("authentication_error", KEY)),
        ("status", 429, {}, echo), ("status", 529, {}, echo),
        ("stream_error", 1, {"type": "error", "error": {"type": "api_error", "message": KEY}}),
        ("cut", 1)])
    errors: list[ProviderError] = []
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        for _ in range(6):
            with pytest.raises(ProviderError) as caught:
                await collect(provider, HELLO)
            errors.append(caught.value)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with AnthropicProvider(closed, KEY, connect_timeout=2) as provider:
        with pytest.raises(NetworkError) as caught:
            await provider.complete(HELLO, model=MODEL, max_tokens=5)
        errors.append(caught.value)
    assert [type(e).__name__ for e in errors] == [
        "RequestError", "AuthError", "RateLimited", "ServerError", "ServerError", "StreamCut",
        "NetworkError"]
    for err in errors:
        assert KEY not in str(err) and KEY not in err.message and KEY not in err.body


async def test_read_timeout_is_a_network_error(fake: FakeAnthropic):
    fake.faults.append(("delay", 30))
    async with AnthropicProvider(fake.base_url, KEY, timeout=0.3) as provider:
        with pytest.raises(NetworkError) as caught:
            await collect(provider, HELLO)
    assert "read timeout" in caught.value.message and fake.base_url in caught.value.message


# --- one-shot, CJK, discovery ------------------------------------------------------------------

async def test_complete_returns_text_usage_and_finish(fake: FakeAnthropic):
    fake.reply_fn = lambda body: "A summary: goals, decisions, names."
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        done = await provider.complete(HELLO, model=MODEL, max_tokens=100)
    rec = fake.message_requests[-1]
    assert done.text == "A summary: goals, decisions, names."
    assert (done.prompt_tokens, done.completion_tokens) == (rec.prompt_tokens,
                                                            count_tokens(done.text))
    assert done.finish_reason == "stop"
    # Written only up to the system block: the one-off request's newest turn is not marked.
    assert done.cached_tokens == 0 and 0 < done.cache_write_tokens < rec.prompt_tokens
    assert isinstance(rec.body["messages"][-1]["content"], str)
    assert rec.body["stream"] is False
    assert rec.body["system"] == [{"type": "text", "text": "You are terse.",
                                   "cache_control": EPHEMERAL}]


async def test_chinese_round_trips_intact(fake: FakeAnthropic):
    question = "请总结我们关于上下文窗口的讨论，并列出未解决的问题。"
    answer = "好的：上下文窗口满了也不会崩溃，旧的对话会被摘要保存。🚀 还有两个问题。"
    fake.reply_fn = lambda body: answer
    messages = [{"role": "system", "content": "用中文回答。"},
                {"role": "user", "content": question}]
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        events = await collect(provider, messages)
        done = await provider.complete(messages, model=MODEL, max_tokens=200)
    assert text_of(events) == answer == done.text
    first, second = fake.message_requests
    assert content_text(first.body["system"]) == "用中文回答。"
    assert content_text(first.body["messages"][0]["content"]) == question
    assert ChatUsage(first.prompt_tokens, count_tokens(answer), 0, first.prompt_tokens) in events
    assert second.prompt_tokens == first.prompt_tokens
    # complete() is one-off (a summary's): its only breakpoint is the system block, so that is
    # what it reads back, and it writes nothing (its newest turn would never be read again).
    assert isinstance(second.body["messages"][0]["content"], str)
    assert done.cache_write_tokens == 0 and 0 < done.cached_tokens < second.prompt_tokens


async def test_detect_context_window_says_nothing(fake: FakeAnthropic):
    async with AnthropicProvider(fake.base_url, KEY) as provider:
        assert await provider.detect_context_window(MODEL) is None
        assert provider.name == "anthropic" and provider.truncates_silently is False


def test_the_fake_runs_by_hand():
    proc = subprocess.Popen([sys.executable, "-m", "tests.fake_anthropic", "--port", "0",
                             "--limit", "4096"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        url = banner.split(" at ")[1].split()[0]
        resp = httpx.post(url + "/v1/messages", headers={"anthropic-version": "2023-06-01"},
                          json={"model": MODEL, "max_tokens": 20,
                                "messages": [{"role": "user", "content": "hello there"}]})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "context 4096 tokens" in banner
    assert resp.json()["content"] == [{"type": "text", "text": "Reply 1: hello there"}]


# --- the engine end to end ---------------------------------------------------------------------

async def test_engine_overflows_learns_the_limit_and_keeps_every_message(
        make_fake: Callable[..., FakeAnthropic], tmp_path):
    fake = make_fake(limit=2048, api_key=KEY)

    def reply(body: dict) -> str:
        if not body.get("stream"):  # summaries never go through the (streaming) chat path
            material = content_text(body["messages"][-1]["content"])
            return "Summary: " + " ".join(material.split()[:40])
        return fake.default_reply(body) + " more words in the answer" * 2

    fake.reply_fn = reply
    # We believe the window is 8192 and never reach the threshold: only layer 3 can save us.
    settings = replace(BASE, provider="anthropic", base_url=fake.base_url, api_key=KEY,
                       context_window=8192, compact_threshold=1.0, keep_recent_turns=2)
    provider = make_provider(settings)  # the factory the app uses
    assert isinstance(provider, AnthropicProvider)
    engine = Engine(settings, Store(tmp_path / "sessions.db"), provider, sleep=Sleeps(),
                    jitter=lambda: 0.5)
    seen: list[ev.Event] = []
    try:
        for i in range(12):
            events = await send(engine, f"message {i} " + "lorem ipsum dolor sit amet " * 40)
            assert isinstance(final(events), ev.Finished), (i, events[-1])
            seen += events
    finally:
        await provider.aclose()
    assert ev.ContextLimitLearned(2048, 8192) in seen
    assert any(isinstance(e, ev.CompactionFinished) and e.reason == "overflow" for e in seen)
    assert engine.context_window == 2048
    assert engine.store.get_meta(engine.conversation.id, "context_limit") == 2048
    stored = engine.store.messages(engine.conversation.id)
    assert len(stored) == 24 and all(m.status == COMPLETE for m in stored)
    assert any(m.covered for m in stored)
    requests = fake.message_requests
    # Only overflows were refused: roles, headers and fields were right every time.
    assert any(r.overflowed for r in requests)
    assert all(r.status == 200 or r.overflowed for r in requests)
    summaries = [r for r in requests if not r.body.get("stream")]
    assert summaries and all(r.body["stream"] is False for r in summaries)
    last = requests[-1].body
    system = content_text(last["system"])
    assert SUMMARY_HEADER in system and engine.summary.content in system
    assert last["messages"][0]["role"] == "user"
    assert last["messages"][-1]["role"] == "user"
    assert content_text(last["messages"][-1]["content"]).startswith("message 11 ")


async def test_the_engine_reads_anthropic_s_cache_for_chat_and_summary(
        make_fake: Callable[..., FakeAnthropic], tmp_path):
    """Through the engine: each chat request reads back the one before it, and the summary
    request (the chat prefix plus one instruction) reads back almost all of its prompt."""
    fake = make_fake(limit=100_000, api_key=KEY)
    settings = replace(BASE, provider="anthropic", base_url=fake.base_url, api_key=KEY,
                       context_window=8192, keep_recent_turns=1)
    provider = make_provider(settings)
    engine = Engine(settings, Store(tmp_path / "sessions.db"), provider, sleep=Sleeps(),
                    jitter=lambda: 0.5)
    usages: list[ev.Usage] = []
    try:
        for i in range(4):
            events = await send(engine, f"question {i}: " + "tell me about caching " * 30)
            assert isinstance(final(events), ev.Finished)
            usages += [e for e in events if isinstance(e, ev.Usage)]
        compaction = [e async for e in engine.compact(reason="manual")]
    finally:
        await provider.aclose()
    for before, after in zip(usages, usages[1:], strict=False):
        assert after.cached_tokens >= before.prompt_tokens - 1 > 0
    finished = next(e for e in compaction if isinstance(e, ev.CompactionFinished))
    assert finished.cached_prefix
    summary = fake.message_requests[-1]
    assert summary.body["stream"] is False
    row = next(r for r in engine.store.usage_rows(engine.conversation.id) if r.kind == "summary")
    # All but the instruction came from the cache.
    assert row.prompt_tokens - row.cached_tokens <= count_tokens(PREFIX_INSTRUCTION) + 8
