"""OllamaProvider against the fake Ollama server over real loopback sockets."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from functools import partial

import httpx
import pytest

from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatUsage
from jarvis_tui.core.providers.errors import (
    ContextOverflow,
    NetworkError,
    RequestError,
    ServerError,
    StreamCut,
)
from jarvis_tui.core.providers.ollama import (
    OLLAMA_AUTO_MAX,
    OllamaProvider,
    normalize_base_url,
)
from tests.fake_ollama import CHUNK_CHARS, FakeOllama, count_ollama_prompt
from tests.fakeserver import count_tokens
from tests.provider_helpers import stream_events, text_of

MODEL = "llama3.2"
collect = partial(stream_events, model=MODEL)
HELLO = [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "Tell me about context windows please"}]


@pytest.fixture
def make_ollama(make_fake_ollama: Callable[..., FakeOllama]) -> Callable[..., FakeOllama]:
    return make_fake_ollama


@pytest.fixture
def ollama(make_ollama: Callable[..., FakeOllama]) -> FakeOllama:
    return make_ollama()






def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- streaming ---------------------------------------------------------------------------------

async def test_stream_deltas_usage_and_done(ollama: FakeOllama):
    async with OllamaProvider(ollama.base_url) as provider:
        assert provider.name == "ollama" and provider.truncates_silently is True
        events = await collect(provider, HELLO, max_tokens=300, context_window=4096)
    rec = ollama.chat_requests[-1]
    assert text_of(events) == rec.reply == "Reply 1: Tell me about context windows please"
    deltas = [e for e in events if isinstance(e, ChatDelta)]
    assert len(deltas) == -(-len(rec.reply) // CHUNK_CHARS)  # it came in pieces
    assert events[-2:] == [ChatUsage(count_ollama_prompt(HELLO), count_tokens(rec.reply)),
                           ChatDone("stop")]
    assert rec.body["stream"] is True
    assert rec.body["options"] == {"num_predict": 300, "num_ctx": 4096}
    assert rec.body["messages"] == HELLO
    assert rec.num_ctx == 4096 and not rec.truncated
    assert "Authorization" not in rec.headers


async def test_no_context_window_sends_no_num_ctx(ollama: FakeOllama):
    async with OllamaProvider(ollama.base_url) as provider:
        await collect(provider, HELLO, max_tokens=50)
    rec = ollama.chat_requests[-1]
    assert rec.body["options"] == {"num_predict": 50}
    assert rec.num_ctx == ollama.default_num_ctx


async def test_num_predict_cuts_the_reply_with_done_reason_length(ollama: FakeOllama):
    ollama.reply_fn = lambda body: "one two three four five six seven eight nine ten"
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, HELLO, max_tokens=3)
    assert text_of(events) == "one two three"
    assert events[-2:] == [ChatUsage(count_ollama_prompt(HELLO), 3), ChatDone("length")]


async def test_thinking_is_not_part_of_the_reply(ollama: FakeOllama):
    ollama.thinking = "Let me think about windows first..."
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, HELLO)
    assert text_of(events) == ollama.chat_requests[-1].reply
    assert "think" not in text_of(events)


@pytest.mark.parametrize("suffix", ["/v1", "/v1/", "/api", "/api/", "/"])
async def test_pasted_openai_or_api_url_is_stripped(ollama: FakeOllama, suffix: str):
    async with OllamaProvider(ollama.base_url + suffix, "proxy-key") as provider:
        assert provider.base_url == ollama.base_url
        await collect(provider, HELLO)
    rec = ollama.chat_requests[-1]
    assert rec.path == "/api/chat"
    assert rec.headers["Authorization"] == "Bearer proxy-key"


def test_base_url_normalisation():
    assert normalize_base_url("") == "http://127.0.0.1:11434"
    assert normalize_base_url("127.0.0.1:11434") == "http://127.0.0.1:11434"  # OLLAMA_HOST style
    assert normalize_base_url("https://box.lan/ollama/v1/") == "https://box.lan/ollama"
    assert normalize_base_url("http://localhost:11434/API") == "http://localhost:11434"
    assert normalize_base_url("http://host/v1beta") == "http://host/v1beta"


async def test_openai_shaped_tool_turns_are_translated(ollama: FakeOllama):
    messages = [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in"},
                                     {"type": "text", "text": "Paris?"}]},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, cloudy"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, messages)
    rec = ollama.chat_requests[-1]
    assert rec.status == 200 and events[-1] == ChatDone("stop")  # the Go decoder took it
    sent = rec.body["messages"]
    assert sent[1]["content"] == "Weather in\nParis?"
    assert sent[2]["content"] == ""
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert sent[3]["tool_name"] == "get_weather"
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'


async def test_untranslated_shapes_are_what_ollama_refuses(ollama: FakeOllama):
    # The reason for the translation: the fake refuses these as Ollama's Go decoder does.
    async with httpx.AsyncClient() as client:
        resp = await client.post(f"{ollama.base_url}/api/chat", json={
            "model": MODEL, "stream": False,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    assert resp.status_code == 400
    assert "cannot unmarshal array" in resp.json()["error"]


# --- errors ------------------------------------------------------------------------------------

async def test_unknown_model_says_ollama_pull(ollama: FakeOllama):
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(RequestError) as caught:
            await collect(provider, HELLO, model="qwen2.5:7b")
        with pytest.raises(RequestError) as caught_complete:
            await provider.complete(HELLO, model="qwen2.5:7b", max_tokens=10)
    err = caught.value
    assert err.status == 404
    assert "`ollama pull qwen2.5:7b`" in err.message
    assert ollama.base_url in err.message
    assert err.body == '{"error": "model \\"qwen2.5:7b\\" not found, try pulling it first"}'
    assert "`ollama pull qwen2.5:7b`" in caught_complete.value.message


async def test_newer_not_found_wording_too(ollama: FakeOllama):
    ollama.faults.append(("status", 404, {}, {"error": "model 'llama3.2' not found"}))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(RequestError) as caught:
            await collect(provider, HELLO)
    assert "`ollama pull llama3.2`" in caught.value.message


async def test_runner_crash_is_retryable(ollama: FakeOllama):
    ollama.faults.append(("status", 500, {}, {
        "error": "llama runner process has terminated: exit status 0xc0000409"}))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(ServerError) as caught:
            await collect(provider, HELLO)
        assert text_of(await collect(provider, HELLO)).startswith("Reply 2:")  # fault spent
    assert caught.value.status == 500
    assert "llama runner process has terminated" in caught.value.message


async def test_out_of_memory_is_final_and_suggests_a_smaller_window(ollama: FakeOllama):
    ollama.faults.append(("status", 500, {}, {
        "error": "model requires more system memory (11.2 GiB) than is available (7.6 GiB)"}))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(RequestError) as caught:
            await collect(provider, HELLO, context_window=131072)
    assert "(11.2 GiB)" in caught.value.message
    assert "smaller context window" in caught.value.message


async def test_other_statuses_go_through_classify(ollama: FakeOllama):
    ollama.faults.append(("status", 400, {}, {"error": '"llama3.2" does not support tools'}))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(RequestError) as caught:
            await collect(provider, HELLO)
    assert caught.value.message == ('The server refused the request (400): "llama3.2" does not '
                                    "support tools")


async def test_connection_refused_says_ollama_serve():
    base = f"http://127.0.0.1:{free_port()}"
    async with OllamaProvider(base + "/v1", "sk-hidden", connect_timeout=2) as provider:
        with pytest.raises(NetworkError) as caught:
            await collect(provider, HELLO)
        with pytest.raises(NetworkError) as caught_complete:
            await provider.complete(HELLO, model=MODEL, max_tokens=5)
        assert await provider.detect_context_window(MODEL) is None
    expected = (f"Could not connect to {base}: connection refused (is the server running?). "
                "Start it with `ollama serve`.")
    assert caught.value.message == str(caught.value) == expected
    assert caught_complete.value.message == expected
    assert "sk-hidden" not in caught.value.message


async def test_error_line_mid_stream(ollama: FakeOllama):
    ollama.faults.append(("stream_error", 2, "an error was encountered while running the model:"
                                             " unexpected EOF"))
    got: list = []
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(ServerError) as caught:
            await collect(provider, HELLO, sink=got)
    assert [type(e) for e in got] == [ChatDelta, ChatDelta]
    assert caught.value.status is None
    assert caught.value.message == ("The server reported an error mid-stream: an error was "
                                    "encountered while running the model: unexpected EOF")


async def test_overflow_wording_mid_stream_is_still_an_overflow(ollama: FakeOllama):
    # Ollama does not send these itself, but a proxy in front of it (or llama-server) may.
    ollama.faults.append(("stream_error", 0, "request (9000 tokens) exceeds the available "
                                             "context size (8192 tokens), try increasing it"))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(ContextOverflow) as caught:
            await collect(provider, HELLO)
    assert (caught.value.limit, caught.value.requested) == (8192, 9000)


async def test_cut_stream_raises_stream_cut(ollama: FakeOllama):
    ollama.faults.append(("cut", 2))
    got: list = []
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(StreamCut):
            await collect(provider, HELLO, sink=got)
    reply = ollama.chat_requests[-1].reply
    assert got == [ChatDelta(reply[:CHUNK_CHARS]), ChatDelta(reply[CHUNK_CHARS:2 * CHUNK_CHARS])]


async def test_malformed_line_is_skipped(ollama: FakeOllama):
    ollama.faults.append(("malformed",))
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, HELLO)
    assert text_of(events) == ollama.chat_requests[-1].reply
    assert events[-1] == ChatDone("stop")


async def test_empty_reply(ollama: FakeOllama):
    ollama.faults.append(("empty",))
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, HELLO)
    assert events == [ChatUsage(count_ollama_prompt(HELLO), 0), ChatDone("stop")]


async def test_read_timeout_is_a_network_error(ollama: FakeOllama):
    ollama.faults.append(("delay", 30))
    async with OllamaProvider(ollama.base_url, timeout=0.3) as provider:
        with pytest.raises(NetworkError) as caught:
            await collect(provider, HELLO)
    assert "read timeout" in caught.value.message


# --- complete ----------------------------------------------------------------------------------

async def test_complete_returns_text_counts_and_reason(ollama: FakeOllama):
    ollama.reply_fn = lambda body: "A summary: goals, decisions, names."
    async with OllamaProvider(ollama.base_url) as provider:
        done = await provider.complete(HELLO, model=MODEL, max_tokens=100, context_window=8192)
        cut = await provider.complete(HELLO, model=MODEL, max_tokens=2)
    first, second = ollama.chat_requests
    assert done.text == "A summary: goals, decisions, names."
    assert (done.prompt_tokens, done.completion_tokens) == (first.evaluated,
                                                            count_tokens(done.text))
    assert done.finish_reason == "stop"
    assert first.body["stream"] is False
    assert first.body["options"] == {"num_predict": 100, "num_ctx": 8192}
    assert (cut.text, cut.finish_reason, cut.completion_tokens) == ("A summary", "length", 2)
    assert second.body["options"] == {"num_predict": 2}


async def test_ollama_says_nothing_of_its_cache(ollama: FakeOllama):
    """Ollama reuses a cached prefix but reports no count of it (its prompt_eval_count holds
    the cached part too), as the fake does: unknown, not 0."""
    async with OllamaProvider(ollama.base_url) as provider:
        await collect(provider, HELLO)
        again = await collect(provider, HELLO)
        done = await provider.complete(HELLO, model=MODEL, max_tokens=10)
    usage = next(e for e in again if isinstance(e, ChatUsage))
    assert usage == ChatUsage(ollama.chat_requests[1].evaluated, usage.completion_tokens)
    assert usage.cached_tokens is None and done.cached_tokens is None


async def test_a_cached_count_is_read_where_a_build_sends_one(ollama: FakeOllama):
    """Some builds add prompt_eval_cached_count (a part of prompt_eval_count) to the final
    object, as here; the fake, like upstream Ollama, sends none."""
    final = {"model": MODEL, "created_at": "2026-09-17T15:42:59.7420965Z",
             "message": {"role": "assistant", "content": "ok"}, "done": True,
             "done_reason": "stop", "prompt_eval_count": 40, "prompt_eval_cached_count": 32,
             "eval_count": 1}
    ollama.faults.extend([("status", 200, {}, final),
                          ("status", 200, {}, json.dumps(final) + "\n")])
    async with OllamaProvider(ollama.base_url) as provider:
        done = await provider.complete(HELLO, model=MODEL, max_tokens=10)
        events = await collect(provider, HELLO)
    assert (done.text, done.prompt_tokens, done.cached_tokens) == ("ok", 40, 32)
    assert events == [ChatDelta("ok"), ChatUsage(40, 1, 32), ChatDone("stop")]


async def test_complete_server_error(ollama: FakeOllama):
    ollama.faults.append(("stream_error", 0, "llama runner process has terminated: signal: "
                                             "killed"))
    async with OllamaProvider(ollama.base_url) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(HELLO, model=MODEL, max_tokens=10)
    assert caught.value.status == 500


# --- context window detection ------------------------------------------------------------------

async def test_detect_prefers_the_modelfile_num_ctx(make_ollama: Callable[..., FakeOllama]):
    fake = make_ollama(context_length=131072, modelfile_num_ctx=65536)
    async with OllamaProvider(fake.base_url) as provider:
        assert await provider.detect_context_window(MODEL) == 65536  # the user chose it: no cap
    rec = fake.requests[-1]
    assert rec.path == "/api/show" and rec.body["model"] == MODEL


async def test_detect_caps_a_long_trained_length(make_ollama: Callable[..., FakeOllama]):
    fake = make_ollama(context_length=131072)
    async with OllamaProvider(fake.base_url) as provider:
        assert await provider.detect_context_window(MODEL) == OLLAMA_AUTO_MAX == 32768


async def test_detect_keeps_a_short_trained_length(ollama: FakeOllama):
    async with OllamaProvider(ollama.base_url + "/v1") as provider:
        assert await provider.detect_context_window(MODEL + ":latest") == 8192


@pytest.mark.parametrize("override", [
    None,  # unknown model: 404
    (500, {"error": "boom"}),
    (200, "<html>not json</html>"),
    (200, {"parameters": "num_ctx  many", "model_info": {"general.architecture": "llama"}}),
    (200, {"model_info": {"general.architecture": "qwen2", "qwen2.context_length": "32k"}}),
    (200, ["not", "an", "object"]),
])
async def test_detect_failures_are_none(ollama: FakeOllama, override: tuple | None):
    ollama.show_override = override
    async with OllamaProvider(ollama.base_url) as provider:
        assert await provider.detect_context_window("nope" if override is None else MODEL) \
            is None
    assert ollama.requests[-1].path == "/api/show"


async def test_detect_finds_the_length_key_without_architecture(ollama: FakeOllama):
    ollama.show_override = (200, {"model_info": {"gemma3.context_length": 16384}})
    async with OllamaProvider(ollama.base_url) as provider:
        assert await provider.detect_context_window(MODEL) == 16384


# --- CJK and silent truncation -----------------------------------------------------------------

async def test_chinese_round_trips_intact(ollama: FakeOllama):
    question = "请总结我们关于上下文窗口的讨论，并列出未解决的问题。"
    answer = "好的：上下文窗口满了也不会崩溃，旧的对话会被摘要保存。🚀 还有两个问题。"
    ollama.reply_fn = lambda body: answer
    messages = [{"role": "user", "content": question}]
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, messages)
        done = await provider.complete(messages, model=MODEL, max_tokens=200)
    assert text_of(events) == answer == done.text
    first, second = ollama.chat_requests
    assert first.body["messages"][0]["content"] == question
    assert [e for e in events if isinstance(e, ChatUsage)] == [
        ChatUsage(count_ollama_prompt(messages), count_tokens(answer))]
    assert done.prompt_tokens == first.evaluated == second.evaluated


def chinese_history(turns: int) -> list[dict]:
    messages = [{"role": "system", "content": "你是一个简洁的助手。对话摘要：用户在规划旅行。"}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"第{i}个问题：请详细解释上下文窗口满了"
                                                    f"以后会发生什么，以及如何保存旧的对话。" * 3})
        messages.append({"role": "assistant", "content": f"第{i}个回答：旧的对话会被摘要，"
                                                         "最近的几轮保持原样。" * 3})
    messages.append({"role": "user", "content": "最后一个问题：我们最早谈了什么？"})
    return messages


async def test_silent_truncation_shows_as_a_short_prompt_eval_count(ollama: FakeOllama):
    messages = chinese_history(20)
    seen: list[list[dict]] = []
    ollama.reply_fn = lambda body: seen.append(body["messages"]) or "我只记得最近的内容。"
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, messages, context_window=1024)
    rec = ollama.chat_requests[-1]
    usage = next(e for e in events if isinstance(e, ChatUsage))
    # No error: Ollama answered as if nothing happened...
    assert events[-1] == ChatDone("stop") and text_of(events) == "我只记得最近的内容。"
    # ...but it evaluated well under what was sent, and that is what the engine can see.
    assert rec.truncated and rec.sent_tokens == count_ollama_prompt(messages) > 3 * 1024
    assert usage.prompt_tokens == rec.evaluated <= 1024 < rec.sent_tokens // 3
    # It dropped the oldest turns, kept the system prompt and the newest message.
    assert rec.kept[0] == messages[0] and rec.kept[-1] == messages[-1]
    assert messages[1] not in rec.kept and len(rec.kept) < len(messages)
    assert seen == [rec.kept]  # the model only saw what survived


async def test_same_history_fits_a_big_enough_window(ollama: FakeOllama):
    messages = chinese_history(20)
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, messages, context_window=32768)
    rec = ollama.chat_requests[-1]
    assert not rec.truncated and rec.kept == messages
    assert next(e for e in events if isinstance(e, ChatUsage)).prompt_tokens == rec.sent_tokens


async def test_default_num_ctx_truncates_when_no_window_is_sent(
        make_ollama: Callable[..., FakeOllama]):
    fake = make_ollama(default_num_ctx=512)
    async with OllamaProvider(fake.base_url) as provider:
        await collect(provider, chinese_history(6))
    rec = fake.chat_requests[-1]
    assert rec.num_ctx == 512 and rec.truncated and rec.evaluated <= 512


async def test_one_message_larger_than_the_window_is_cut_to_it(ollama: FakeOllama):
    big = [{"role": "user", "content": "上下文" * 2000}]
    async with OllamaProvider(ollama.base_url) as provider:
        events = await collect(provider, big, context_window=1000)
    rec = ollama.chat_requests[-1]
    assert rec.kept == big and rec.truncated
    assert next(e for e in events if isinstance(e, ChatUsage)).prompt_tokens == 1000


def tool_history(result_words: int) -> list[dict]:
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": {}}}]}
    return [{"role": "system", "content": "sys"},
            {"role": "user", "content": "old " * 300},
            call,
            {"role": "tool", "tool_call_id": "c1", "content": "result " * result_words},
            {"role": "user", "content": "now?"}]


async def test_truncation_keeps_tool_results_with_their_call(ollama: FakeOllama):
    fits, too_big = tool_history(50), tool_history(160)
    async with OllamaProvider(ollama.base_url) as provider:
        await collect(provider, fits, context_window=200)
        await collect(provider, too_big, context_window=200)
    first, second = ollama.chat_requests
    sent = first.body["messages"]  # as sent: the tool message gained its tool_name
    assert first.truncated and first.kept == [sent[0], *sent[2:]]
    # The result alone would fit, with its call it would not: both go, never the result alone.
    assert second.truncated and second.kept == [too_big[0], too_big[-1]]


async def test_closing_the_stream_early_leaves_the_provider_usable(ollama: FakeOllama):
    ollama.reply_fn = lambda body: "word " * 200
    async with OllamaProvider(ollama.base_url) as provider:
        stream = provider.stream_chat(HELLO, model=MODEL, max_tokens=500)
        first = await anext(stream)
        await stream.aclose()  # what a cancelled reply does
        ollama.reply_fn = None
        again = await collect(provider, HELLO)
    assert first == ChatDelta("word")
    assert text_of(again) == "Reply 2: Tell me about context windows please"


async def test_tags_and_root_answer_like_ollama(ollama: FakeOllama):
    async with httpx.AsyncClient() as client:
        root = await client.get(ollama.base_url + "/")
        tags = await client.get(ollama.base_url + "/api/tags")
    assert root.text == "Ollama is running"
    assert [m["name"] for m in tags.json()["models"]] == ["llama3.2:latest"]
