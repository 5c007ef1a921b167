"""The built-in search_history in the app, driven by Pilot against the fake provider: once a
summary folded turns in, the model's search is one line in the conversation, and it never opens
the approval dialog, even with a tool server whose tools do ask."""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible, Static

from jarvis_tui.core.tools.history_search import HISTORY_TOOL
from jarvis_tui.ui.screens.tool_approval import ToolApprovalScreen
from jarvis_tui.ui.widgets.tool_block import ToolBlock
from tests.ui.app_helpers import make_app, screen_text, send_and_wait, talk_then_compact
from tests.ui.fake_hub import FakeHub, Status, two_servers
from tests.ui.test_tools_app import WIDE

LINES = {"en": "↺ searched earlier turns: 'deploy port 8000'",
         "zh": "↺ 搜索了较早的对话：'deploy port 8000'"}


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_search_is_one_line_and_asks_nobody(fake_server, tmp_path, language):
    hub: FakeHub = two_servers()  # git's tools ask before they run
    app = make_app(fake_server, tmp_path, language=language)
    app.hub_factory = lambda settings: hub
    pushed: list[str] = []
    push = app.push_screen

    def watched(screen, *args, **kwargs):  # type: ignore[no-untyped-def]
        pushed.append(type(screen).__name__)
        return push(screen, *args, **kwargs)

    app.push_screen = watched  # type: ignore[method-assign]
    async with app.run_test(size=WIDE) as pilot:
        await talk_then_compact(pilot, [f"fact {i}: the deploy port is 80{i}0" for i in range(4)])
        engine = app.chat.session._engine
        folded = next(m for m in engine.messages if m.covered and m.role == "user")
        assert folded.content == "fact 0: the deploy port is 8000"
        await send_and_wait(pilot, f'where was it?\ncall {HISTORY_TOOL} '
                                   '{"query": "deploy port 8000"}')
        assert ToolApprovalScreen.__name__ not in pushed
        (block,) = [b for b in app.chat.query(ToolBlock) if b.is_builtin]
        assert f"[#{folded.id} user, " in block.message.content
        assert block.query_one(Collapsible).collapsed
        assert not block.query_one(".status", Static).display  # the title is the whole of it
        text = screen_text(app)
        assert LINES[language] in text
        assert f"⚙ {HISTORY_TOOL}" not in text  # not drawn as the servers' tools are
        assert "Read 1 tool result" in text


async def test_a_failed_search_says_so_under_its_line(fake_server, tmp_path):
    hub = FakeHub([Status("git")])
    app = make_app(fake_server, tmp_path)
    app.hub_factory = lambda settings: hub
    async with app.run_test(size=WIDE) as pilot:
        await talk_then_compact(pilot, [f"fact {i}: the deploy port is 80{i}0" for i in range(4)])
        await send_and_wait(pilot, f'call {HISTORY_TOOL} {{"limit": 2}}')
        (block,) = [b for b in app.chat.query(ToolBlock) if b.is_builtin]
        assert block.query_one(".status", Static).display
        text = screen_text(app)
        assert '↺ searched earlier turns: {"limit": 2}' in text
        assert "✗ error" in text
