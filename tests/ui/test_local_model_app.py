"""The app starting the local model server itself: progress on the status line, a message sent
while it loads waits for it, a server that cannot start is explained, and it stops on exit.
The child is the fake provider run as a real separate process, slowed down to load like a
model; the real llama.cpp server is the e2e tests' job."""

from __future__ import annotations

import sys
from pathlib import Path

from jarvis_tui.core.messages import COMPLETE, FAILED
from jarvis_tui.core.providers.local_server import LocalServer, free_port
from jarvis_tui.ui.screens.first_run import FirstRunScreen
from jarvis_tui.ui.screens.settings import SettingsScreen
from tests.engine_helpers import running
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    prompt,
    screen_text,
    type_and_send,
    views,
    wait_for,
)


def slow_fake(port: int, load_s: float) -> list[str]:
    """The fake server, answering only after `load_s` seconds, as a model would once loaded."""
    code = (f"import time; time.sleep({load_s}); from tests.fakeserver import main; "
            f"main(['--port', '{port}', '--limit', '2048'])")
    return [sys.executable, "-c", code]


def local_app(tmp_path: Path, command: list[str], port: int, **changes: object):
    server = LocalServer(command, port=port, log_path=tmp_path / "local.log",
                         startup_timeout=30)
    app = make_app(server.base_url, tmp_path, local_server=server, context_window=2048,
                   response_reserve=256, system_reserve=128, **changes)
    return app, server


def status(app) -> str:
    return str(app.chat.query_one("#status").content)


async def test_loading_shows_progress_and_a_message_sent_meanwhile_waits(tmp_path):
    port = free_port()
    app, server = local_app(tmp_path, slow_fake(port, 2.0), port)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "Loading the local model" in status(app),
                       "the loading line")
        await type_and_send(pilot, "are you there yet?")
        await wait_for(pilot, lambda: "Your message is sent as soon as it is ready"
                       in status(app), "the waiting line")
        assert app.chat.reply.question is not None
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply", 30)
        shown = views(app)
        assert [v.message.role for v in shown] == ["user", "assistant"]
        assert shown[-1].message.status == COMPLETE
        assert shown[-1].message.content.startswith("Reply 1: are you there yet?")
        ready = [n for n in notices(app) if n.startswith("🖥")]
        assert len(ready) == 1 and "makes mistakes" in ready[0] and "2048 tokens" in ready[0]
        assert "OPENAI_API_KEY" in ready[0]  # how to connect a real provider
        assert not any(n.startswith("✖") for n in notices(app))
        pid = server.process.pid
    # The app stopped it on exit.
    assert server.process is None and not running(pid)


async def test_a_server_that_cannot_start_is_explained_and_nothing_is_lost(tmp_path):
    script = "import sys; print('error: failed to load model /x.gguf'); sys.exit(3)"
    app, _ = local_app(tmp_path, [sys.executable, "-c", script], free_port())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(n.startswith("✖") for n in notices(app)),
                       "the failure notice")
        failed = [n for n in notices(app) if n.startswith("✖")][0]
        assert "could not start" in failed and "exited with code 3" in failed
        assert "failed to load model /x.gguf" in failed  # the server's own last words
        await type_and_send(pilot, "hello [bold]there[/]")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the refusal")
        assert prompt(app).text == "hello [bold]there[/]"  # back in the input
        assert any("not running" in n for n in notices(app))
        assert views(app)[-1].message.status == FAILED
        assert app.is_running


async def test_first_run_explains_the_three_ways(tmp_path):
    app = make_app("https://api.openai.com/v1", tmp_path, first_run=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), "the first run")
        text = screen_text(app)
        for needle in ("choose a model provider", "1. Environment", "OPENAI_API_KEY",
                       "ANTHROPIC_API_KEY", "2. Config file", str(tmp_path / "config.toml"),
                       "3. Command line", "--provider ollama", "--base-url", "local extra"):
            assert needle in text, needle
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen), "the settings")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.chat, "the chat screen")


async def test_first_run_in_chinese_and_esc_goes_to_the_chat(tmp_path):
    app = make_app("https://api.openai.com/v1", tmp_path, first_run=True, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), "the first run")
        assert "请选择模型服务" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.chat, "the chat screen")
