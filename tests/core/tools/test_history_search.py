"""The built-in search_history tool against the fake servers over loopback and a real store: not
offered until turns are folded into a summary, then offered beside the MCP tools in all three
wire protocols; the model's call reads the folded turn back, whole and labelled, without ever
asking the user; bad arguments and no match are results the model reads."""

from __future__ import annotations

import json
import time
from dataclasses import replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HISTORY_TOOL
from jarvis_tui.core.tools.history_tool import SUMMARY_NOTE
from jarvis_tui.core.tools.results import definitions_text
from jarvis_tui.core.tools.specs import ONCE, ToolBox
from jarvis_tui.core.window.system_message import SUMMARY_HEADER
from tests.cli.test_cli import flags, run
from tests.engine_helpers import BASE, Sleeps, is_summary_request, kinds, make_engine, send
from tests.fake_anthropic import text_of

FACT_EN = "For the record: the staging server listens on port 8443, Anna set it up on Monday."
FACT_ZH = "记一下：服务器的密码提示是鹈鹕，上周五换的。"
FILLER = "Question {i}: tell me more about token windows and long conversations. " * 6
SMALL = {"context_window": 2048, "response_reserve": 256, "system_reserve": 128,
         "keep_recent_turns": 1, "summary_max_tokens": 120,
         "details_max_tokens": 0}  # no ledger: the summary loses every detail


def lossy(fake) -> None:
    """A summariser that keeps the gist and drops every detail, as real ones sometimes do."""
    def reply(body: dict) -> str:
        if is_summary_request(body) or body.get("stream") is False:
            return "Summary: the user and the assistant talked about plans and token windows."
        return fake.default_reply(body) + " and some more words in the answer." * 4
    fake.reply_fn = reply


async def fold_the_facts(engine: Engine) -> list[ev.Event]:
    """The two facts, then unrelated turns until a summary covers both; what the rounds said."""
    seen: list[ev.Event] = []
    for i in range(42):
        covered = {m.content for m in engine.messages if m.covered}
        if FACT_EN in covered and FACT_ZH in covered:
            return seen
        seen += await send(engine, (FACT_EN, FACT_ZH)[i] if i < 2 else FILLER.format(i=i))
        assert isinstance(seen[-1], ev.Finished), seen[-1]
    raise AssertionError("the facts were never folded into a summary")


def offered(body: dict) -> list[str]:
    """The tool names a request offered, in any protocol's shape."""
    return [t.get("name") or t["function"]["name"] for t in body.get("tools") or []]


def system_of(body: dict) -> str:
    return text_of(body["system"]) if "system" in body else text_of(
        body["messages"][0]["content"])


def chat_bodies(requests) -> list[dict]:
    return [r.body for r in requests if not is_summary_request(r.body)
            and r.body.get("stream") is not False]


def ask_call(*lines: str) -> str:
    """A user message whose `call NAME {args}` lines the fake model makes as calls."""
    return "Look this up please.\n" + "\n".join(f"call {HISTORY_TOOL} {line}" for line in lines)


def never_asked():
    asked: list[str] = []

    async def approve(call: ToolCall, spec: ToolSpec) -> str:
        asked.append(call.name)
        return ONCE
    approve.asked = asked  # type: ignore[attr-defined]
    return approve


def stored_results(engine: Engine) -> list[str]:
    return [m.content for m in engine.store.messages(engine.conversation.id) if m.role == "tool"]


async def test_offered_only_once_turns_are_folded_and_unchanged_between_turns(
        fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await fold_the_facts(engine)
    bodies = chat_bodies(fake_server.chat_requests)
    first = next(i for i, b in enumerate(bodies) if SUMMARY_HEADER in system_of(b))
    # Before the first summary: no tools at all (none are configured), no note.
    assert all("tools" not in b and SUMMARY_NOTE not in system_of(b) for b in bodies[:first])
    # From it on: the tool, and the note under the summary's header.
    assert all(offered(b) == [HISTORY_TOOL] for b in bodies[first:])
    assert f"{SUMMARY_HEADER}\n{SUMMARY_NOTE}\n" in system_of(bodies[-1])
    definition = bodies[-1]["tools"][0]["function"]
    assert definition["parameters"]["required"] == ["query"]
    assert "folded into the summary" in definition["description"]
    # Counted in the gauge as every tool definition is.
    defs = engine.front.definitions()
    assert engine.front.definitions_tokens() == engine.counter.text(definitions_text(defs)) > 0
    assert engine.usage().system >= engine.front.definitions_tokens()
    # Between compactions the front of the request stays the same (the prefix cache).
    summaries = len(engine.store.summaries(engine.conversation.id))
    await send(engine, "And one more ordinary question.")
    assert len(engine.store.summaries(engine.conversation.id)) == summaries
    before, after = chat_bodies(fake_server.chat_requests)[-2:]
    assert before["tools"] == after["tools"]
    assert system_of(before) == system_of(after)
    await engine.provider.aclose()


async def test_the_model_reads_a_folded_turn_back_without_asking(fake_server, tmp_path):
    lossy(fake_server)
    approve = never_asked()
    engine = make_engine(fake_server, tmp_path, approve=approve, **SMALL)  # no tool servers
    await fold_the_facts(engine)
    assert "8443" not in engine.summary.content
    fact = next(m for m in engine.messages if m.content == FACT_EN)
    reply = engine.messages[engine.messages.index(fact) + 1]
    events = await send(engine, ask_call('{"query": "staging server port"}'))
    assert "ToolApproval" not in kinds(events) and approve.asked == []
    started = next(e for e in events if isinstance(e, ev.ToolStarted))
    assert started.call.name == HISTORY_TOOL and started.spec.server == ""
    done = next(e for e in events if isinstance(e, ev.ToolFinished))
    assert done.outcome == "ok"
    result = stored_results(engine)[-1]
    assert result == done.result.content
    # The whole turn, each message with its id and date; nothing else matched its words.
    assert FACT_EN in result and reply.content in result
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(fact.created_at))
    assert f"[#{fact.id} user, {when}]" in result and f"[#{reply.id} assistant, " in result
    assert FACT_ZH not in result and "Question 3:" not in result
    # The next request carries it back to the model, which answers with it.
    last = fake_server.chat_requests[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] == "tool"] == [result]
    assert events[-1].message.content == f"Read 1 tool result ({len(result)} characters)."
    await engine.provider.aclose()


async def test_a_chinese_query_finds_the_chinese_turn(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await fold_the_facts(engine)
    await send(engine, ask_call('{"query": "密码提示", "limit": 1}'))
    result = stored_results(engine)[-1]
    assert FACT_ZH in result and FACT_EN not in result
    await engine.provider.aclose()


async def test_bad_arguments_and_no_match_are_results_the_model_reads(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await fold_the_facts(engine)
    events = await send(engine, ask_call(
        '{"limit": 2}', '{"query": 42}', '{"query": "   "}',
        '{"query": "port", "limit": "many"}', '{"query": "port",}',
        '{"query": "zebra quokka xylophone"}', '{"query": "staging", "limit": 99}'))
    outcomes = [e.outcome for e in events if isinstance(e, ev.ToolFinished)]
    assert outcomes == ["error", "error", "error", "error", "bad_arguments", "ok", "ok"]
    results = stored_results(engine)[-7:]
    assert results[0] == ('Error: search_history was not run: a "query" is needed: the words '
                          'to look for, e.g. {"query": "port number"}')
    assert results[1] == ('Error: search_history was not run: "query" must be a string of '
                          'words, not a number')
    assert results[2] == ('Error: search_history was not run: "query" is empty: give the words '
                          "to look for")
    assert results[3] == ('Error: search_history was not run: "limit" must be a whole number '
                          'from 1 to 10, not a string')
    assert results[4].startswith("Error: the arguments for search_history could not be read")
    assert results[5] == (
        "Nothing in the earlier turns folded into the summary matches 'zebra quokka xylophone'. "
        "Try other words: a name, a number, a rarer word, or the words in the language they "
        "were said in.")
    assert FACT_EN in results[6]  # a limit past the most is held to it, not refused
    assert events[-1].message.content.startswith("Read 7 tool results")
    await engine.provider.aclose()


async def test_turned_off_it_is_never_offered(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, history_search_tool=False, **SMALL)
    await fold_the_facts(engine)
    await send(engine, ask_call('{"query": "staging server port"}'))
    bodies = chat_bodies(fake_server.chat_requests)
    assert SUMMARY_HEADER in system_of(bodies[-1])
    assert all("tools" not in b and SUMMARY_NOTE not in system_of(b) for b in bodies)
    assert stored_results(engine) == [] and engine.front.definitions_tokens() == 0
    await engine.provider.aclose()


async def test_the_bundled_local_model_is_never_offered_it(fake_server, tmp_path):
    from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME

    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, model=LOCAL_MODEL_NAME, **SMALL)
    await fold_the_facts(engine)
    await send(engine, "Which port does the staging server listen on?")
    bodies = chat_bodies(fake_server.chat_requests)
    assert SUMMARY_HEADER in system_of(bodies[-1])  # compacted, and still no tool
    assert all("tools" not in b and SUMMARY_NOTE not in system_of(b) for b in bodies)
    assert engine.front.definitions_tokens() == 0
    await engine.provider.aclose()


class NotesBox(ToolBox):
    """An MCP server's tools as plain functions, one of them named like the built-in tool."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

    def specs(self) -> list[ToolSpec]:
        schema = {"type": "object", "properties": {"query": {"type": "string"}}}
        return [ToolSpec(HISTORY_TOOL, "Search my notes.", schema, "notes", HISTORY_TOOL)]

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        self.ran.append((spec.server, spec.tool))
        return ToolResult("a note about " + call.parsed()["query"])


async def test_a_server_s_tool_of_the_same_name_never_stands_in_for_it(fake_server, tmp_path):
    lossy(fake_server)
    box, approve = NotesBox(), never_asked()
    engine = make_engine(fake_server, tmp_path, tools=box, approve=approve, **SMALL)
    await fold_the_facts(engine)
    assert offered(fake_server.chat_requests[0].body) == [HISTORY_TOOL]  # the server's, alone
    await send(engine, "Look both up.\n" + "\n".join([
        f'call {HISTORY_TOOL} {{"query": "staging server port"}}',
        'call notes_search_history {"query": "staging"}']))
    assert offered(fake_server.chat_requests[-1].body) == ["notes_search_history", HISTORY_TOOL]
    # The built-in one ran in-process without asking; the server's was asked for, and ran there.
    assert approve.asked == ["notes_search_history"]
    assert box.ran == [("notes", HISTORY_TOOL)]
    builtin, notes = stored_results(engine)[-2:]
    assert FACT_EN in builtin and notes == "a note about staging"
    await engine.provider.aclose()


async def test_the_compaction_editor_s_estimate_counts_it_in(fake_server, tmp_path):
    """A first summary brings the note and the definition: the estimate shown before storing
    it is what the gauge then shows, even when the definitions pass the system reserve."""
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, tools=NotesBox(), approve=never_asked(),
                         **{**SMALL, "system_reserve": 48})
    for i in range(3):
        await send(engine, FILLER.format(i=i))
    assert engine.summary is None
    events = [e async for e in engine.compact(reason="manual", preview=True)]
    proposal = events[-1].proposal
    guess = engine.tokens_after(proposal, proposal.text)
    events = [e async for e in engine.commit_compaction(proposal, proposal.text)]
    assert kinds(events) == ["CompactionFinished"]
    assert engine.usage().system_overflow > 0
    assert engine.front.definitions()[-1]["name"] == HISTORY_TOOL
    assert events[0].tokens_after == engine.usage().used == guess
    await engine.provider.aclose()


async def test_ask_offers_it_and_says_it_in_one_line(home, fake_server, tmp_path):
    lossy(fake_server)
    db = tmp_path / "ask.db"
    engine = make_engine(fake_server, tmp_path, store=Store(db), **SMALL)
    await fold_the_facts(engine)
    await engine.provider.aclose()
    engine.store.close()
    result = run(home, *flags(fake_server, "--db", str(db), "--context-window", "2048",
                              "--response-reserve", "256", "--system-reserve", "128"), "ask",
                 "--session", str(engine.conversation.id),
                 ask_call('{"query": "staging server port"}'))
    assert result.returncode == 0, result.stderr
    assert "↺ searched earlier turns: 'staging server port'" in result.stderr
    assert "Read 1 tool result" in result.stdout
    tool = next(m for m in fake_server.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert FACT_EN in tool["content"]


# -- the other two wire protocols ----------------------------------------------------------------

def engine_for(settings, tmp_path) -> Engine:
    return Engine(settings, Store(tmp_path / "sessions.db"), make_provider(settings),
                  sleep=Sleeps(), jitter=lambda: 0.5)


async def test_anthropic_gets_the_definition_in_its_shape_and_the_call_round_trips(
        make_fake_anthropic, tmp_path):
    fake = make_fake_anthropic(limit=100_000, api_key="sk-ant-test")
    lossy(fake)
    engine = engine_for(replace(BASE, provider="anthropic", base_url=fake.base_url,
                                api_key="sk-ant-test", model="claude-fake", **SMALL), tmp_path)
    await fold_the_facts(engine)
    events = await send(engine, ask_call('{"query": "staging server port"}'))
    assert isinstance(events[-1], ev.Finished) and "ToolApproval" not in kinds(events)
    body = fake.message_requests[-1].body
    (tool,) = body["tools"]
    assert tool["name"] == HISTORY_TOOL and tool["input_schema"]["required"] == ["query"]
    assert SUMMARY_NOTE in text_of(body["system"])
    results = [b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1 and FACT_EN in text_of(results[0]["content"])
    await engine.provider.aclose()


async def test_ollama_gets_the_definition_and_the_call_round_trips(make_fake_ollama, tmp_path):
    fake = make_fake_ollama(default_num_ctx=2048, context_length=8192)
    lossy(fake)
    engine = engine_for(replace(BASE, provider="ollama", base_url=fake.base_url,
                                model="llama3.2", **SMALL), tmp_path)
    await fold_the_facts(engine)
    events = await send(engine, ask_call('{"query": "密码提示"}'))
    assert isinstance(events[-1], ev.Finished) and "ToolApproval" not in kinds(events)
    body = fake.chat_requests[-1].body
    assert [t["function"]["name"] for t in body["tools"]] == [HISTORY_TOOL]
    assert body["tools"][0]["type"] == "function"
    (result,) = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert FACT_ZH in result
    await engine.provider.aclose()


async def test_a_model_without_tools_goes_on_without_it(make_fake_ollama, tmp_path):
    """gemma3 on Ollama refuses any request that offers tools: the conversation worked before
    the summary and must after it; the tool is left out once, said in one line."""
    fake = make_fake_ollama(default_num_ctx=2048, context_length=8192, models=("gemma3",))
    fake.without_tools.add("gemma3")
    lossy(fake)
    engine = engine_for(replace(BASE, provider="ollama", base_url=fake.base_url,
                                model="gemma3", **SMALL), tmp_path)
    seen = await fold_the_facts(engine)
    for i in range(3):  # on after it, without tools
        events = await send(engine, FILLER.format(i=i))
        assert isinstance(events[-1], ev.Finished), events[-1]
        seen += events
    (left,) = [e for e in seen if isinstance(e, ev.ToolLeftOut)]
    assert left.name == HISTORY_TOOL and "does not support tools" in left.why
    refused = [r for r in fake.chat_requests if r.status == 400]
    assert len(refused) == 1  # asked once with it, never again
    last = fake.chat_requests[-1].body
    assert "tools" not in last and SUMMARY_NOTE not in last["messages"][0]["content"]
    assert json.dumps(last["messages"][0]).count(SUMMARY_HEADER[:40]) == 1
    await engine.provider.aclose()
    # A later run of the session (every `ask` is one) does not ask with it again.
    again = Engine(engine.settings, Store(tmp_path / "sessions.db"),
                   make_provider(engine.settings), engine.conversation.id, sleep=Sleeps())
    assert isinstance((await send(again, "One more question."))[-1], ev.Finished)
    assert [r.status for r in fake.chat_requests].count(400) == 1
    assert "tools" not in fake.chat_requests[-1].body and again.front.definitions_tokens() == 0
    await again.provider.aclose()
