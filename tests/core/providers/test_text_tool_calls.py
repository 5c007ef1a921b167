"""Tool calls the bundled local model writes as text (Qwen 2.5 under llama-cpp-python, which
passes them through as content), against the fake llama-cpp-python server over loopback: a
reply that is wholly calls of offered tools becomes call events, anything else is text, shown
as soon as it cannot be a call; remote servers are untouched."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatToolCall
from jarvis_tui.core.providers.errors import ProviderError
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LOCAL_TOOL_SENTENCE
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.providers.text_calls import could_be_calls, read_calls
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.specs import ONCE, ToolBox
from tests.engine_helpers import BASE, Sleeps, send
from tests.fakeserver import count_tokens

TZ = {"type": "object", "properties": {"timezone": {"type": "string"}},
      "required": ["timezone"]}
QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TOOLS = [ToolSpec("get_current_time", "Get current time in a specific timezone", TZ).wire(),
         ToolSpec("search_history", "Search this conversation's earlier turns", QUERY).wire()]
NAMES = {"get_current_time", "search_history"}
ASK = [{"role": "system", "content": "You are Jarvis, a helpful assistant."},
       {"role": "user", "content": "What time is it in Tokyo?"}]
TOKYO = ("get_current_time", {"timezone": "Asia/Tokyo"})
PARIS = ("get_current_time", {"timezone": "Europe/Paris"})
# The forms the model writes, each with the calls it holds: the fenced one as the real server
# streamed it (bench/local/tools_local.py), the tagged ones as the chat template asks for them.
FORMS = {
    "bare": ('{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}', [TOKYO]),
    "fenced": ('```json\n{\n  "name": "get_current_time",\n  "arguments": {\n    "timezone": '
               '"Asia/Tokyo"\n  }\n}\n```', [TOKYO]),
    "tagged": ('<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": '
               '"Asia/Tokyo"}}\n</tool_call>', [TOKYO]),
    "two tagged": ('<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": '
                   '"Asia/Tokyo"}}\n</tool_call>\n<tool_call>\n{"name": "get_current_time", '
                   '"arguments": {"timezone": "Europe/Paris"}}\n</tool_call>', [TOKYO, PARIS]),
    "two bare lines": ('{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}\n'
                       '{"name": "get_current_time", "arguments": {"timezone": "Europe/Paris"}}',
                       [TOKYO, PARIS]),
    "two in one fence": ('```json\n{"name": "get_current_time", "arguments": {"timezone": '
                         '"Asia/Tokyo"}}\n{"name": "get_current_time", "arguments": '
                         '{"timezone": "Europe/Paris"}}\n```', [TOKYO, PARIS]),
    "a list": ('[{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}, '
               '{"name": "get_current_time", "arguments": {"timezone": "Europe/Paris"}}]',
               [TOKYO, PARIS]),
    # The template shows earlier calls' arguments as a JSON string, and the model copies that.
    "string arguments": ('  {"name": "get_current_time", "arguments": "{\\"timezone\\": '
                         '\\"Asia/Tokyo\\"}"}\n', [TOKYO]),
    "tag left open": ('<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": '
                      '"Asia/Tokyo"}}', [TOKYO]),
}
# Replies that are not calls of an offered tool, and must reach the user exactly as written.
NOT_CALLS = {
    "a name not offered": '```json\n{\n  "name": "Buddy",\n  "arguments": {\n    "age": 3\n  }\n}'
                          '\n```',
    "json of its own": '{"capital": "Rome", "country": "Italy"}',
    "a call with words after it": '{"name": "get_current_time", "arguments": {"timezone": '
                                  '"Asia/Tokyo"}}\nThis gives the time in Tokyo.',
    "other code": '```python\nprint({"name": "get_current_time"})\n```',
    "broken json": '{"name": "get_current_time", "arguments": {"timezone": Asia/Tokyo}}',
    "a braced word": "{placeholder} is how templates mark a field.",
    "an extra key": '{"name": "get_current_time", "arguments": {}, "reason": "the user asked"}',
    "a tag around prose": "<tool_call>I would call a tool here.</tool_call>",
    "prose": "The capital of Italy is Rome.",
}


def local_provider(fake, **kw) -> OpenAIProvider:
    return OpenAIProvider(fake.base_url, "", text_tool_calls=True, **kw)


async def stream(provider: OpenAIProvider, messages=ASK, tools=TOOLS) -> list:
    async with provider:
        return [e async for e in provider.stream_chat(messages, model=LOCAL_MODEL_NAME,
                                                      max_tokens=300, tools=tools)]


def calls_in(events: list) -> list[tuple[str, dict]]:
    return [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ChatToolCall)]


def text_in(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, ChatDelta))


@pytest.fixture
def fake(make_fake_server):
    return make_fake_server(flavor="llama_cpp_python")


# --- streaming ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
async def test_a_reply_that_is_calls_becomes_call_events(fake, form):
    text, expected = FORMS[form]
    fake.script.append(text)
    events = await stream(local_provider(fake))
    assert calls_in(events) == expected
    assert text_in(events) == ""  # nothing of the call shows as reply text
    assert [e.id for e in events if isinstance(e, ChatToolCall)] == [
        f"call_{n}" for n in range(len(expected))]
    assert events[-1] == ChatDone("tool_calls")
    # llama-cpp-python streams no usage: the reply is counted at the server as the model wrote
    # it, the call's text too.
    counted = [r.body["input"] for r in fake.requests if r.path.endswith("/tokenize/count")]
    assert counted[-1] == text
    assert events[-2].completion_tokens == count_tokens(text) > 0


@pytest.mark.parametrize("case", NOT_CALLS)
async def test_a_reply_that_is_not_calls_is_shown_as_written(fake, case):
    fake.script.append(NOT_CALLS[case])
    events = await stream(local_provider(fake))
    assert text_in(events) == NOT_CALLS[case]
    assert calls_in(events) == []
    assert events[-1] == ChatDone("stop")


async def test_prose_is_not_held_back(fake):
    """A reply that cannot be a call from its first piece passes piece by piece, as before."""
    reply = "The capital of Italy is Rome, and 罗马 is its name in Chinese."
    fake.script.append(reply)
    events = await stream(local_provider(fake))
    deltas = [e.text for e in events if isinstance(e, ChatDelta)]
    assert deltas == [reply[i:i + fake.chunk_chars] for i in range(0, len(reply),
                                                                    fake.chunk_chars)]


async def test_json_that_is_no_call_shows_while_the_server_still_writes(fake):
    """Held back only while it could be a call: the name "Buddy" settles it, and the user sees
    the text while the rest of the reply is still on its way."""
    reply = NOT_CALLS["a name not offered"]
    fake.script.append(reply)
    fake.stall_at = 8  # the server stops after 32 characters, past the name's first letter
    provider = local_provider(fake)
    async with provider:
        events = provider.stream_chat(ASK, model=LOCAL_MODEL_NAME, max_tokens=300, tools=TOOLS)
        first = await asyncio.wait_for(anext(events), 10)
        # The server thread marks itself held just after its last write, which may be a moment
        # after that write reached us: wait for the mark, then the rest is surely still unsent.
        assert await asyncio.to_thread(fake.held.wait, 10) and not fake.resume.is_set()
        # Released with the piece that brought the name's first letter.
        piece = fake.chunk_chars
        assert first == ChatDelta(reply[:(reply.index("B") // piece + 1) * piece])
        fake.resume.set()
        rest = [e async for e in events]
    assert first.text + text_in(rest) == reply


async def test_a_call_split_into_one_character_events_and_cut_bytes(fake):
    """Every character its own SSE event, each event's bytes cut inside its first multi-byte
    character: the call comes back whole, its Chinese and emoji intact."""
    query = "staging 服务器的端口 🙂"
    fake.chunk_chars, fake.split_bytes = 1, True
    fake.script.append('```json\n{"name": "search_history", "arguments": {"query": "'
                       f'{query}"}}}}\n```')
    events = await stream(local_provider(fake))
    assert calls_in(events) == [("search_history", {"query": query})]
    assert text_in(events) == ""


async def test_an_answer_split_the_same_way_is_shown_whole(fake):
    reply = '{"名字": "东京", "时间": "21:14 🙂"}'
    fake.chunk_chars, fake.split_bytes = 1, True
    fake.script.append(reply)
    events = await stream(local_provider(fake))
    assert text_in(events) == reply and calls_in(events) == []


async def test_without_tools_offered_nothing_is_read_as_a_call(fake):
    text = FORMS["bare"][0]
    fake.script.append(text)
    events = await stream(local_provider(fake), tools=None)
    assert text_in(events) == text and events[-1] == ChatDone("stop")


async def test_a_remote_server_keeps_the_text_as_text(make_fake_server):
    """Only the local model's provider reads calls from text; others answer as before."""
    fake = make_fake_server()
    text = FORMS["tagged"][0]
    fake.script.append(text)
    events = await stream(OpenAIProvider(fake.base_url, "sk-test"))
    assert text_in(events) == text and calls_in(events) == []


# --- unstreamed --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["fenced", "two tagged", "string arguments"])
async def test_complete_reads_calls_from_the_text(fake, form):
    text, expected = FORMS[form]
    fake.script.append(text)
    async with local_provider(fake) as provider:
        whole = await provider.complete(ASK, model=LOCAL_MODEL_NAME, max_tokens=300,
                                        tools=TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in whole.tool_calls] == expected
    assert whole.text == "" and whole.finish_reason == "tool_calls"


async def test_complete_keeps_what_is_not_a_call(fake):
    fake.script.append(NOT_CALLS["a name not offered"])
    async with local_provider(fake) as provider:
        whole = await provider.complete(ASK, model=LOCAL_MODEL_NAME, max_tokens=300,
                                        tools=TOOLS)
    assert whole.text == NOT_CALLS["a name not offered"] and whole.tool_calls == ()


# --- the follow-up -----------------------------------------------------------------------------


def follow_up(content: str | None) -> list[dict]:
    call = ToolCall("call_0", "get_current_time", '{"timezone": "Asia/Tokyo"}')
    return [*ASK, {"role": "assistant", "content": content, "tool_calls": [call.wire()]},
            {"role": "tool", "tool_call_id": "call_0",
             "content": '{"timezone": "Asia/Tokyo", "datetime": "2025-06-01T21:14:05+09:00"}'}]


async def test_the_follow_up_sends_an_empty_content_not_null(fake):
    fake.script.append("It is 21:14 in Tokyo.")
    events = await stream(local_provider(fake), messages=follow_up(None))
    assert text_in(events) == "It is 21:14 in Tokyo."
    sent = fake.chat_requests[-1].body["messages"][2]
    assert sent["content"] == "" and sent["tool_calls"][0]["id"] == "call_0"


async def test_the_fake_refuses_null_content_as_the_real_server_does(fake):
    """Why the empty content: llama-cpp-python answers a null one with a 500."""
    with pytest.raises(ProviderError):
        await stream(OpenAIProvider(fake.base_url, ""), messages=follow_up(None))
    assert fake.chat_requests[-1].status == 500


async def test_other_servers_get_the_messages_as_they_were(make_fake_server):
    fake = make_fake_server()
    fake.script.append("It is 21:14 in Tokyo.")
    await stream(OpenAIProvider(fake.base_url, "sk-test"), messages=follow_up(None))
    assert fake.chat_requests[-1].body["messages"] == follow_up(None)


# --- choosing it, and the round through the engine -----------------------------------------


def test_only_the_local_model_reads_calls_from_text():
    local = make_provider(replace(BASE, model=LOCAL_MODEL_NAME, base_url="http://127.0.0.1:9/v1"))
    remote = make_provider(replace(BASE, base_url="http://127.0.0.1:9/v1"))
    assert local.text_tool_calls is True and remote.text_tool_calls is False


class Clock(ToolBox):
    """get_current_time, as a tool box: what the engine runs once the user allows it."""

    def __init__(self) -> None:
        self.ran: list[dict] = []

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec("get_current_time", "Get current time in a specific timezone", TZ,
                         server="time", tool="get_current_time")]

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        self.ran.append(call.parsed())
        return ToolResult('{"timezone": "Asia/Tokyo", "datetime": "2025-06-01T21:14:05+09:00"}')


async def test_a_text_call_goes_through_the_users_consent(fake, tmp_path):
    fake.script += [FORMS["fenced"][0], "It is 21:14 in Tokyo."]
    settings = replace(BASE, model=LOCAL_MODEL_NAME, base_url=fake.base_url)
    asked: list[str] = []

    async def approve(call: ToolCall, spec: ToolSpec) -> str:
        asked.append(call.name)
        return ONCE

    clock = Clock()
    engine = Engine(settings, Store(tmp_path / "s.db"), make_provider(settings), sleep=Sleeps(),
                    jitter=lambda: 0.5, tools=clock, approve=approve)
    events = await send(engine, "What time is it in Tokyo?")
    assert asked == ["get_current_time"] and clock.ran == [{"timezone": "Asia/Tokyo"}]
    assert isinstance(events[-1], ev.Finished)
    assert events[-1].message.content == "It is 21:14 in Tokyo."
    assert not any(isinstance(e, ev.Delta) and "get_current_time" in e.text for e in events)
    follow = fake.chat_requests[-1].body["messages"]
    # Told when to call, after the prompt, and the same front again with the result.
    told = f"{settings.system_prompt} {LOCAL_TOOL_SENTENCE}"
    assert [r.body["messages"][0]["content"] for r in fake.chat_requests] == [told, told]
    assert [m["role"] for m in follow[-3:]] == ["user", "assistant", "tool"]
    assert follow[-2]["content"] == ""
    assert json.loads(follow[-2]["tool_calls"][0]["function"]["arguments"]) == {
        "timezone": "Asia/Tokyo"}


@pytest.mark.parametrize(("model", "tools"), [(LOCAL_MODEL_NAME, None), ("remote-model", Clock)])
async def test_only_the_local_model_with_tools_is_told_when_to_call(fake, tmp_path, model,
                                                                     tools):
    fake.script.append("Hello.")
    settings = replace(BASE, model=model, base_url=fake.base_url)
    engine = Engine(settings, Store(tmp_path / "s.db"), make_provider(settings), sleep=Sleeps(),
                    jitter=lambda: 0.5, tools=tools() if tools else None)
    await send(engine, "Hi")
    assert fake.chat_requests[-1].body["messages"][0]["content"] == settings.system_prompt


# --- the reader on its own ---------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_every_start_of_a_call_is_held(form):
    text, _ = FORMS[form]
    held = [n for n in range(len(text) + 1) if not could_be_calls(text[:n], NAMES)]
    assert held == []


@pytest.mark.parametrize(("start", "decided_by"), [
    ('{"name": "Bud', '{"name": "B'),
    ('{"capital": "Ro', '{"c'),
    ("```python\nprint", "```p"),
    ("Hello", "H"),
    ("<tool_box>", "<tool_b"),
    ('[1, 2', "[1"),
    ('```json\nThe answer', "```json\nT"),
])
def test_text_is_released_at_the_character_that_rules_out_a_call(start, decided_by):
    settled = next(n for n in range(len(start) + 1) if not could_be_calls(start[:n], NAMES))
    assert start[:settled] == decided_by


def test_a_name_is_one_offered_now():
    text = FORMS["bare"][0]
    assert read_calls(text, NAMES) == [("get_current_time", '{"timezone": "Asia/Tokyo"}')]
    assert read_calls(text, {"search_history"}) is None
