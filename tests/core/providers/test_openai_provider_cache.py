"""What an OpenAI-compatible server read from its prompt cache, as OpenAIProvider reports it:
the real provider against the fake over loopback, each flavour in its own server's shape."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.providers.base import ChatUsage
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.providers.usage import openai_usage
from tests.engine_helpers import make_engine, send
from tests.fakeserver import PRIMING, FakeProvider, prompt_tokens
from tests.provider_helpers import shared, stream_events, text_of

MODEL = "fake-model"
collect = partial(stream_events, model=MODEL)
FIRST = [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "Where does the collector keep its deploy log?"}]
STREAM_OPTIONS_REFUSED = ("status", 400, {}, {"error": {
    "message": "Unrecognized request argument supplied: stream_options",
    "type": "invalid_request_error"}})


def grown(messages: list[dict], reply: str, question: str) -> list[dict]:
    return [*messages, {"role": "assistant", "content": reply},
            {"role": "user", "content": question}]


def usage_of(events: list) -> ChatUsage:
    return next(e for e in events if isinstance(e, ChatUsage))


@pytest.mark.parametrize("flavor", ["openai", "deepseek", "llamacpp"])
async def test_a_growing_conversation_reads_its_earlier_prompt_back(
        flavor: str, make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(flavor=flavor)
    async with OpenAIProvider(fake.base_url) as provider:
        first = await collect(provider, FIRST)
        second_messages = grown(FIRST, text_of(first), "And which port does it listen on?")
        second = await collect(provider, second_messages)
        third_messages = grown(second_messages, text_of(second), "Thanks, that is all.")
        done = await provider.complete(third_messages, model=MODEL, max_tokens=50)
    one, two, three = fake.chat_requests
    assert usage_of(first) == ChatUsage(one.prompt_tokens, one.completion_tokens, 0)
    read = shared(prompt_tokens(FIRST), prompt_tokens(second_messages))
    # All of the first prompt but its priming, which the next turn's header does not repeat.
    assert read == one.prompt_tokens - len(PRIMING)
    assert usage_of(second) == ChatUsage(two.prompt_tokens, two.completion_tokens, read)
    assert (done.prompt_tokens, done.completion_tokens) == (three.prompt_tokens,
                                                            three.completion_tokens)
    assert done.cached_tokens == shared(prompt_tokens(second_messages),
                                        prompt_tokens(third_messages)) > read
    assert done.cache_write_tokens is None  # OpenAI-compatible servers bill no cache writes


@pytest.mark.parametrize("flavor, third_read", [
    ("openai", "all of it"),  # every prefix it computed lately
    ("llamacpp", "what it shares with the second"),  # one slot: the second evicted the first
])
async def test_llamacpp_remembers_only_the_last_prompt(
        flavor: str, third_read: str, make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(flavor=flavor)
    alpha = [{"role": "user", "content": "alpha " * 60}]
    beta = [{"role": "user", "content": "beta " * 60}]
    async with OpenAIProvider(fake.base_url) as provider:
        for messages in (alpha, beta, alpha):
            await collect(provider, messages)
    third = fake.chat_requests[-1]
    if third_read == "all of it":
        assert third.cached_tokens == third.prompt_tokens == len(prompt_tokens(alpha))
    else:
        assert third.cached_tokens == shared(prompt_tokens(beta), prompt_tokens(alpha))
        assert third.cached_tokens < len(prompt_tokens(alpha)) // 10


async def test_llamacpp_evaluates_the_last_token_of_a_wholly_cached_prompt(
        make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(flavor="llamacpp")
    async with OpenAIProvider(fake.base_url) as provider:
        await collect(provider, FIRST)
        again = await collect(provider, FIRST)
    rec = fake.chat_requests[-1]
    assert usage_of(again) == ChatUsage(rec.prompt_tokens, rec.completion_tokens,
                                        rec.prompt_tokens - 1)


async def test_llamacpp_timings_alone_say_the_prompt_and_the_cache(
        make_fake_server: Callable[..., FakeProvider]):
    """Behind a proxy that refuses stream_options there is no usage chunk, but llama-server
    still sends its timings: cache_n + prompt_n is the whole prompt."""
    fake = make_fake_server(flavor="llamacpp")
    fake.faults.append(STREAM_OPTIONS_REFUSED)
    async with OpenAIProvider(fake.base_url) as provider:
        first = await collect(provider, FIRST)
        second = await collect(provider, grown(FIRST, text_of(first), "And the port?"))
    _, one, two = fake.chat_requests
    assert "stream_options" not in two.body
    assert usage_of(first) == ChatUsage(one.prompt_tokens, one.completion_tokens, 0)
    assert two.cached_tokens == one.prompt_tokens - len(PRIMING)
    assert usage_of(second) == ChatUsage(two.prompt_tokens, two.completion_tokens,
                                         two.cached_tokens)


@pytest.mark.parametrize("flavor", ["llamacpp_old", "vllm", "openrouter", "llama_cpp_python"])
async def test_a_server_that_says_nothing_of_a_cache_leaves_it_unknown(
        flavor: str, make_fake_server: Callable[..., FakeProvider]):
    fake = make_fake_server(flavor=flavor)
    async with OpenAIProvider(fake.base_url) as provider:
        await collect(provider, FIRST)
        again = await collect(provider, FIRST)
        done = await provider.complete(FIRST, model=MODEL, max_tokens=20)
    rec = fake.chat_requests[1]
    assert usage_of(again).prompt_tokens == rec.prompt_tokens
    assert usage_of(again).cached_tokens is None and done.cached_tokens is None


async def test_the_engine_reports_what_the_server_read_from_its_cache(
        make_fake_server: Callable[..., FakeProvider], tmp_path):
    fake = make_fake_server(limit=8192)
    engine = make_engine(fake, tmp_path, context_window=8192)
    await send(engine, "Where does the collector keep its deploy log?")
    events = await send(engine, "And which port does it listen on?")
    first, second = fake.chat_requests
    usage = next(e for e in events if isinstance(e, ev.Usage))
    assert usage.prompt_tokens == second.prompt_tokens
    assert usage.cached_tokens == shared(prompt_tokens(first.body["messages"]),
                                         prompt_tokens(second.body["messages"])) > 0


# --- shapes the fake does not send --------------------------------------------------------------

def test_a_prompt_is_never_smaller_than_its_cached_and_evaluated_parts():
    # A build or proxy whose prompt_tokens counted only what it evaluated.
    usage = openai_usage({"prompt_tokens": 30, "completion_tokens": 5},
                         {"cache_n": 900, "prompt_n": 30, "predicted_n": 5})
    assert usage == ChatUsage(930, 5, 900)
    assert openai_usage({"prompt_tokens": 40, "prompt_cache_hit_tokens": 64,
                         "prompt_cache_miss_tokens": 16}) == ChatUsage(80, 0, 64)


def test_what_is_not_a_count_is_not_read_as_one():
    # prompt_tokens_details null (Gemini's OpenAI layer), llama.cpp's -1, a JSON true.
    assert openai_usage({"prompt_tokens": 12, "completion_tokens": 3,
                         "prompt_tokens_details": None}) == ChatUsage(12, 3, None)
    assert openai_usage({"prompt_tokens": 12, "completion_tokens": 3},
                        {"cache_n": -1, "prompt_n": -1}) == ChatUsage(12, 3, None)
    assert openai_usage({"prompt_tokens": True, "completion_tokens": 3}) is None
    # Builds before cache_n timed only what they evaluated: that is not the prompt.
    assert openai_usage(None, {"prompt_n": 40, "predicted_n": 3}) is None
    # No more of the prompt can come from the cache than the prompt.
    assert openai_usage({"prompt_tokens": 10, "completion_tokens": 1,
                         "prompt_tokens_details": {"cached_tokens": 50}}) == ChatUsage(10, 1, 10)
