"""Tools in the app: the blocks a tool call and its result draw, the approval dialog, the tool
servers' screen and notices, and the gauge's tools segment.

The blocks and the dialog are driven by posting the engine's events to the chat screen as the
chat worker would (ui.posted.wrap). The tool servers are real: the app makes its real McpHub
from MCP server entries as a user writes them (McpServerConfig: a command and its arguments, or
an address), and the servers are our own misbehaving ones (tests/mcp_servers: faulty.py,
raw_tools.py), each started once per test that needs it, in well under a second."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget
from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.messages import Message
from jarvis_tui.core.settings.mcp import McpServerConfig
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.mcp_client import McpHub
from jarvis_tui.core.tools.specs import ALWAYS, DENY, ONCE
from jarvis_tui.ui import posted
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.screens.mcp_servers import McpServersScreen
from jarvis_tui.ui.screens.tool_approval import ToolApprovalScreen, ask_approval
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from jarvis_tui.ui.widgets.tool_block import ToolBlock
from tests.faults.test_security import PAYLOAD, assert_clean
from tests.mcp_servers import ROOT, faulty_args, free_port
from tests.mcp_servers.faulty import CRASH_CODE, read_calls
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    screen_text,
    submit,
    views,
    wait_for,
)

WIDE = (160, 48)
# The tool the event-driven tests below report on (no server runs it: they post its events).
GIT_LOG = ToolSpec("git_log", "Shows the commit logs.", {"type": "object"}, "git", "git_log")
ARGS = {"repo_path": "/tmp/r", "max_count": 5}

# -- real tool servers, configured as a user configures them ---------------------------------

# The tools tests/mcp_servers/faulty.py offers, in its order.
FAULTY_TOOLS = ("echo", "slow", "crash", "leak_env", "huge", "markup", "fail", "mixed",
                "structured", "dirty")
# The last line a server that cannot start writes to stderr: markup that must stay text (short
# enough for the servers' screen to show its error on one line).
WHY = "[bold]x[/] is not 42"
START_S = 30.0  # a bound on the servers' start on a busy machine (they take about 1 s)


def stdio(name: str, *args: str, **kw: object) -> McpServerConfig:
    """A stdio server's entry: [mcp_servers.NAME] command = python, args = [...]."""
    return McpServerConfig(name, "stdio", command=sys.executable, args=args, cwd=str(ROOT),
                           **kw)


def faulty(tmp_path: Path, name: str = "faulty", **kw: object) -> McpServerConfig:
    """The faulty server, noting each call of echo and slow in tmp_path/calls.jsonl."""
    return stdio(name, *faulty_args("--calls", str(tmp_path / "calls.jsonl")), **kw)


def calls(tmp_path: Path) -> list[dict]:
    """The calls the faulty server of `faulty(tmp_path)` received."""
    return read_calls(tmp_path / "calls.jsonl")


async def servers_started(pilot, app) -> McpHub:
    """Wait for the app's start of its servers to be summed up; its real hub."""
    await wait_for(pilot, lambda: any("Tools:" in n for n in notices(app)), "the servers",
                   START_S)
    hub = app.tools.hub
    assert isinstance(hub, McpHub), hub
    return hub


def spec_of(hub: McpHub, tool: str) -> ToolSpec:
    return next(s for s in hub.specs() if s.tool == tool)


def call_message(call_id: str = "c1", args: dict | str = ARGS, text: str = "") -> Message:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return Message("assistant", text, tool_calls=[ToolCall(call_id, "git_log", arguments).wire()])


def result_message(content: str, call_id: str = "c1") -> Message:
    return Message("tool", content, tool_call_id=call_id, name="git_log")


def post(app, event: ev.Event) -> None:
    chat: ChatScreen = app.chat
    message = posted.wrap(chat.cid, event)
    assert message is not None, event
    chat.post_message(message)


async def run_call(pilot, app, output: str, *, args: dict | str = ARGS,
                   outcome: str = "ok", call_id: str = "c1") -> ToolBlock:
    """One whole tool step as the engine reports it; the result's block."""
    call = ToolCall(call_id, "git_log", args if isinstance(args, str) else json.dumps(args))
    post(app, ev.ToolCallsMade(call_message(call_id, args)))
    post(app, ev.ToolStarted(call, GIT_LOG))
    post(app, ev.ToolFinished(call, result_message(output, call_id), outcome, 0.25))
    await wait_for(pilot, lambda: any(b.info.state == "done" for b in blocks(app)
                                      if b.message.tool_call_id == call_id), "the result")
    await pilot.pause()
    return next(b for b in blocks(app) if b.message.tool_call_id == call_id)


def blocks(app) -> list[ToolBlock]:
    return list(app.chat.query(ToolBlock))


def status_line(block: ToolBlock) -> str:
    return block.status_text()


# -- the approval dialog ---------------------------------------------------------------------

async def answer(pilot, key: str) -> None:
    """A deliberate answer: Tab to the dialog's buttons, then the key (Esc needs no Tab)."""
    if key != "escape":
        await pilot.press("tab")
    await pilot.press(key)


@pytest.mark.parametrize("key, decision", [("y", ONCE), ("enter", ONCE), ("a", ALWAYS),
                                           ("n", DENY), ("escape", DENY)])
async def test_approval_keys_give_the_decision(fake_server, tmp_path, key, decision):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        call = ToolCall("c1", "git_log", json.dumps(ARGS))
        asked = asyncio.ensure_future(ask_approval(app, call, GIT_LOG))
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await pilot.pause()
        text = screen_text(app)
        assert "git_log" in text and "git" in text and '"repo_path": "/tmp/r"' in text
        assert "Shows the commit logs." in text
        await answer(pilot, key)
        assert await asyncio.wait_for(asked, 5) == decision
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen), "the chat again")


async def test_stopping_the_round_closes_the_dialog(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        asked = asyncio.ensure_future(ask_approval(app, ToolCall("c1", "git_log"), GIT_LOG))
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        asked.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asked
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen), "the dialog gone")


async def test_the_dialog_shows_hostile_arguments_as_text(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        spec = ToolSpec("evil", "[bold]desc[/] \x1b]52;c;SGVsbG8=\x07ok", {}, "srv[red]x", "evil")
        asked = asyncio.ensure_future(ask_approval(
            app, ToolCall("c1", "evil", json.dumps({"q": "[link=x]y[/link]\x1b[2J"})), spec))
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await pilot.pause()
        text = screen_text(app)
        assert_clean(text)
        assert "[bold]desc[/]" in text and "srv[red]x" in text and "[link=x]y[/link]" in text
        assert "SGVsbG8" not in text
        await answer(pilot, "n")
        assert await asyncio.wait_for(asked, 5) == DENY


# -- blocks in the conversation --------------------------------------------------------------

async def test_a_running_call_shows_a_spinner_then_its_result(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        call = ToolCall("c1", "git_log", json.dumps(ARGS))
        post(app, ev.ToolCallsMade(call_message(text="Let me look.")))
        post(app, ev.ToolApproval(call, GIT_LOG))
        await wait_for(pilot, lambda: blocks(app), "the stand-in block")
        await pilot.pause()
        assert "waiting for your approval" in status_line(blocks(app)[0])
        post(app, ev.ToolStarted(call, GIT_LOG))
        await wait_for(pilot, lambda: "running git_log" in status_line(blocks(app)[0]),
                       "the spinner")
        assert "Esc stops it" in status_line(blocks(app)[0])
        text = screen_text(app)
        assert '⚙ git · git_log  {"repo_path": "/tmp/r", "max_count": 5}' in text
        assert "Let me look." in text and "asks for git_log" in text
        post(app, ev.ToolFinished(call, result_message("commit abc\nAuthor: me"), "ok", 1.5))
        await wait_for(pilot, lambda: blocks(app)[0].info.state == "done", "the result")
        await pilot.pause()
        line = status_line(blocks(app)[0])
        assert line.startswith("✓ ") and "21 characters" in line and "1.5s" in line
        assert "running" not in screen_text(app)
        # One view per record: the stand-in became the stored result.
        assert [v.message.role for v in views(app)] == ["assistant", "tool"]
        assert views(app)[1].message.content == "commit abc\nAuthor: me"
        # The next step's text opens a new reply view under the result.
        app.chat.post_message(posted.ReplyChunk(app.chat.cid, "It was abc."))
        await wait_for(pilot, lambda: len(views(app)) == 3, "the next reply view")
        assert views(app)[2].message.role == "assistant"


async def test_a_streamed_step_that_calls_tools_ends_its_reply_view(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        cid = app.chat.cid
        app.chat.post_message(posted.ReplyChunk(cid, "Let me check the log."))
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply view")
        await run_call(pilot, app, "commit abc")
        assert app.chat.reply.view is None
        first = views(app)[0]
        assert not first.streaming and first.message.tool_calls
        assert "asks for git_log" in screen_text(app)
        app.chat.post_message(posted.ReplyChunk(cid, "Done."))
        await wait_for(pilot, lambda: len(views(app)) == 3, "a new reply view")
        assert [v.message.role for v in views(app)] == ["assistant", "tool", "assistant"]


async def test_esc_while_a_tool_runs_keeps_what_was_done(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        chat = app.chat
        chat.reply.question = Message("user", "look")
        call = ToolCall("c1", "git_log", "{}")
        post(app, ev.ToolCallsMade(call_message(args={})))
        post(app, ev.ToolStarted(call, GIT_LOG))
        await wait_for(pilot, lambda: blocks(app) and blocks(app)[0].info.state == "running",
                       "the running call")
        chat.post_message(posted.ReplyFailed(chat.cid, "", user_text="look", stopped=True))
        await wait_for(pilot, lambda: chat.reply.question is None, "the round to end")
        await wait_for(pilot, lambda: blocks(app)[0].info.state == "done", "the block to stop")
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("■ cancelled")
        assert any("tool calls and results so far are kept" in n for n in notices(app))
        assert app.chat.query_one("#prompt").text == ""  # nothing to send again


async def test_tool_output_with_markup_and_escapes_is_shown_literally(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        block = await run_call(pilot, app, PAYLOAD, args={"q": "[bold]x[/]\x1b]0;pwned\x07"})
        assert not block.query_one("Collapsible").collapsed  # one line: shown open
        text = screen_text(app)
        assert_clean(text)
        assert "see [link=https://evil.example]click[/link] and [bold]x[/] then [/]" in text
        # The title's arguments as JSON writes them: the ESC the model put in is "\u001b",
        # text, not a sequence.
        assert '{"q": "[bold]x[/]\\u001b]0;pwned' in text.replace("\n", "")
        assert "SGVsbG8" not in text


async def test_a_large_result_is_collapsed_and_a_small_one_open(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        big = "\n".join(f"line {i}" for i in range(200))
        large = await run_call(pilot, app, big, call_id="big")
        small = await run_call(pilot, app, "ok\nfine", call_id="small")
        assert large.query_one("Collapsible").collapsed
        assert not small.query_one("Collapsible").collapsed
        assert f"{len(big):,} characters" in status_line(large) and "tokens" in status_line(large)
        app.save_screenshot("tools.svg", str(tmp_path))
        assert (tmp_path / "tools.svg").exists()


async def test_denied_and_failed_calls_say_so(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        denied = await run_call(pilot, app, "The user refused.", outcome="denied",
                                call_id="d")
        failed = await run_call(pilot, app, "boom", outcome="error", call_id="e")
        assert status_line(denied).startswith("⊘ denied")
        assert status_line(failed).startswith("✗ error")
        assert denied.has_class("-denied") and failed.has_class("-error")


async def test_step_limit_and_pruned_outputs_are_told(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation(model="fake-model")
    store.add_message(conv.id, Message("user", "look at the repo"))
    store.add_message(conv.id, call_message())
    stored = store.add_message(conv.id, result_message("old output"))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=WIDE) as pilot:
        post(app, ev.ToolStepLimit(10))
        post(app, ev.ToolOutputsPruned(3, 9200, (stored.id,)))
        await wait_for(pilot, lambda: len(notices(app)) >= 2, "the notices")
        said = "\n".join(notices(app))
        assert "asked for tools 10 times in a row" in said
        assert "sent as one-line stubs" in said and "freed 9,200 tokens" in said
        await pilot.pause()
        assert "sent as a stub" in status_line(blocks(app)[0])


async def test_stored_tool_messages_render_on_load(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation(model="fake-model")
    store.add_message(conv.id, Message("user", "what changed?"))
    store.add_message(conv.id, call_message())
    store.add_message(conv.id, result_message("commit 1234 [red]fix[/red]"))
    store.add_message(conv.id, Message("assistant", "One commit: fix."))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        assert [v.message.role for v in views(app)] == ["user", "assistant", "tool",
                                                        "assistant"]
        (block,) = blocks(app)
        assert block.info.call is not None and block.info.call.id == "c1"
        assert not views(app)[2].query_one(".label").display  # the block names the tool
        assert status_line(block).startswith("✓ ")
        text = screen_text(app)
        assert '⚙ git_log  {"repo_path": "/tmp/r", "max_count": 5}' in text
        assert "commit 1234 [red]fix[/red]" in text


# -- the tool servers ---------------------------------------------------------------------------

async def test_servers_start_at_mount_and_the_screen_lists_them(fake_server, tmp_path):
    """A server that starts, one at an address nobody listens on, and one that exits at start
    saying why in markup; then the one that started crashes in the middle of a call."""
    web = f"http://127.0.0.1:{free_port()}/mcp"
    servers = (faulty(tmp_path), McpServerConfig("web", "http", url=web),
               stdio("broken", *faulty_args("--start", "exit", "--why", WHY)))
    app = make_app(fake_server, tmp_path, mcp=servers)
    async with app.run_test(size=WIDE) as pilot:
        hub = await servers_started(pilot, app)
        said = [n for n in notices(app) if "tool server" in n or "Tools:" in n]
        assert said == [
            "⚙ Starting 3 tool servers…",
            "✗ tool server web failed: server web cannot connect (All connection attempts "
            "failed)",
            f"✗ tool server broken failed: server broken exited (code 3): {WHY}",
            f"⚙ Tools: {len(FAULTY_TOOLS)} from faulty (F5 lists them)",
        ], said
        assert app.session.tools is hub and app.session.approve is not None
        assert app.tool_server("echo") == "faulty"
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, McpServersScreen), "the screen")
        await pilot.pause()
        text = screen_text(app).replace("\n", "")
        assert f"ready · stdio · {len(FAULTY_TOOLS)} tools" in text
        assert "failed · http · 0 tools" in text
        assert text.count("failed · stdio · 0 tools") == 1  # broken's
        assert "slow" in text and "Sleep, then say so." in text
        await pilot.press("down")
        await pilot.pause()
        text = screen_text(app).replace("\n", "")
        assert f"http · {web}" in text and "Error: server web cannot connect" in text
        await pilot.press("down")
        await pilot.pause()
        assert f"Error: server broken exited (code 3): {WHY}" in screen_text(app).replace(
            "\n", "")
        # A server that dies later (its crash tool exits mid-call): one notice, the call's
        # result says why, and the open screen follows.
        crashed = await hub.run(ToolCall("c9", "crash", "{}"), spec_of(hub, "crash"))
        assert crashed.is_error and f"exited (code {CRASH_CODE})" in crashed.text
        await wait_for(pilot, lambda: any("faulty failed" in n for n in notices(app)),
                       "the notice")
        await pilot.pause()
        (died,) = [n for n in notices(app) if "faulty failed" in n]
        assert died == (f"✗ tool server faulty failed: server faulty exited (code {CRASH_CODE})"
                        ": faulty: crashing on purpose")
        await pilot.press("up", "up")
        await pilot.pause()
        text = screen_text(app).replace("\n", "")
        # broken's line and now faulty's: a failed server offers no tools.
        assert text.count("failed · stdio · 0 tools") == 2 and "ready ·" not in text
        assert "No tools offered" in text
        # The hub telling of the same state again: said once.
        hub.on_change(next(s for s in hub.statuses() if s.name == "faulty"))
        await pilot.pause(0.3)
        assert sum("faulty failed" in n for n in notices(app)) == 1
        # Started again (through starting): said to be back, once, with its tools.
        await hub.start(["faulty"])
        back = f"✓ tool server faulty is ready again ({len(FAULTY_TOOLS)} tools)"
        await wait_for(pilot, lambda: back in notices(app), "the server back")
        assert notices(app).count(back) == 1
        await pilot.press("escape")
    assert app.tools.hub is None
    with pytest.raises(RuntimeError, match="closed"):  # the app closed it at exit
        await hub.start()


async def test_a_tool_left_out_is_one_warning_naming_it(fake_server, tmp_path):
    """At start, for a tool the server describes wrongly (the SDK refuses its schema);
    mid-round, for one the provider refused (the round goes on without it)."""
    raw = stdio("raw", "-m", "tests.mcp_servers.raw_tools", "both_refused", allow=("echo",))
    fake_server.script += [[{"name": "echo", "arguments": {"text": "still here"}}], "It is."]
    app = make_app(fake_server, tmp_path, mcp=(raw,))
    async with app.run_test(size=WIDE) as pilot:
        await servers_started(pilot, app)
        (said,) = [n for n in notices(app) if "left out" in n]
        assert said.startswith("⚠ tool server raw: tool 'nonsense_root' left out")
        assert "inputSchema.type" in said and "its other tools are offered" in said
        assert "⚙ Tools: 2 from raw (F5 lists them)" in notices(app)  # echo, nonsense_inside
        submit(app, "is it there?")
        await wait_for(pilot, lambda: any("refused the definition" in n for n in notices(app)),
                       "the notice")
        (said,) = [n for n in notices(app) if "refused the definition" in n]
        assert "nonsense_inside (raw)" in said and "Asking again without it" in said
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the answer", 20)
        await pilot.pause()
        assert views(app)[-1].message.content == "It is."
        assert "still here" in screen_text(app)  # echo ran in the round that went on
        offered = [[t["function"]["name"] for t in r.body.get("tools") or []]
                   for r in fake_server.chat_requests]
        assert "nonsense_inside" in offered[0] and "nonsense_inside" not in offered[-1]


async def test_no_servers_change_nothing(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.tools is not None and app.tools.hub is None
        assert app.session.tools is None and app.session.approve is None
        assert not any("tool" in n.lower() for n in notices(app))
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, McpServersScreen), "the screen")
        await pilot.pause()
        assert "No tool servers are configured" in screen_text(app)


async def test_a_hub_that_cannot_be_made_is_a_notice(fake_server, tmp_path):
    def broken(settings):
        raise ValueError("bad [mcp_servers] entry")

    app = make_app(fake_server, tmp_path)
    app.hub_factory = broken
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("could not be started" in n for n in notices(app)),
                       "the notice")
        assert app.is_running and app.session.tools is None


# -- the gauge ------------------------------------------------------------------------------

async def test_the_gauge_draws_tools_apart_from_history(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.chat.query_one(TokenGauge)
        usage = Budget(12_000, 1_500, 500, 0.7).usage(
            system=0, summary=0, history=3_000, pending=0, source="estimated", tools=1_200)
        gauge.update_usage(usage)
        await pilot.pause()
        text = gauge.render().plain
        history = next(line for line in text.split("\n") if "history" in line)
        tools = next(line for line in text.split("\n") if "tools" in line)
        assert history.endswith("1,800") and tools.endswith("1,200")
        assert "▚" in text


def test_the_core_still_never_imports_textual():
    core = Path(__file__).parents[2] / "jarvis_tui" / "core"
    for path in core.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "import textual" not in source and "from textual" not in source, path


# -- through the real engine: the scripted fake server asks for tools ------------------------

RESULT = "commit abc [b]fix[/b]\nAuthor: me"  # what the faulty server's echo sends back


async def test_a_round_with_a_tool_call_asks_runs_and_answers(fake_server, tmp_path):
    fake_server.script += [[{"name": "echo", "arguments": {"text": RESULT}}],
                           "The last commit is abc."]
    app = make_app(fake_server, tmp_path, mcp=(faulty(tmp_path),))
    async with app.run_test(size=WIDE) as pilot:
        await servers_started(pilot, app)
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await pilot.pause()
        assert calls(tmp_path) == []  # asked first
        await answer(pilot, "y")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the answer", 20)
        await pilot.pause()
        assert calls(tmp_path) == [{"tool": "echo", "arguments": {"text": RESULT}}]
        assert [v.message.role for v in views(app)] == ["user", "assistant", "tool",
                                                        "assistant"]
        assert views(app)[-1].message.content == "The last commit is abc."
        (block,) = blocks(app)
        assert status_line(block).startswith("✓ ") and block.message.id is not None
        assert "⚙ faulty · echo" in screen_text(app)
        assert "commit abc [b]fix[/b]" in screen_text(app)
        assert app.chat.query_one(TokenGauge).usage.tools > 0
        # Opened again from the store, the session looks the same.
        await app.open_session(app.chat.cid)
        await pilot.pause()
        assert [v.message.role for v in views(app)] == ["user", "assistant", "tool",
                                                        "assistant"]
        assert status_line(blocks(app)[0]).startswith("✓ ")


async def test_a_denied_call_shows_denied_then_and_after_a_reload(fake_server, tmp_path):
    fake_server.script += [[{"name": "echo", "arguments": {"text": RESULT}}], "I may not look."]
    app = make_app(fake_server, tmp_path, mcp=(faulty(tmp_path),))
    async with app.run_test(size=WIDE) as pilot:
        await servers_started(pilot, app)
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await answer(pilot, "n")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the answer", 20)
        await pilot.pause()
        assert calls(tmp_path) == []  # the server never heard of it
        assert status_line(blocks(app)[0]).startswith("⊘ denied")
        await app.open_session(app.chat.cid)
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("⊘ denied")


async def test_esc_stops_a_running_tool(fake_server, tmp_path):
    fake_server.script += [[{"name": "slow", "arguments": {"seconds": 120}}]]
    app = make_app(fake_server, tmp_path, mcp=(faulty(tmp_path),))
    async with app.run_test(size=WIDE) as pilot:
        hub = await servers_started(pilot, app)
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await answer(pilot, "a")
        await wait_for(pilot, lambda: blocks(app) and blocks(app)[0].info.state == "running",
                       "the running call")
        await wait_for(pilot, lambda: calls(tmp_path), "the call to reach the server")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the stop")
        await wait_for(pilot, lambda: blocks(app)[0].info.state == "done", "the block")
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("■ cancelled")
        assert any("tool calls and results so far are kept" in n for n in notices(app))
        # Only the call stopped: the server is still there for the next one.
        assert [s.state for s in hub.statuses()] == ["ready"]
        await app.open_session(app.chat.cid)
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("■ cancelled")


async def test_a_real_hub_whose_server_cannot_start_is_one_notice(fake_server, tmp_path):
    from jarvis_tui.core.settings.mcp import McpServerConfig

    missing = McpServerConfig("ghost", "stdio", command=str(tmp_path / "no-such-server"))
    app = make_app(fake_server, tmp_path, mcp=(missing,))
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, lambda: any("ghost failed" in n for n in notices(app)),
                       "the failure", 30)
        said = [n for n in notices(app) if "tool server" in n]
        assert said[0] == "⚙ Starting the tool server ghost…" and len(said) == 2, said
        assert app.is_running and app.session.tools is app.tools.hub
    assert app.tools.hub is None  # closed at exit
