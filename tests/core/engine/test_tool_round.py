"""The round's tool loop against the strict fake server over loopback: model -> tool calls ->
results -> model until it answers, every call answered by a stored result, the user deciding,
and the biggest outputs never sinking the window."""

from __future__ import annotations

import asyncio
import json

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.messages import is_orphan, split_groups
from jarvis_tui.core.store.export import to_markdown
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.outputs import CUT_MARKER
from jarvis_tui.core.tools.specs import ALWAYS, DENY, ONCE, ToolBox
from tests.engine_helpers import kinds, make_engine, send

OBJECT = {"type": "object", "properties": {"path": {"type": "string"}}}


class Box(ToolBox):
    """Tools of plain functions: the edge of the world for the engine (the MCP client has its
    own tests against real servers)."""

    def __init__(self, **tools):
        self.tools = tools
        self.calls: list[tuple[str, dict]] = []

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name, f"the {name} tool", OBJECT, server="box", tool=name)
                for name in self.tools]

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        args = call.parsed()
        self.calls.append((call.name, args))
        out = self.tools[call.name](**args)
        if asyncio.iscoroutine(out):
            out = await out
        return out if isinstance(out, ToolResult) else ToolResult(str(out))


def always(decision: str):
    asked = []

    async def approve(call: ToolCall, spec: ToolSpec) -> str:
        asked.append(call.name)
        return decision
    approve.asked = asked  # type: ignore[attr-defined]
    return approve


def numbered(n: int, word: str = "line") -> str:
    return "\n".join(f"{word} {i:05d} of the file, 读取文件内容 {i}" for i in range(n))


def requests_messages(fake) -> list[list[dict]]:
    return [r.body["messages"] for r in fake.chat_requests]


def assert_pairs_whole(messages: list[dict]) -> None:
    """Every tool result follows the call that asked for it and every call has its result."""
    asked: set[str] = set()
    for m in messages:
        if m.get("tool_calls"):
            asked = {c["id"] for c in m["tool_calls"]}
        elif m["role"] == "tool":
            assert m["tool_call_id"] in asked, m
            asked.discard(m["tool_call_id"])
        elif asked:
            raise AssertionError(f"calls {asked} left without results before {m['role']}")


async def test_a_round_runs_tools_until_the_model_answers(make_fake_server, tmp_path):
    fake = make_fake_server()
    fake.script += [[{"name": "read", "arguments": {"path": "src/app.py"}}],
                    [{"name": "read", "arguments": {"path": "配置/设置.toml"}}],
                    "The port is 8443."]
    box = Box(read=lambda path: f"contents of {path}: port = 8443")
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE))
    events = await send(engine, "Which port does the app use?")
    assert kinds(events).count("ToolCallsMade") == 2
    assert kinds(events).count("ToolFinished") == 2
    assert isinstance(events[-1], ev.Finished) and events[-1].message.content == "The port is 8443."
    assert box.calls == [("read", {"path": "src/app.py"}), ("read", {"path": "配置/设置.toml"})]
    # The tools were offered, and the last request carried both pairs back, whole.
    last = fake.chat_requests[-1].body
    assert [t["function"]["name"] for t in last["tools"]] == ["read"]
    assert_pairs_whole(last["messages"])
    assert [m["role"] for m in last["messages"][1:]] == [
        "user", "assistant", "tool", "assistant", "tool"]
    # Everything is stored, in order, and reads back the same after a restart.
    stored = Store(tmp_path / "sessions.db").messages(engine.conversation.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "tool",
                                        "assistant"]
    assert stored[1].tool_calls[0]["function"]["name"] == "read"
    assert stored[4].content == "contents of 配置/设置.toml: port = 8443"


async def test_each_request_starts_with_the_one_before(make_fake_server, tmp_path):
    """A tool step appends to the request; it never rewrites its front (the provider's cache)."""
    fake = make_fake_server()
    fake.script += [[{"name": "read", "arguments": {"path": "a"}}],
                    [{"name": "read", "arguments": {"path": "b"}}], "done"]
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: f"file {path}"),
                         approve=always(ONCE))
    await send(engine, "read a then b")
    fake.script.append("fine")
    await send(engine, "thanks")
    bodies = requests_messages(fake)
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert after[:len(before)] == before


async def test_the_user_decides(make_fake_server, tmp_path):
    fake = make_fake_server()
    ran: list[str] = []
    box = Box(rm=lambda path: ran.append(path) or "removed")
    fake.script += [[{"name": "rm", "arguments": {"path": "/etc"}}], "I was not allowed."]
    deny = always(DENY)
    engine = make_engine(fake, tmp_path, tools=box, approve=deny)
    events = await send(engine, "clean up")
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert [e.outcome for e in finished] == ["denied"] and ran == []
    assert any(isinstance(e, ev.ToolApproval) for e in events)
    # The model was told, as an error result.
    sent = fake.chat_requests[-1].body["messages"][-1]
    assert sent["role"] == "tool" and sent["content"].startswith("Error: ")
    # "Always" asks once, then runs the tool for the rest of the session without asking.
    yes = always(ALWAYS)
    engine.approve = yes
    fake.script += [[{"name": "rm", "arguments": {"path": "a"}}],
                    [{"name": "rm", "arguments": {"path": "b"}}], "ok"]
    await send(engine, "again")
    assert yes.asked == ["rm"] and ran == ["a", "b"]


async def test_without_a_way_to_ask_only_allowlisted_tools_run(make_fake_server, tmp_path):
    fake = make_fake_server()
    box = Box(time=lambda: "12:00", shell=lambda: "ran")
    fake.script += [[{"name": "shell", "arguments": {}}, {"name": "time", "arguments": {}}],
                    "ok"]
    engine = make_engine(fake, tmp_path, tools=box)
    engine.tool_policy.allowed.add(("box", "time"))
    events = await send(engine, "what time is it")
    outcomes = {e.call.name: e.outcome for e in events if isinstance(e, ev.ToolFinished)}
    assert outcomes == {"shell": "denied", "time": "ok"}
    refused = next(e for e in events if isinstance(e, ev.ToolFinished) and e.call.name == "shell")
    assert "--allow-tool box.shell" in refused.result.content


class TwoServers(Box):
    """Servers a and b each offering `read`, named for the model as the MCP client names
    them when two servers share a tool."""

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(f"{server}_read", f"{server}'s read", OBJECT, server=server,
                         tool="read") for server in ("a", "b")]


async def test_always_allow_of_one_servers_tool_leaves_anothers_asking(make_fake_server,
                                                                      tmp_path):
    fake = make_fake_server()
    box = TwoServers(a_read=lambda path: "a's notes", b_read=lambda path: "/etc/shadow")
    fake.script += [[{"name": "a_read", "arguments": {"path": "x"}}], "ok",
                    [{"name": "a_read", "arguments": {"path": "y"}},
                     {"name": "b_read", "arguments": {"path": "/etc/shadow"}}], "done"]
    yes = always(ALWAYS)
    engine = make_engine(fake, tmp_path, tools=box, approve=yes)
    await send(engine, "read my notes")
    assert engine.tool_policy.always == {("a", "read")}
    engine.approve = no = always(DENY)
    events = await send(engine, "and again")
    outcomes = [(e.call.name, e.outcome) for e in events if isinstance(e, ev.ToolFinished)]
    assert outcomes == [("a_read", "ok"), ("b_read", "denied")]
    assert no.asked == ["b_read"] and box.calls == [("a_read", {"path": "x"}),
                                                    ("a_read", {"path": "y"})]


async def test_unknown_tools_and_bad_arguments_go_back_as_errors(make_fake_server, tmp_path):
    fake = make_fake_server()
    fake.script += [[{"name": "nope", "arguments": {}},
                     {"name": "read", "arguments": '{"path": "x"'}], "sorry"]
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: "x"), approve=always(ONCE))
    events = await send(engine, "go")
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert [e.outcome for e in finished] == ["unknown", "bad_arguments"]
    assert "there is no tool named 'nope'" in finished[0].result.content
    assert "not valid JSON" in finished[1].result.content
    assert isinstance(events[-1], ev.Finished)


async def test_a_failing_or_hanging_tool_is_an_error_result(make_fake_server, tmp_path):
    async def hang(path):
        await asyncio.sleep(30)

    def boom(path):
        raise RuntimeError("disk on fire")

    fake = make_fake_server()
    fake.script += [[{"name": "hang", "arguments": {"path": "a"}},
                     {"name": "boom", "arguments": {"path": "b"}}], "both failed"]
    engine = make_engine(fake, tmp_path, tools=Box(hang=hang, boom=boom), approve=always(ONCE),
                         tool_timeout=0.3)
    events = await send(engine, "go")
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert [e.outcome for e in finished] == ["error", "error"]
    assert "did not finish within 0.3 s" in finished[0].result.content
    assert "disk on fire" in finished[1].result.content
    assert events[-1].message.content == "both failed"


async def test_esc_while_a_tool_runs_keeps_every_pair_whole(make_fake_server, tmp_path):
    started = asyncio.Event()

    async def slow(path):
        started.set()
        await asyncio.sleep(30)

    fake = make_fake_server()
    fake.script += [[{"name": "slow", "arguments": {"path": "a"}},
                     {"name": "slow", "arguments": {"path": "b"}}]]
    engine = make_engine(fake, tmp_path, tools=Box(slow=slow), approve=always(ONCE))
    task = asyncio.create_task(send(engine, "go slow"))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = Store(tmp_path / "sessions.db").messages(engine.conversation.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "tool"]
    assert all("stopped this tool call" in m.content for m in stored[2:])
    # The next round sends the stopped turn whole, and the strict server takes it.
    fake.script.append("ok then")
    events = await send(engine, "never mind")
    assert isinstance(events[-1], ev.Finished)
    assert_pairs_whole(fake.chat_requests[-1].body["messages"])


async def test_calls_a_killed_process_left_unanswered_are_answered(make_fake_server, tmp_path):
    fake = make_fake_server()
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: "x"), approve=always(ONCE))
    fake.script.append("hello")
    await send(engine, "hi")
    # As a process killed while its tool ran leaves the session: a call, no result.
    from jarvis_tui.core.messages import Message
    store = engine.store
    store.add_message(engine.conversation.id, Message("user", "read it"))
    call = {"id": "call_9", "type": "function",
            "function": {"name": "read", "arguments": "{\"path\": \"a\"}"}}
    store.add_message(engine.conversation.id, Message("assistant", "", tool_calls=[call]))
    again = make_engine(fake, tmp_path, tools=engine.tools, approve=always(ONCE),
                        conversation_id=engine.conversation.id, store=store)
    fake.script.append("answered")
    events = await send(again, "still there?")
    assert isinstance(events[-1], ev.Finished)
    sent = fake.chat_requests[-1].body["messages"]
    assert_pairs_whole(sent)
    result = next(m for m in sent if m["role"] == "tool")
    assert "interrupted" in result["content"]
    assert any(m["content"] == "read it" for m in sent if m["role"] == "user")


async def test_the_step_limit_makes_the_model_answer(make_fake_server, tmp_path):
    fake = make_fake_server()
    fake.script += [[{"name": "read", "arguments": {"path": str(i)}}] for i in range(3)]
    fake.script.append("With what I have: done.")
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: f"part {path}"),
                         approve=always(ONCE), tool_max_steps=3)
    events = await send(engine, "read forever")
    assert kinds(events).count("ToolStepLimit") == 1
    assert "tools" not in fake.chat_requests[-1].body  # asked to answer without tools
    assert events[-1].message.content == "With what I have: done."


async def test_a_huge_result_goes_head_and_tail_and_stays_whole_in_store(make_fake_server,
                                                                          tmp_path):
    fake = make_fake_server(limit=4096)
    big = numbered(2000)  # tens of thousands of tokens: the seed's "one call returned a file"
    fake.script += [[{"name": "read", "arguments": {"path": "big.log"}}], "read it"]
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: big), approve=always(ONCE))
    events = await send(engine, "read big.log")
    assert isinstance(events[-1], ev.Finished), events[-1]
    sent = next(m for m in fake.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert sent["content"].startswith("line 00000")
    assert sent["content"].endswith("读取文件内容 1999")
    assert "call the tool again with narrower arguments" in sent["content"]
    assert len(sent["content"]) < len(big) // 4
    stored = Store(tmp_path / "sessions.db").messages(engine.conversation.id)
    assert next(m for m in stored if m.role == "tool").content == big
    # Later requests send it cut the same way: the prefix stays the same.
    fake.script.append("yes")
    await send(engine, "and?")
    again = next(m for m in fake.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert again["content"] == sent["content"]
    assert CUT_MARKER.split("{n}")[1][:40] in again["content"]


async def test_old_outputs_become_stubs_before_anything_is_summarised(make_fake_server,
                                                                       tmp_path):
    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(60, path))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), tool_keep_outputs=1)
    for name in ("alpha", "beta", "gamma", "delta", "epsilon"):
        fake.script += [[{"name": "read", "arguments": {"path": name}}], f"read {name}"]
    pruned, compacted = [], []
    for name in ("alpha", "beta", "gamma", "delta", "epsilon"):
        events = await send(engine, f"read {name}")
        assert isinstance(events[-1], ev.Finished), events[-1]
        pruned += [e for e in events if isinstance(e, ev.ToolOutputsPruned)]
        compacted += [e for e in events if isinstance(e, ev.CompactionStarted)]
    assert pruned, "the outputs were never stubbed"
    assert not compacted, "a summary was made though stubs were enough"
    last = fake.chat_requests[-1].body["messages"]
    assert_pairs_whole(last)
    stubs = [m for m in last if m["role"] == "tool" and "Tool output not repeated" in m["content"]]
    assert stubs and all("read(" in s["content"] for s in stubs)
    assert '"path": "alpha"' in stubs[0]["content"]
    whole = [m for m in last if m["role"] == "tool" and m not in stubs]
    assert len(whole) >= 1 and "epsilon" in whole[-1]["content"]


async def test_tools_through_a_long_session_at_4096(make_fake_server, tmp_path):
    """Turns of 2k-6k-token outputs at a strict 4,096-token server: every turn answered, no
    pair ever split in a request, nothing lost in the export."""
    fake = make_fake_server(limit=4096)
    sizes = [400, 150, 900, 300, 1200, 80, 700, 500, 1500, 250, 600, 1000]
    box = Box(read=lambda path: numbered(int(path), f"f{path}"))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE))
    for turn, n in enumerate(sizes):
        fake.script += [[{"name": "read", "arguments": {"path": str(n)}}], f"answer {turn}"]
    failures = []
    for turn, n in enumerate(sizes):
        events = await send(engine, f"turn {turn}: read the file of {n} lines")
        if not isinstance(events[-1], ev.Finished):
            failures.append(events[-1])
    assert failures == []
    for r in fake.chat_requests:
        if "tools" in r.body:
            assert_pairs_whole(r.body["messages"])
    assert all(r.status == 200 for r in fake.chat_requests)
    data = engine.store.export(engine.conversation.id)
    text = to_markdown(data)
    for n in sizes:
        assert f"f{n} {n - 1:05d} of the file" in text  # every output whole in the export
    groups = split_groups(engine.messages)
    assert not any(is_orphan(g) for g in groups)


def test_stored_calls_read_back_as_they_were(tmp_path):
    store = Store(tmp_path / "s.db")
    conv = store.create_conversation(model="m")
    from jarvis_tui.core.messages import Message
    call = {"id": "c1", "type": "function",
            "function": {"name": "git_log", "arguments": json.dumps({"路径": "仓库"},
                                                                     ensure_ascii=False)}}
    msg = Message("assistant", "", tool_calls=[call])
    store.add_message(conv.id, msg)
    msg.content = "looking"
    store.update_message(msg)
    assert store.messages(conv.id)[0].tool_calls == [call]


@pytest.mark.parametrize("kind", ["anthropic", "ollama"])
async def test_the_loop_speaks_each_protocol(kind, request, tmp_path):
    """The same round through Anthropic's tool_use/tool_result and Ollama's tools, against
    their fakes: the strict Anthropic fake refuses a split pair, so an answer means whole."""
    from dataclasses import replace

    from jarvis_tui.core.engine.engine import Engine
    from jarvis_tui.core.providers.anthropic import AnthropicProvider
    from jarvis_tui.core.providers.ollama import OllamaProvider
    from tests.engine_helpers import BASE, Sleeps

    fake = request.getfixturevalue(f"make_fake_{kind}")()
    provider = (AnthropicProvider(fake.base_url, "sk-test") if kind == "anthropic"
                else OllamaProvider(fake.base_url))
    model = "llama3.2" if kind == "ollama" else "claude-fake"
    settings = replace(BASE, provider=kind, base_url=fake.base_url, model=model)
    box = Box(read=lambda path: f"{path}: 端口 8443")
    engine = Engine(settings, Store(tmp_path / "s.db"), provider, tools=box,
                    approve=always(ONCE), sleep=Sleeps())
    fake.script += [[{"name": "read", "arguments": {"path": "配置.toml"}}],
                    [{"name": "read", "arguments": {"path": "b"}}], "端口是 8443。"]
    events = await send(engine, "端口是多少？")
    assert isinstance(events[-1], ev.Finished), events[-1]
    assert events[-1].message.content == "端口是 8443。"
    assert box.calls == [("read", {"path": "配置.toml"}), ("read", {"path": "b"})]
    fake.script.append("好的")
    events = await send(engine, "谢谢")
    assert isinstance(events[-1], ev.Finished), events[-1]
    await provider.aclose()


async def test_an_overflow_stubs_old_outputs_before_it_summarises(make_fake_server, tmp_path):
    """Told 8,192 while the server has 4,096: the refusal is answered by stubbing old tool
    outputs first, and the same round then goes through."""
    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(70, path))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), context_window=8192,
                         tool_keep_outputs=1)
    names = ["one", "two", "three", "four"]
    for name in names:
        fake.script += [[{"name": "read", "arguments": {"path": name}}], f"read {name}"]
    seen = []
    for name in names:
        events = await send(engine, f"read {name}")
        assert isinstance(events[-1], ev.Finished), events[-1]
        seen += [type(e).__name__ for e in events]
    assert "ContextLimitLearned" in seen
    assert seen.index("ToolOutputsPruned") < (seen.index("CompactionStarted")
                                              if "CompactionStarted" in seen else len(seen))
    assert any(r.status == 400 for r in fake.chat_requests)  # it did overflow, and recovered
    assert_pairs_whole(fake.chat_requests[-1].body["messages"])


async def test_a_tool_output_is_found_again_by_recall_after_compactions(fake_server, tmp_path):
    """A tool result is a message like any other: the summary drops it, recall brings its turn
    back when a later question is about it."""
    from tests.core.recall.test_recall import compact_times, lossy, recalled_block

    lossy(fake_server)
    out = "[collector]\nservice = metrics_collector\nlisten_port = 48213\nretention = 14d"
    engine = make_engine(fake_server, tmp_path, tools=Box(read=lambda path: out),
                         approve=always(ONCE), context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                         details_max_tokens=0)
    fake_server.script += [[{"name": "read", "arguments": {"path": "conf/collector.toml"}}],
                           "It is configured."]
    await send(engine, "Read the collector config please.")
    await compact_times(engine, 2)
    assert all(m.covered for m in engine.messages[:4])
    assert "48213" not in engine.summary.content
    await send(engine, "Which listen_port does the metrics_collector use again?")
    assert "listen_port = 48213" in recalled_block(fake_server.chat_requests[-1])


async def test_the_ledger_keeps_what_tools_touched(fake_server, tmp_path):
    """A summary that drops everything still leaves the path a tool read and the number it
    found, word for word in the details ledger."""
    from tests.core.recall.test_recall import compact_times, lossy

    lossy(fake_server)
    out = "[collector]\nservice = metrics_collector\nlisten_port = 48213\nretention = 14d"
    engine = make_engine(fake_server, tmp_path, tools=Box(read=lambda path: out),
                         approve=always(ONCE), context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    fake_server.script += [[{"name": "read", "arguments": {"path": "conf/collector.toml"}}],
                           "It is configured."]
    await send(engine, "Read the collector config please.")
    await compact_times(engine, 1)
    assert engine.messages[2].covered
    assert "conf/collector.toml" in engine.summary.content
    assert "48213" in engine.summary.content


async def test_no_summary_is_asked_for_when_too_little_is_left_to_fold(make_fake_server,
                                                                         tmp_path):
    """A short first turn behind a newest turn of large outputs: summarising the short turn
    could free nothing (its summary and ledger would be as long), so no request is made."""
    from tests.engine_helpers import is_summary_request

    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(60, path))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), tool_keep_outputs=3)
    fake.script.append("hi")
    await send(engine, "hello")
    fake.script += [[{"name": "read", "arguments": {"path": p}} for p in "abc"], "read all"]
    events = await send(engine, "read a, b and c")
    assert isinstance(events[-1], ev.Finished), events[-1]
    held = [e for e in events if isinstance(e, ev.CompactionHeld)]
    assert [h.why for h in held] == ["small"]
    assert not any(is_summary_request(r.body) for r in fake.chat_requests)


def test_tool_definitions_that_crowd_the_budget_are_warned_of(make_fake_server, tmp_path):
    from jarvis_tui.texts.notices import tools_weight

    fake = make_fake_server()
    few = make_engine(fake, tmp_path, tools=Box(a=str, b=str))
    assert tools_weight(2, few.front.definitions_tokens(), few.budget.tokens) is None
    many = Box(**{f"tool_number_{i}_with_a_long_name": str for i in range(60)})
    engine = make_engine(fake, tmp_path, tools=many, context_window=2048)
    # Counted like the system prompt: the gauge's "system over reserve" grows with them.
    assert engine.usage().system > engine.front.definitions_tokens() > engine.budget.tokens / 3
    line = tools_weight(60, engine.front.definitions_tokens(), engine.budget.tokens, "zh")
    assert line is not None and "60 个工具" in line


def test_the_bundled_models_tools_line_is_in_the_users_language():
    from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
    from jarvis_tui.texts.notices import tools_warnings

    assert tools_warnings(LOCAL_MODEL_NAME, 0, 0, 1000) == []  # no tools, nothing to say
    assert tools_warnings("gpt-4o", 2, 10, 1000) == []
    (zh,) = tools_warnings(LOCAL_MODEL_NAME, 2, 10, 1000, "zh")
    assert zh.startswith("ℹ 内置的本地模型") and LOCAL_MODEL_NAME in zh
    heavy, local = tools_warnings(LOCAL_MODEL_NAME, 60, 900, 1000)
    assert heavy.startswith("⚠ The definitions of 60 tools") and "seldom" in local


async def test_a_new_output_share_weighs_the_results_again(make_fake_server, tmp_path):
    from dataclasses import replace

    fake = make_fake_server(limit=16384)
    engine = make_engine(fake, tmp_path, tools=Box(read=lambda path: numbered(100)),
                         approve=always(ONCE), context_window=16384)
    fake.script += [[{"name": "read", "arguments": {"path": "a"}}], "read"]
    await send(engine, "read a")
    first = next(m for m in fake.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert "left out of the request" not in first["content"]  # under a quarter of 16k
    engine.apply_settings(replace(engine.settings, tool_output_share=0.05))
    fake.script.append("ok")
    await send(engine, "again")
    now = next(m for m in fake.chat_requests[-1].body["messages"] if m["role"] == "tool")
    assert "left out of the request" in now["content"]


async def test_stubs_are_sent_the_same_after_a_restart(make_fake_server, tmp_path):
    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(60, path))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), tool_keep_outputs=1)
    for name in ("alpha", "beta", "gamma"):
        fake.script += [[{"name": "read", "arguments": {"path": name}}], f"read {name}"]
        await send(engine, f"read {name}")
    before = fake.chat_requests[-1].body["messages"]
    assert any("Tool output not repeated" in m["content"] for m in before if m["role"] == "tool")
    again = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), tool_keep_outputs=1,
                        conversation_id=engine.conversation.id, store=engine.store)
    fake.script.append("ok")
    events = await send(again, "and now?")
    assert not any(isinstance(e, ev.ToolOutputsPruned) for e in events)
    after = fake.chat_requests[-1].body["messages"]
    assert after[:len(before)] == before  # the front as sent before the restart, byte for byte


async def test_a_database_lock_held_while_a_tool_runs_delays_its_result_only(make_fake_server,
                                                                             tmp_path):
    """Another program holds the write lock when the result is to be saved: the round waits
    for it and goes on; nothing is lost."""
    import sqlite3
    import threading

    held, release = threading.Event(), threading.Event()

    def other_program() -> None:
        with sqlite3.connect(tmp_path / "sessions.db", timeout=10) as db:
            db.execute("BEGIN IMMEDIATE")
            held.set()
            release.wait(10)
            db.execute("COMMIT")

    async def read(path):
        threading.Thread(target=other_program, daemon=True).start()
        await asyncio.to_thread(held.wait, 5)
        asyncio.get_running_loop().call_later(1.5, release.set)
        return "the file, read under a lock"

    fake = make_fake_server()
    fake.script += [[{"name": "read", "arguments": {"path": "a"}}], "done"]
    engine = make_engine(fake, tmp_path, tools=Box(read=read), approve=always(ONCE))
    events = await send(engine, "read a")
    assert isinstance(events[-1], ev.Finished), events[-1]
    stored = Store(tmp_path / "sessions.db").messages(engine.conversation.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[2].content == "the file, read under a lock"
