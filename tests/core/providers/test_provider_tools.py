"""Tool calls through each wire protocol, against the fake servers over real loopback sockets:
calls streamed in pieces arrive whole, results go back in each protocol's own shape, and the
strict fakes refuse what the real servers refuse."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.providers.anthropic import AnthropicProvider
from jarvis_tui.core.providers.base import (
    ChatDelta,
    ChatDone,
    ChatToolCall,
    ChatUsage,
    Completion,
)
from jarvis_tui.core.providers.errors import ContextOverflow, RequestError
from jarvis_tui.core.providers.ollama import OllamaProvider
from jarvis_tui.core.providers.openai import OpenAIProvider
from tests import fake_tools as ft
from tests.fake_anthropic import error_body

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [ToolSpec("read_file", "Read a text file.", SCHEMA).wire(),
         ToolSpec("search", "Search the notes.", {"type": "object", "properties": {
             "query": {"type": "string"}}}).wire()]
CHINESE = {"path": "笔记/会议记录.md", "query": "上下文窗口的大小 🙂"}
HELLO = [{"role": "system", "content": "You use tools."},
         {"role": "user", "content": "Look at my notes please."}]


@dataclass
class Wire:
    """One protocol: its fake, a provider for it, and the fake's chat requests."""

    kind: str
    fake: Any
    make: Callable[[], Any]
    model: str

    @property
    def requests(self) -> list:
        return self.fake.message_requests if self.kind == "anthropic" else self.fake.chat_requests


@pytest.fixture(params=["openai", "anthropic", "ollama"])
def wire(request: pytest.FixtureRequest) -> Wire:
    kind = request.param
    if kind == "openai":
        fake = request.getfixturevalue("make_fake_server")()
        return Wire(kind, fake, lambda: OpenAIProvider(fake.base_url, "sk-test"), "fake-model")
    if kind == "anthropic":
        fake = request.getfixturevalue("make_fake_anthropic")()
        return Wire(kind, fake, lambda: AnthropicProvider(fake.base_url, "sk-ant"),
                    "claude-fake")
    fake = request.getfixturevalue("make_fake_ollama")(default_num_ctx=8192)
    return Wire(kind, fake, lambda: OllamaProvider(fake.base_url), "llama3.2")


async def stream(w: Wire, messages: list[dict], tools: list[dict] | None = TOOLS,
                 **kw: Any) -> list:
    async with w.make() as provider:
        return [e async for e in provider.stream_chat(messages, model=w.model, max_tokens=300,
                                                      tools=tools, **kw)]


def calls_of(events: list) -> list[ChatToolCall]:
    return [e for e in events if isinstance(e, ChatToolCall)]


def answered(messages: list[dict], calls: list[ChatToolCall], results: list[str],
             text: str = "") -> list[dict]:
    """The conversation with the reply's calls and their results appended, as the engine
    sends it next (OpenAI shape)."""
    return [*messages,
            {"role": "assistant", "content": text,
             "tool_calls": [ToolCall(c.id, c.name, c.arguments).wire() for c in calls]},
            *({"role": "tool", "content": r, "tool_call_id": c.id}
              for c, r in zip(calls, results, strict=True))]


def assert_calls_then_usage_then_done(events: list) -> None:
    kinds = [type(e) for e in events]
    first_call = kinds.index(ChatToolCall)
    assert ChatDelta not in kinds[first_call:]  # the calls come after all the text
    assert kinds[-2:] == [ChatUsage, ChatDone] and events[-1] == ChatDone("tool_calls")


# --- streaming ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ascii_args", [False, True])
async def test_a_call_streamed_in_pieces_arrives_whole(wire: Wire, ascii_args: bool):
    wire.fake.fragments, wire.fake.ascii_args = 9, ascii_args
    wire.fake.script.append([{"name": "read_file", "arguments": CHINESE}])
    events = await stream(wire, HELLO)
    [call] = calls_of(events)
    assert call.name == "read_file" and json.loads(call.arguments) == CHINESE
    assert call.id == wire.requests[-1].tool_calls[0].id
    assert_calls_then_usage_then_done(events)
    # The usage counted the call's arguments as reply tokens, as the servers do.
    assert events[-2].completion_tokens == wire.requests[-1].completion_tokens > 10


def test_the_fake_cuts_inside_an_escaped_character():
    text = json.dumps(CHINESE)  # \u7b14\u8bb0...
    parts = ft.pieces(text, 9)
    assert "".join(parts) == text and len(parts) == 9
    assert any(p.endswith("\\u7b") for p in parts)  # a piece ends inside "\u7b14"


async def test_several_calls_follow_the_text_in_order(wire: Wire):
    wire.fake.fragments = 3
    wire.fake.script.append({"text": "Let me look.", "calls": [
        {"name": "search", "arguments": {"query": "tea"}},
        {"name": "read_file", "arguments": {"path": "a.txt"}},
        {"name": "read_file", "arguments": {"path": "b.txt"}}]})
    events = await stream(wire, HELLO)
    assert "".join(e.text for e in events if isinstance(e, ChatDelta)) == "Let me look."
    calls = calls_of(events)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("search", {"query": "tea"}), ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "b.txt"})]
    assert len({c.id for c in calls}) == 3
    assert_calls_then_usage_then_done(events)


async def test_calls_without_ids_are_given_ids_unique_in_the_reply(wire: Wire):
    wire.fake.fragments = 2
    wire.fake.script.append([{"name": "search", "arguments": {"query": "a"}, "id": None},
                             {"name": "search", "arguments": {"query": "b"}, "id": None}])
    calls = calls_of(await stream(wire, HELLO))
    prefix = "toolu_" if wire.kind == "anthropic" else "call_"
    assert [c.id for c in calls] == [f"{prefix}0", f"{prefix}1"]
    assert [json.loads(c.arguments) for c in calls] == [{"query": "a"}, {"query": "b"}]


async def test_ids_repeated_in_one_reply_are_made_unique(wire: Wire):
    wire.fake.script.append([{"name": "search", "arguments": {"query": q}, "id": cid}
                             for q, cid in (("a", "dup"), ("b", "dup"), ("c", ""))])
    calls = calls_of(await stream(wire, HELLO))
    assert [json.loads(c.arguments)["query"] for c in calls] == ["a", "b", "c"]
    assert calls[0].id == "dup" and len({c.id for c in calls}) == 3 and all(c.id for c in calls)


async def test_empty_arguments_are_an_empty_object(wire: Wire):
    wire.fake.fragments = 4
    wire.fake.script.append([{"name": "search", "arguments": ""}])
    [call] = calls_of(await stream(wire, HELLO))
    assert call.arguments == "{}"


# --- round trips through the strict fakes ------------------------------------------------------


async def test_round_trip_of_calls_and_results_is_accepted(wire: Wire):
    ask = [*HELLO[:1], {"role": "user", "content":
                        'Look.\ncall read_file {"path": "笔记.md"}\ncall search {"query": "北京"}'}]
    first = await stream(wire, ask)
    calls = calls_of(first)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("read_file", {"path": "笔记.md"}), ("search", {"query": "北京"})]
    results = ["第一行\nsecond line", "Error: the search index is not built"]
    second = await stream(wire, answered(ask, calls, results))
    rec = wire.requests[-1]
    assert rec.status == 200 and not calls_of(second)
    total = sum(map(len, results))
    assert "".join(e.text for e in second if isinstance(e, ChatDelta)) == (
        f"Read 2 tool results ({total} characters).")
    assert second[-1] == ChatDone("stop")
    # Ids made by the directive are unique in the conversation: another turn gets others.
    again = [*answered(ask, calls, results), {"role": "assistant", "content": "ok"},
             ask[-1]]
    assert not {c.id for c in calls} & {c.id for c in calls_of(await stream(wire, again))}


async def test_each_protocol_sends_tools_and_results_in_its_own_shape(wire: Wire):
    wire.fake.script.append([{"name": "read_file", "arguments": {"path": "a.txt"}}])
    calls = calls_of(await stream(wire, HELLO))
    await stream(wire, answered(HELLO, calls, ["Error: no such file"]))
    body = wire.requests[-1].body
    sent = body["messages"]
    if wire.kind == "anthropic":
        assert body["tools"][0] == {"name": "read_file", "description": "Read a text file.",
                                    "input_schema": SCHEMA}
        use = {k: v for k, v in sent[-2]["content"][-1].items() if k != "cache_control"}
        assert use == {"type": "tool_use", "id": calls[0].id, "name": "read_file",
                       "input": {"path": "a.txt"}}
        # The newest turn carries the cache breakpoint on its last block.
        assert sent[-1]["content"] == [{
            "type": "tool_result", "tool_use_id": calls[0].id, "content": "Error: no such file",
            "is_error": True, "cache_control": {"type": "ephemeral"}}]
    elif wire.kind == "openai":
        assert body["tools"][0] == {"type": "function", "function": TOOLS[0]}
        assert sent[-2:] == answered(HELLO, calls, ["Error: no such file"])[-2:]
    else:  # Ollama wants the arguments as an object and the tool's name on the result
        assert wire.kind == "ollama"
        assert body["tools"][0] == {"type": "function", "function": TOOLS[0]}
        assert sent[-2]["tool_calls"][0]["function"]["arguments"] == {"path": "a.txt"}
        assert sent[-1] == {"role": "tool", "content": "Error: no such file",
                            "tool_call_id": calls[0].id, "tool_name": "read_file"}


async def test_no_tools_means_the_request_is_as_before(wire: Wire):
    for tools in (None, []):
        await stream(wire, HELLO, tools=tools)
    async with wire.make() as provider:
        async for _ in provider.stream_chat(HELLO, model=wire.model, max_tokens=300):
            pass
    bodies = [r.body for r in wire.requests]
    assert "tools" not in bodies[0] and bodies[0] == bodies[1] == bodies[2]


async def test_a_directive_without_tools_offered_gets_a_plain_reply(wire: Wire):
    events = await stream(wire, [{"role": "user", "content": "call search {}"}], tools=None)
    assert not calls_of(events) and events[-1] == ChatDone("stop")


async def test_tool_definitions_and_results_count_against_the_window(wire: Wire):
    await stream(wire, HELLO, tools=None)
    await stream(wire, HELLO)
    counted = [getattr(r, "sent_tokens", 0) or r.prompt_tokens for r in wire.requests]
    assert counted[1] > counted[0] + 20  # the tools' definitions were counted
    wire.fake.script.append([{"name": "read_file", "arguments": {"path": "big.log"}}])
    calls = calls_of(await stream(wire, HELLO))
    await stream(wire, answered(HELLO, calls, ["log line " * 400]))
    last = wire.requests[-1]
    assert (getattr(last, "sent_tokens", 0) or last.prompt_tokens) > counted[1] + 600


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_huge_tool_result_overflows_the_strict_window(
        kind: str, make_fake_server: Callable[..., Any],
        make_fake_anthropic: Callable[..., Any]):
    if kind == "openai":
        fake = make_fake_server(limit=4096)
        w = Wire(kind, fake, lambda: OpenAIProvider(fake.base_url), "fake-model")
    else:
        fake = make_fake_anthropic(limit=4096)
        w = Wire(kind, fake, lambda: AnthropicProvider(fake.base_url), "claude-fake")
    fake.script.append([{"name": "read_file", "arguments": {"path": "huge.txt"}}])
    calls = calls_of(await stream(w, HELLO))
    with pytest.raises(ContextOverflow) as caught:
        await stream(w, answered(HELLO, calls, ["word " * 5000]))
    assert caught.value.limit == 4096 and w.requests[-1].overflowed


# --- OpenAI's variations -----------------------------------------------------------------------


@pytest.fixture
def openai(make_fake_server: Callable[..., Any]) -> Wire:
    fake = make_fake_server()
    return Wire("openai", fake, lambda: OpenAIProvider(fake.base_url), "fake-model")


@pytest.mark.parametrize("finish", ["tool_calls", "function_call", "stop"])
async def test_openai_finish_reasons_with_calls_all_mean_run_them(openai: Wire, finish: str):
    openai.fake.tool_finish = finish
    openai.fake.script.append([{"name": "search", "arguments": {"query": "x"}}])
    events = await stream(openai, HELLO)
    assert len(calls_of(events)) == 1 and events[-1] == ChatDone("tool_calls")


async def test_openai_arguments_given_as_an_object(openai: Wire):
    openai.fake.args_as_object = True
    openai.fake.script.append([{"name": "read_file", "arguments": CHINESE}])
    [call] = calls_of(await stream(openai, HELLO))
    assert call.arguments == json.dumps(CHINESE, ensure_ascii=False)


async def test_openai_whole_reply_from_a_server_that_ignores_stream_true(openai: Wire):
    openai.fake.ignore_stream = True
    openai.fake.args_as_object = True
    openai.fake.script.append({"text": "Checking.", "calls": [
        {"name": "read_file", "arguments": {"path": "a.txt"}, "id": None}]})
    events = await stream(openai, HELLO)
    assert events[0] == ChatDelta("Checking.")
    assert calls_of(events) == [ChatToolCall("call_0", "read_file", '{"path": "a.txt"}')]
    assert_calls_then_usage_then_done(events)


async def test_complete_returns_the_calls_in_every_protocol(wire: Wire):
    wire.fake.script.append({"text": "One moment.", "calls": [
        {"name": "search", "arguments": {"query": "上下文"}}]})
    async with wire.make() as provider:
        done = await provider.complete(HELLO, model=wire.model, max_tokens=300, tools=TOOLS)
    assert isinstance(done, Completion) and done.text == "One moment."
    assert [(c.name, json.loads(c.arguments)) for c in done.tool_calls] == [
        ("search", {"query": "上下文"})]
    assert done.finish_reason == "tool_calls"
    assert [type(e) for e in done.events()] == [ChatDelta, ChatToolCall, ChatUsage, ChatDone]
    assert wire.requests[-1].body["tools"]


async def test_openai_fake_refuses_a_call_without_its_results(openai: Wire):
    call = ToolCall("call_x", "search", "{}").wire()
    lone_call = [*HELLO, {"role": "assistant", "content": "", "tool_calls": [call]},
                 {"role": "user", "content": "and?"}]
    lone_result = [*HELLO, {"role": "tool", "content": "r", "tool_call_id": "call_x"}]
    errors = []
    for messages in (lone_call, lone_result):
        with pytest.raises(RequestError) as caught:
            await stream(openai, messages)
        errors.append((caught.value.status, json.loads(caught.value.body)))
    assert errors == [
        (400, {"error": {
            "message": "An assistant message with 'tool_calls' must be followed by tool "
                       "messages responding to each 'tool_call_id'. The following "
                       "tool_call_ids did not have response messages: call_x",
            "type": "invalid_request_error", "param": "messages.[2].role", "code": None}}),
        (400, {"error": {
            "message": "Invalid parameter: messages with role 'tool' must be a response to a "
                       "preceeding message with 'tool_calls'.",
            "type": "invalid_request_error", "param": "messages.[2].role", "code": None}})]


# --- Anthropic's translation -------------------------------------------------------------------


@pytest.fixture
def anthropic(make_fake_anthropic: Callable[..., Any]) -> Wire:
    fake = make_fake_anthropic()
    return Wire("anthropic", fake, lambda: AnthropicProvider(fake.base_url), "claude-fake")


async def test_anthropic_user_words_after_results_share_their_turn(anthropic: Wire):
    anthropic.fake.script.append([{"name": "search", "arguments": {"query": "a"}},
                                  {"name": "search", "arguments": {"query": "b"}}])
    calls = calls_of(await stream(anthropic, HELLO))
    messages = [*answered(HELLO, calls, ["one", "two"]),
                {"role": "user", "content": "Never mind, just summarise."}]
    events = await stream(anthropic, messages)
    rec = anthropic.requests[-1]
    assert rec.status == 200 and events[-1] == ChatDone("stop")
    turn = rec.body["messages"][-1]
    assert [b["type"] for b in turn["content"]] == ["tool_result", "tool_result", "text"]
    assert turn["content"][-1]["text"] == "Never mind, just summarise."
    # The fake read the newest words as the question: no directive there, a plain reply.
    assert "Never mind" in rec.reply


async def test_anthropic_half_a_pair_travels_as_text(anthropic: Wire):
    call = ToolCall("call.1/x", "search", '{"query": "q"}').wire()
    messages = [*HELLO, {"role": "assistant", "content": "Searching.", "tool_calls": [call]},
                {"role": "user", "content": "stop that"},
                {"role": "tool", "content": "late result", "tool_call_id": "call.1/x"},
                {"role": "user", "content": "hello?"}]
    events = await stream(anthropic, messages)
    rec = anthropic.requests[-1]
    assert rec.status == 200 and events[-1] == ChatDone("stop")
    sent = json.dumps(rec.body["messages"])
    assert "tool_use" not in sent and "tool_result" not in sent
    assert "[tool call] search" in sent and "[tool result] late result" in sent


async def test_anthropic_ids_are_made_valid_and_unique(anthropic: Wire):
    # Two replies from a server that gave no ids both named their call call_0.
    turn = [{"role": "assistant", "content": "", "tool_calls": [
        ToolCall("call_0", "search", "not json").wire()]},
        {"role": "tool", "content": "r", "tool_call_id": "call_0"}]
    odd = [{"role": "assistant", "content": "", "tool_calls": [
        ToolCall("id with spaces", "search", "{}").wire()]},
        {"role": "tool", "content": "s", "tool_call_id": "id with spaces"}]
    events = await stream(anthropic, [*HELLO, *turn, *turn, *odd])
    assert anthropic.requests[-1].status == 200 and events[-1] == ChatDone("stop")
    uses = [b for m in anthropic.requests[-1].body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_use"]
    assert [u["id"] for u in uses] == ["call_0", "call_0_2", "id_with_spaces"]
    assert uses[0]["input"] == {}  # unparseable arguments


async def test_anthropic_fake_refuses_what_the_api_refuses(anthropic: Wire):
    use = {"type": "tool_use", "id": "toolu_x", "name": "search", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}
    tools = [{"name": "search", "input_schema": {"type": "object"}}]
    cases = [
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": [use]},
          {"role": "user", "content": [result]}], None,
         "Requests which include `tool_use` or `tool_result` blocks must define tools."),
        ([{"role": "user", "content": [result]}], tools,
         "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
         "toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the "
         "previous message."),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": [use]},
          {"role": "user", "content": "what?"}], tools,
         "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
         "after: toolu_x. Each `tool_use` block must have a corresponding `tool_result` block "
         "in the next message."),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": [use, use]},
          {"role": "user", "content": [result, result]}], tools,
         "messages.1.content.1: `tool_use` ids must be unique"),
    ]
    async with httpx.AsyncClient() as client:
        for messages, defined, expected in cases:
            answer = await client.post(
                anthropic.fake.base_url + "/v1/messages",
                headers={"anthropic-version": "2023-06-01"},
                json={"model": "claude-fake", "max_tokens": 10, "messages": messages,
                      **({"tools": defined} if defined else {})})
            assert (answer.status_code, answer.json()) == (
                400, error_body("invalid_request_error", expected))


async def test_anthropic_cache_reads_back_across_a_tool_round(anthropic: Wire):
    anthropic.fake.script.append([{"name": "read_file", "arguments": {"path": "a.txt"}}])
    system = [{"role": "system", "content": "You are careful. " * 400}, HELLO[1]]
    calls = calls_of(await stream(anthropic, system))
    events = await stream(anthropic, answered(system, calls, ["the file says hello"]))
    usage = next(e for e in events if isinstance(e, ChatUsage))
    assert anthropic.requests[-1].status == 200
    assert usage.cached_tokens and usage.cached_tokens > 1000  # tools + system read back


# --- Ollama's variations -----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["line", "final", "each"])
async def test_ollama_calls_in_any_line(make_fake_ollama: Callable[..., Any], where: str):
    fake = make_fake_ollama()
    fake.tool_calls_in = where
    fake.script.append([{"name": "search", "arguments": {"query": "天气"}, "id": None},
                        {"name": "read_file", "arguments": {"path": "x"}}])
    w = Wire("ollama", fake, lambda: OllamaProvider(fake.base_url), "llama3.2")
    events = await stream(w, HELLO)
    calls = calls_of(events)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("search", {"query": "天气"}), ("read_file", {"path": "x"})]
    assert calls[0].id == "call_0" and calls[1].id == fake.chat_requests[-1].tool_calls[1].id
    assert_calls_then_usage_then_done(events)


async def test_openai_fragments_without_index_and_the_legacy_function_call(openai: Wire):
    def data(delta: dict, finish: str | None = None) -> str:
        return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}]}) + "\n\n"

    # A proxy that drops `index` and repeats the name in every piece; then an old server's
    # single function_call.
    sse = "".join([
        data({"tool_calls": [{"id": "a", "function": {"name": "search", "arguments": '{"q'}}]}),
        data({"tool_calls": [{"function": {"name": "search", "arguments": '": 1}'}}]}),
        data({"tool_calls": [{"id": "b", "function": {"name": "read_file", "arguments": ""}}]}),
        data({"function_call": {"name": "legacy", "arguments": "{}"}}, "function_call"),
        "data: [DONE]\n\n"])
    openai.fake.faults.append(("status", 200, {}, sse))  # text/plain: read as SSE
    events = await stream(openai, HELLO)
    assert [(c.id, c.name, c.arguments) for c in calls_of(events)] == [
        ("call_0", "legacy", "{}"), ("a", "search", '{"q": 1}'), ("b", "read_file", "{}")]
    assert events[-1] == ChatDone("tool_calls")
