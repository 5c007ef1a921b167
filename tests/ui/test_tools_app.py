"""Tools in the app: the blocks a tool call and its result draw, the approval dialog, the tool
servers' screen and notices, and the gauge's tools segment.

The engine's tool loop is driven here by posting its events to the chat screen as the chat
worker would (ui.posted.wrap), and the MCP hub is a fake with the hub's interface."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.specs import ALWAYS, DENY, ONCE, ToolCall, ToolResult, ToolSpec
from jarvis_tui.ui import posted
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.screens.mcp_servers import McpServersScreen
from jarvis_tui.ui.screens.tool_approval import ToolApprovalScreen, ask_approval
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from jarvis_tui.ui.widgets.tool_block import ToolBlock
from tests.faults.test_security import PAYLOAD, assert_clean
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
GIT_LOG = ToolSpec("git_log", "Shows the commit logs.", {"type": "object"}, "git", "git_log")
ARGS = {"repo_path": "/tmp/r", "max_count": 5}


@dataclass
class Status:
    name: str
    transport: str = "stdio"
    state: str = "starting"
    error: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    detail: str = ""
    started_s: float | None = None
    left_out: tuple[tuple[str, str], ...] = ()


@dataclass
class FakeHub:
    """McpHub's interface: start() brings each server to its `final` state."""

    servers: list[Status]
    final: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    on_change: object = None
    closed: bool = False

    async def start(self) -> None:
        for status in self.servers:
            status.state, status.error = self.final.get(status.name, ("ready", None))
            if status.state == "ready":
                status.started_s = 0.4
            if callable(self.on_change):
                self.on_change(status)

    async def aclose(self) -> None:
        self.closed = True

    def statuses(self) -> list[Status]:
        return list(self.servers)

    def specs(self) -> list[ToolSpec]:
        return [t for s in self.servers if s.state == "ready" for t in s.tools]

    def allowed(self, spec: ToolSpec) -> bool:
        return False

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        return ToolResult("ran")


def two_servers() -> FakeHub:
    git = Status("git", detail="uvx mcp-server-git",
                 tools=(GIT_LOG, ToolSpec("git_status", "Working tree status.", {}, "git",
                                          "git_status")))
    web = Status("web", transport="http", detail="http://127.0.0.1:9/mcp")
    return FakeHub([git, web], final={"web": ("failed", "connection refused [bold]x[/]")})


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
        await wait_for(pilot, lambda: app.chat.reply_view is not None, "the reply view")
        await run_call(pilot, app, "commit abc")
        assert app.chat.reply_view is None
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
        chat.sending = Message("user", "look")
        call = ToolCall("c1", "git_log", "{}")
        post(app, ev.ToolCallsMade(call_message(args={})))
        post(app, ev.ToolStarted(call, GIT_LOG))
        await wait_for(pilot, lambda: blocks(app) and blocks(app)[0].info.state == "running",
                       "the running call")
        chat.post_message(posted.ReplyFailed(chat.cid, "", user_text="look", stopped=True))
        await wait_for(pilot, lambda: chat.sending is None, "the round to end")
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
    hub = two_servers()
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, lambda: any("Tools:" in n for n in notices(app)), "ready")
        said = notices(app)
        assert "⚙ Starting 2 tool servers…" in said
        assert "⚙ Tools: 2 from git (F5 lists them)" in said
        assert "✗ tool server web failed: connection refused [bold]x[/]" in said
        assert app.session.tools is hub and app.session.approve is not None
        assert app.tool_server("git_log") == "git"
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, McpServersScreen), "the screen")
        await pilot.pause()
        text = screen_text(app).replace("\n", "")
        assert "ready · stdio · 2 tools" in text and "failed · http · 0 tools" in text
        assert "git_status" in text and "Shows the commit logs." in text
        await pilot.press("down")
        await pilot.pause()
        assert "Error: connection refused [bold]x[/]" in screen_text(app).replace("\n", "")
        # A server that dies later: one notice, and the open screen follows.
        hub.servers[0].state, hub.servers[0].error = "failed", "exited with code 1"
        hub.on_change(hub.servers[0])
        await wait_for(pilot, lambda: any("git failed: exited" in n for n in notices(app)),
                       "the notice")
        await pilot.pause()
        assert "failed · stdio · 2 tools" in screen_text(app).replace("\n", "")
        hub.on_change(hub.servers[0])  # the same state again: said once
        await pilot.pause()
        assert sum("git failed" in n for n in notices(app)) == 1
        await pilot.press("escape")
    assert hub.closed


async def test_a_tool_left_out_is_one_warning_naming_it(fake_server, tmp_path):
    """At start, for a tool the server described wrongly; mid-round, for one the provider
    refused (the round goes on without it)."""
    hub = two_servers()
    hub.servers[0].left_out = (("'bad'", "inputSchema.type: Input should be 'object'"),)
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, lambda: any("Tools:" in n for n in notices(app)), "ready")
        (said,) = [n for n in notices(app) if "left out" in n]
        assert said.startswith("⚠ tool server git: tool 'bad' left out")
        assert "inputSchema.type" in said and "its other tools are offered" in said
        post(app, ev.ToolLeftOut("git_log", "git", "Invalid schema for function 'git_log'."))
        await wait_for(pilot, lambda: any("refused the definition" in n for n in notices(app)),
                       "the notice")
        (said,) = [n for n in notices(app) if "refused the definition" in n]
        assert "git_log (git)" in said and "Asking again without it" in said


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

class GitBox(FakeHub):
    """A ready hub whose git_log answers, or waits until stopped when `hang`."""

    def __init__(self, hang: bool = False) -> None:
        super().__init__([Status("git", state="ready", tools=(GIT_LOG,))])
        self.hang = hang
        self.ran: list[dict] = []

    async def start(self) -> None:
        pass

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        self.ran.append(call.parsed())
        if self.hang:
            await asyncio.Event().wait()
        return ToolResult("commit abc [b]fix[/b]\nAuthor: me")


async def test_a_round_with_a_tool_call_asks_runs_and_answers(fake_server, tmp_path):
    hub = GitBox()
    fake_server.script += [[{"name": "git_log", "arguments": ARGS}], "The last commit is abc."]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await pilot.pause()
        await answer(pilot, "y")
        await wait_for(pilot, lambda: app.chat.sending is None, "the answer", 20)
        await pilot.pause()
        assert hub.ran == [ARGS]
        assert [v.message.role for v in views(app)] == ["user", "assistant", "tool",
                                                        "assistant"]
        assert views(app)[-1].message.content == "The last commit is abc."
        (block,) = blocks(app)
        assert status_line(block).startswith("✓ ") and block.message.id is not None
        assert "commit abc [b]fix[/b]" in screen_text(app)
        assert app.chat.query_one(TokenGauge).usage.tools > 0
        # Opened again from the store, the session looks the same.
        await app.open_session(app.chat.cid)
        await pilot.pause()
        assert [v.message.role for v in views(app)] == ["user", "assistant", "tool",
                                                        "assistant"]
        assert status_line(blocks(app)[0]).startswith("✓ ")


async def test_a_denied_call_shows_denied_then_and_after_a_reload(fake_server, tmp_path):
    hub = GitBox()
    fake_server.script += [[{"name": "git_log", "arguments": ARGS}], "I may not look."]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await answer(pilot, "n")
        await wait_for(pilot, lambda: app.chat.sending is None, "the answer", 20)
        await pilot.pause()
        assert hub.ran == []
        assert status_line(blocks(app)[0]).startswith("⊘ denied")
        await app.open_session(app.chat.cid)
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("⊘ denied")


async def test_esc_stops_a_running_tool(fake_server, tmp_path):
    hub = GitBox(hang=True)
    fake_server.script += [[{"name": "git_log", "arguments": ARGS}]]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "what changed?")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog")
        await answer(pilot, "a")
        await wait_for(pilot, lambda: blocks(app) and blocks(app)[0].info.state == "running",
                       "the running call")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.chat.sending is None, "the stop")
        await wait_for(pilot, lambda: blocks(app)[0].info.state == "done", "the block")
        await pilot.pause()
        assert status_line(blocks(app)[0]).startswith("■ cancelled")
        assert any("tool calls and results so far are kept" in n for n in notices(app))
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
