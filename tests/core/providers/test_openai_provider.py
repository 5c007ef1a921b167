"""OpenAIProvider against the fake server over real loopback sockets."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from functools import partial

import pytest

from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatUsage
from jarvis_tui.core.providers.errors import (
    AuthError,
    ContextOverflow,
    NetworkError,
    RateLimited,
    RequestError,
    ServerError,
    StreamCut,
)
from jarvis_tui.core.providers.openai import OpenAIProvider
from tests.fakeserver import CHUNK_CHARS, FLAVORS, FakeProvider, count_tokens
from tests.provider_helpers import huge, stream_events, text_of

MODEL = "fake-model"
collect = partial(stream_events, model=MODEL)
HELLO = [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "Tell me about context windows please"}]








async def test_stream_deltas_join_into_the_reply_and_usage_matches(fake_server: FakeProvider):
    async with OpenAIProvider(fake_server.base_url, "sk-test") as provider:
        events = await collect(provider, HELLO)
    rec = fake_server.chat_requests[-1]
    assert text_of(events) == rec.reply == "Reply 1: Tell me about context windows please"
    deltas = [e for e in events if isinstance(e, ChatDelta)]
    assert len(deltas) == -(-len(rec.reply) // CHUNK_CHARS)  # it really came in pieces
    # A first request: nothing of it was in the cache, and OpenAI says 0, not nothing.
    assert events[-2] == ChatUsage(rec.prompt_tokens, count_tokens(rec.reply), 0)
    assert events[-1] == ChatDone("stop")
    assert rec.body["stream"] is True
    assert rec.body["stream_options"] == {"include_usage": True}
    assert rec.body["max_tokens"] == 256
    assert rec.body["messages"] == HELLO
    assert rec.headers["Authorization"] == "Bearer sk-test"


async def test_no_key_sends_no_authorization(fake_server: FakeProvider):
    async with OpenAIProvider(fake_server.base_url + "/") as provider:
        await collect(provider, HELLO)
    rec = fake_server.chat_requests[-1]
    assert "Authorization" not in rec.headers
    assert rec.path == "/v1/chat/completions"  # trailing slash on base_url stripped


async def test_complete_returns_text_and_usage(fake_server: FakeProvider):
    fake_server.reply_fn = lambda body: "A summary: goals, decisions, names."
    async with OpenAIProvider(fake_server.base_url) as provider:
        done = await provider.complete(HELLO, model=MODEL, max_tokens=100)
    rec = fake_server.chat_requests[-1]
    assert done.text == "A summary: goals, decisions, names."
    assert done.prompt_tokens == rec.prompt_tokens
    assert done.completion_tokens == count_tokens(done.text)
    assert done.finish_reason == "stop"
    assert rec.body["stream"] is False


async def test_max_tokens_cuts_the_reply_with_finish_length(fake_server: FakeProvider):
    fake_server.reply_fn = lambda body: "one two three four five six seven eight nine ten"
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO, max_tokens=3)
    assert text_of(events) == "one two three"
    assert events[-1] == ChatDone("length")


async def test_litellm_proxy_streams_an_overflow_as_an_empty_reply_that_stopped(
        make_fake_server: Callable[..., FakeProvider]):
    """Nothing in the stream says it was refused: the provider hands on an empty reply, and
    the engine, which knows whether the request may be over the window, checks it."""
    fake = make_fake_server(limit=300, flavor="litellm")
    async with OpenAIProvider(fake.base_url) as provider:
        events = await collect(provider, huge(400), max_tokens=64)
        assert text_of(events) == "" and events[-1] == ChatDone("stop")
        with pytest.raises(ContextOverflow) as caught:  # unstreamed, it says so
            await provider.complete(huge(400), model="m", max_tokens=1)
    assert caught.value.limit == 300
    assert caught.value.requested == fake.chat_requests[-1].prompt_tokens


@pytest.mark.parametrize("flavor", [f for f in FLAVORS if f != "litellm"])  # above
async def test_each_flavor_overflow_raises_context_overflow(
        flavor: str, make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(limit=300, flavor=flavor)
    async with OpenAIProvider(fake.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, huge(400))
    rec = fake.chat_requests[-1]
    assert rec.overflowed
    assert caught.value.status == rec.status
    if flavor == "llamacpp_old":
        assert rec.status == 500 and caught.value.limit is None  # that era named no numbers
    else:
        assert caught.value.limit == 300
        assert caught.value.requested == rec.prompt_tokens


async def test_llama_cpp_python_streamed_overflow_is_an_empty_200(
        make_fake_server: Callable[..., FakeProvider]):
    """Its streamed refusal is a 200 whose stream just ends; asked again unstreamed for one
    token, it says the numbers, and that is what the engine gets."""
    fake = make_fake_server(limit=300, flavor="llama_cpp_python")
    async with OpenAIProvider(fake.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, huge(400), max_tokens=64)
    streamed, probe = fake.chat_requests
    assert streamed.body["stream"] is True and streamed.status == 200 and streamed.overflowed
    assert probe.body["stream"] is False and probe.body["max_tokens"] == 1
    assert "stream_options" not in probe.body
    assert probe.body["messages"] == streamed.body["messages"]
    assert caught.value.limit == 300 and caught.value.requested == streamed.prompt_tokens


async def test_the_refusal_probe_survives_a_connection_dropped_under_it(
        make_fake_server: Callable[..., FakeProvider]):
    """Found against the real server: the probe went out on a pooled connection the server was
    closing, failed as a network error, and the overflow was retried as a cut stream until the
    round failed. The probe is asked again on a fresh connection."""
    fake = make_fake_server(limit=300, flavor="llama_cpp_python")
    fake.faults.extend([None, ("hangup",)])  # the stream as usual, then the probe dropped
    async with OpenAIProvider(fake.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, huge(400), max_tokens=64)
    assert [(r.body["stream"], r.status) for r in fake.chat_requests] == [
        (True, 200), (False, 0), (False, 400)]
    assert caught.value.limit == 300


async def test_a_stream_cut_before_its_first_event_stays_a_cut_when_it_fits(
        fake_server: FakeProvider):
    fake_server.faults.append(("cut", 0))
    async with OpenAIProvider(fake_server.base_url) as provider:
        with pytest.raises(StreamCut):
            await collect(provider, HELLO)
    assert [r.body["stream"] for r in fake_server.chat_requests] == [True, False]


async def test_overflow_counts_max_tokens_where_the_server_does(
        make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(limit=1000, flavor="vllm")
    async with OpenAIProvider(fake.base_url) as provider:
        await collect(provider, HELLO, max_tokens=900)  # fits
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, HELLO, max_tokens=995)
    prompt = fake.chat_requests[-1].prompt_tokens
    assert caught.value.requested == prompt
    assert caught.value.total_requested == prompt + 995


async def test_complete_overflow_raises_too(make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(limit=200, flavor="llamacpp")
    async with OpenAIProvider(fake.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await provider.complete(huge(300), model=MODEL, max_tokens=50)
    assert caught.value.limit == 200


async def test_429_raises_rate_limited_with_retry_after(fake_server: FakeProvider):
    fake_server.faults.append(("status", 429, {"Retry-After": "1"}, {"error": {
        "message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}))
    async with OpenAIProvider(fake_server.base_url) as provider:
        with pytest.raises(RateLimited) as caught:
            await collect(provider, HELLO)
        assert caught.value.retry_after == 1.0
        assert "Rate limit reached for requests" in caught.value.message
        # The fault is spent: the next request goes through.
        assert text_of(await collect(provider, HELLO)).startswith("Reply 2:")


async def test_503_raises_server_error(fake_server: FakeProvider):
    fake_server.faults.append(("status", 503, {"Retry-After": "2"},
                               "<html><title>503 Service Unavailable</title></html>"))
    async with OpenAIProvider(fake_server.base_url) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(HELLO, model=MODEL, max_tokens=10)
    assert caught.value.retry_after == 2.0
    assert caught.value.message == "Server error (503): 503 Service Unavailable"


async def test_401_names_the_key_problem_but_never_the_key(fake_server: FakeProvider):
    key = "sk-secret-0123456789"
    fake_server.faults.append(("status", 401, {}, {"error": {
        "message": f"Invalid API key: {key}", "type": "invalid_request_error"}}))
    async with OpenAIProvider(fake_server.base_url, key) as provider:
        with pytest.raises(AuthError) as caught:
            await collect(provider, HELLO)
    assert "Check your API key" in caught.value.message
    assert key not in caught.value.message and key not in caught.value.body
    assert key not in repr(provider)


async def test_cut_stream_raises_stream_cut_after_the_first_deltas(fake_server: FakeProvider):
    fake_server.faults.append(("cut", 2))
    got: list = []
    async with OpenAIProvider(fake_server.base_url) as provider:
        with pytest.raises(StreamCut):
            await collect(provider, HELLO, sink=got)
    reply = fake_server.chat_requests[-1].reply
    assert got == [ChatDelta(reply[:CHUNK_CHARS]), ChatDelta(reply[CHUNK_CHARS:2 * CHUNK_CHARS])]


async def test_malformed_line_is_skipped(fake_server: FakeProvider):
    fake_server.faults.append(("malformed",))
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO)
    assert text_of(events) == fake_server.chat_requests[-1].reply
    assert events[-1] == ChatDone("stop")


async def test_error_inside_the_stream_is_classified(fake_server: FakeProvider):
    fake_server.faults.append(("stream_error", 1, {"error": {
        "code": 400, "message": "request (5000 tokens) exceeds the available context size "
                                "(4096 tokens), try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}))
    got: list = []
    async with OpenAIProvider(fake_server.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, HELLO, sink=got)
    assert len(got) == 1 and isinstance(got[0], ChatDelta)
    assert (caught.value.limit, caught.value.requested) == (4096, 5000)


async def test_empty_reply(fake_server: FakeProvider):
    fake_server.faults.append(("empty",))
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO)
    rec = fake_server.chat_requests[-1]
    assert events == [ChatUsage(rec.prompt_tokens, 0, 0), ChatDone("stop")]


async def test_server_without_usage_chunk(fake_server: FakeProvider):
    fake_server.stream_usage = False
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO)
        again = await collect(provider, HELLO)
    assert not any(isinstance(e, ChatUsage) for e in events + again)
    assert events[-1] == again[-1] == ChatDone("stop")
    # It had no counting endpoint: asked once (a 404), never again.
    asked = [r for r in fake_server.requests if "tokenize" in r.path]
    assert [r.status for r in asked] == [404]


async def test_llama_cpp_python_counts_what_it_did_not_stream(
        make_fake_server: Callable[..., FakeProvider]):
    """llama-cpp-python streams no usage; its own tokenizer counts the prompt instead, so
    the gauge can still be calibrated to the model."""
    fake = make_fake_server(flavor="llama_cpp_python")
    async with OpenAIProvider(fake.base_url) as provider:
        events = await collect(provider, HELLO)
    rec = fake.chat_requests[-1]
    assert "stream_options" in rec.body  # asked for usage, got none
    assert events[-2:] == [ChatUsage(rec.prompt_tokens, count_tokens(rec.reply)),
                           ChatDone("stop")]
    assert text_of(events) == rec.reply


async def test_llamacpp_usage_in_the_finishing_chunk(
        make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(flavor="llamacpp")
    async with OpenAIProvider(fake.base_url) as provider:
        events = await collect(provider, HELLO)
    rec = fake.chat_requests[-1]
    assert events[-2:] == [ChatUsage(rec.prompt_tokens, rec.completion_tokens, 0),
                           ChatDone("stop")]


async def test_stream_options_rejected_then_dropped(fake_server: FakeProvider):
    fake_server.faults.append(("status", 400, {}, {"error": {
        "message": "Unrecognized request argument supplied: stream_options",
        "type": "invalid_request_error"}}))
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO)
        await collect(provider, HELLO)
    first, second, third = fake_server.chat_requests
    assert "stream_options" in first.body
    assert "stream_options" not in second.body and "stream_options" not in third.body
    assert text_of(events) == second.reply


async def test_server_that_ignores_stream_true(fake_server: FakeProvider):
    fake_server.faults.append(("status", 200, {}, {
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "all at once"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}}))
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, HELLO)
    assert events == [ChatDelta("all at once"), ChatUsage(12, 3), ChatDone("stop")]


async def test_connection_refused_is_a_network_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    async with OpenAIProvider(base, "sk-hidden", connect_timeout=2) as provider:
        with pytest.raises(NetworkError) as caught:
            await collect(provider, HELLO)
        with pytest.raises(NetworkError):
            await provider.complete(HELLO, model=MODEL, max_tokens=5)
    assert caught.value.message == (f"Could not connect to {base}: connection refused (is the "
                                    "server running?).")
    assert "Traceback" not in caught.value.message and "sk-hidden" not in caught.value.message


async def test_read_timeout_is_a_network_error(fake_server: FakeProvider):
    fake_server.faults.append(("delay", 30))
    async with OpenAIProvider(fake_server.base_url, timeout=0.3) as provider:
        with pytest.raises(NetworkError) as caught:
            await collect(provider, HELLO)
    assert "read timeout" in caught.value.message
    assert fake_server.base_url in caught.value.message


async def test_bad_base_url_is_a_request_error():
    async with OpenAIProvider("localhost:8080/v1") as provider:
        with pytest.raises(RequestError) as caught:
            await collect(provider, HELLO)
    assert "http://127.0.0.1:8080/v1" in caught.value.message


async def test_chinese_round_trips_intact(fake_server: FakeProvider):
    question = "请总结我们关于上下文窗口的讨论，并列出未解决的问题。"
    answer = "好的：上下文窗口满了也不会崩溃，旧的对话会被摘要保存。🚀 还有两个问题。"
    fake_server.reply_fn = lambda body: answer
    messages = [{"role": "user", "content": question}]
    async with OpenAIProvider(fake_server.base_url) as provider:
        events = await collect(provider, messages)
        done = await provider.complete(messages, model=MODEL, max_tokens=200)
    assert text_of(events) == answer == done.text
    first, second = fake_server.chat_requests
    assert first.body["messages"][0]["content"] == question
    usage = [e for e in events if isinstance(e, ChatUsage)]
    assert usage == [ChatUsage(first.prompt_tokens, count_tokens(answer), 0)]
    assert second.prompt_tokens == first.prompt_tokens
    # Asked the same again: all of it came from the cache.
    assert done.cached_tokens == second.cached_tokens == second.prompt_tokens


async def test_concurrent_streams(fake_server: FakeProvider):
    async with OpenAIProvider(fake_server.base_url) as provider:
        results = await asyncio.gather(*[
            collect(provider, [{"role": "user", "content": f"question number {i}"}])
            for i in range(4)])
    echoed = sorted(text_of(r).split(": ", 1)[1] for r in results)
    assert echoed == [f"question number {i}" for i in range(4)]
    assert len(fake_server.chat_requests) == 4


async def test_the_bundled_model_is_asked_for_summaries_at_a_low_temperature(
        fake_server: FakeProvider):
    """Summaries (one-shot requests) to the local model carry its low temperature; its chat
    replies and every other model's requests leave sampling to the server."""
    from dataclasses import replace

    from jarvis_tui.core.providers import make_provider
    from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LOCAL_SUMMARY_SAMPLING
    from tests.engine_helpers import BASE

    for model in (LOCAL_MODEL_NAME, "fake-model"):
        settings = replace(BASE, base_url=fake_server.base_url, model=model)
        async with make_provider(settings) as provider:
            await provider.complete(HELLO, model=model, max_tokens=8)
            await collect(provider, HELLO)
    local_summary, local_chat, other_summary, other_chat = (
        r.body for r in fake_server.chat_requests)
    assert local_summary["temperature"] == LOCAL_SUMMARY_SAMPLING["temperature"]
    assert all("temperature" not in body for body in (local_chat, other_summary, other_chat))
