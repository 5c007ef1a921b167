"""Consent in the app (issue 25, items 1 and 2): typing never answers the approval dialog and
lands in the prompt's draft; "Always allow" is for one server's tool. Through the real engine,
the fake provider scripting the model's calls, and a hub of plain functions."""

from __future__ import annotations

import asyncio

from textual import events

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.screens.tool_approval import ToolApprovalScreen
from tests.faults.consent_driver import SENTENCE
from tests.ui.app_helpers import make_app, notices, prompt, screen_text, submit, wait_for
from tests.ui.fake_hub import FakeHub, Status
from tests.ui.test_tools_app import WIDE

OBJECT = {"type": "object", "properties": {"path": {"type": "string"}}}


class ReadBox(FakeHub):
    """Servers a and b, each offering `read` (named a_read and b_read for the model)."""

    def __init__(self) -> None:
        super().__init__([Status(server, state="ready", tools=(
            ToolSpec(f"{server}_read", f"{server}'s read", OBJECT, server, "read"),))
            for server in ("a", "b")])
        self.ran: list[str] = []

    async def start(self) -> None:
        pass

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        self.ran.append(call.name)
        return ToolResult(f"{spec.server} read it")


def dialog_up(app) -> bool:
    return isinstance(app.screen, ToolApprovalScreen)


async def test_a_sentence_typed_as_the_dialog_appears_answers_nothing(fake_server, tmp_path):
    hub = ReadBox()
    fake_server.script += [[{"name": "a_read", "arguments": {"path": "notes"}}], "Read."]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "read my notes")
        await wait_for(pilot, lambda: dialog_up(app), "the dialog")
        await pilot.press(*SENTENCE, "enter")
        await pilot.pause(0.3)
        assert dialog_up(app), "the typing answered the dialog"
        assert hub.ran == []
        assert prompt(app).text == SENTENCE
        assert "Your typing went into your message" in screen_text(app)
        # Backspace and a paste edit the draft too; then a deliberate answer: Tab, then y.
        await pilot.press("backspace", "s")
        app.screen.post_message(events.Paste(" and a pear"))
        await pilot.pause()
        draft = SENTENCE[:-1] + "s and a pear"
        assert prompt(app).text == draft and hub.ran == []
        await pilot.press("tab", "y")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the answer", 20)
        assert hub.ran == ["a_read"]
        assert prompt(app).text == draft


async def test_always_for_as_read_still_asks_for_bs_read(fake_server, tmp_path):
    hub = ReadBox()
    fake_server.script += [[{"name": "a_read", "arguments": {"path": "notes"}}], "Read.",
                           [{"name": "a_read", "arguments": {"path": "more"}},
                            {"name": "b_read", "arguments": {"path": "/etc/shadow"}}], "Done."]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "read my notes")
        await wait_for(pilot, lambda: dialog_up(app), "the dialog")
        await pilot.pause()
        assert "Always allow read of a this session" in screen_text(app)
        await pilot.press("tab", "a")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the first answer", 20)
        submit(app, "read more")
        await wait_for(pilot, lambda: dialog_up(app), "the dialog for b's read")
        await pilot.pause()
        assert hub.ran == ["a_read", "a_read"]
        assert "on the tool server b" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the second answer", 20)
        assert hub.ran == ["a_read", "a_read"]
        assert isinstance(app.screen, ChatScreen)


async def test_keys_answer_only_after_tab(fake_server, tmp_path):
    from jarvis_tui.core.tools.specs import ONCE
    from jarvis_tui.ui.screens.tool_approval import ask_approval

    spec = ToolSpec("a_read", "", OBJECT, "a", "read")
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        asked = asyncio.ensure_future(ask_approval(app, ToolCall("c1", "a_read"), spec))
        await wait_for(pilot, lambda: dialog_up(app), "the dialog")
        await pilot.press("y", "a", "n", "enter", "space")
        await pilot.pause(0.2)
        assert not asked.done() and prompt(app).text == "yan "
        await pilot.press("tab", "enter")
        assert await asyncio.wait_for(asked, 5) == ONCE


async def test_quitting_with_the_dialog_open_is_quiet(fake_server, tmp_path):
    """Issue 25, item 14: Ctrl+Q took the round with it, and the round's "stopped" notice was
    mounted into a conversation already taken down (a MountError after exit)."""
    hub = ReadBox()
    fake_server.script += [[{"name": "a_read", "arguments": {"path": "notes"}}]]
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        submit(app, "read my notes")
        await wait_for(pilot, lambda: dialog_up(app), "the dialog")
        await pilot.press("ctrl+q")
    assert app.return_code in (0, None) and hub.ran == []
    stored = app.session._store.messages(app.session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool"]
    assert stored[-1].content.startswith("Error: ")


async def test_servers_from_a_servers_file_are_named_when_they_start(fake_server, tmp_path):
    """Issue 25, item 3: a server the config file itself does not define never starts
    unannounced."""
    from jarvis_tui.core.settings.mcp import McpServerConfig

    source = str(tmp_path / "config" / ".mcp.json")
    servers = (McpServerConfig("notes", "stdio", command="notes-server", source=source,
                               from_servers_file=True),
               McpServerConfig("git", "stdio", command="git-server", source="config.toml"))
    hub = ReadBox()
    app = make_app(fake_server, tmp_path, mcp=servers)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, lambda: any(".mcp.json" in n for n in notices(app)),
                       "the servers file's notice")
        said = next(n for n in notices(app) if ".mcp.json" in n)
        assert said == f"⚙ Tool servers from {source} (mcp_servers_file): notes"
