"""The app driven by Pilot against the fake provider on a loopback socket: send, stream, stop,
compaction, the summary editor, settings, overflow recovery and a server that is down."""

from __future__ import annotations

import socket
import tomllib

from textual import events
from textual.widgets import Markdown

from jarvis_tui.core.messages import COMPLETE, FAILED, PARTIAL
from jarvis_tui.core.window.system_message import SUMMARY_HEADER
from jarvis_tui.ui.screens.settings import SettingsScreen
from jarvis_tui.ui.screens.summary_editor import SummaryEditor
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.engine_helpers import is_summary_request, summarising_replies
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    prompt,
    screen_text,
    send_and_wait,
    talk_then_compact,
    type_and_send,
    views,
    wait_for,
)


async def test_send_streams_the_reply_and_stores_both(fake_server, tmp_path):
    plan = "## Plan\n\n1. first\n2. second\n\n```python\nx = 1\n```\n" + "more " * 150
    fake_server.reply_fn = lambda body: plan
    fake_server.chunk_delay = 0.01
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "make a plan")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        streaming = app.chat.reply.view
        assert streaming.streaming and streaming._stream is not None  # Markdown.get_stream
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        shown = views(app)
        assert [v.message.role for v in shown] == ["user", "assistant"]
        assert shown[1].message.content == plan
        assert shown[1].query_one(Markdown).source == plan  # the streamed document is whole
        assert not shown[1].streaming and shown[1].message.status == COMPLETE
        stored = app.session._store.messages(app.chat.cid)
        assert [(m.role, m.status) for m in stored] == [("user", COMPLETE),
                                                         ("assistant", COMPLETE)]
        assert app.chat.query_one(TokenGauge).used > 0
        assert prompt(app).text == ""
        assert app.chat.title == "make a plan"


async def test_esc_stops_the_reply_and_keeps_the_partial(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "word " * 400
    fake_server.chunk_delay = 0.02
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "talk for a long time")
        await wait_for(pilot, lambda: app.chat.reply.view is not None
                       and len(app.chat.reply.view.message.content) > 20, "some reply text")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the stop")
        reply = views(app)[-1]
        assert reply.message.status == PARTIAL and reply.has_class("-partial")
        assert 0 < len(reply.message.content) < len("word " * 400)
        stored = app.session._store.messages(app.chat.cid)
        assert [m.status for m in stored] == [COMPLETE, PARTIAL]
        assert any("partial reply is kept" in n for n in notices(app))
        # The app goes on: the next message gets a full reply.
        fake_server.reply_fn = None
        fake_server.chunk_delay = 0
        await send_and_wait(pilot, "shorter please")
        assert views(app)[-1].message.status == COMPLETE


async def test_compaction_shows_notice_fills_panel_and_dims_covered(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(8):
            await send_and_wait(pilot, f"question {i}: " + "tell me about tokens " * 25)
            if app.chat.session._engine.summary is not None:
                break
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction")
        assert app.chat.session._engine.summary is not None
        assert any(n.startswith("📦 Conversation compacted: earlier turns summarised")
                   for n in notices(app))
        panel = app.chat.query_one(SummaryPanel)
        assert panel.summary is not None and panel.summary.content.startswith("Summary:")
        covered = [v for v in views(app) if v.message.covered]
        assert covered and all(v.has_class("-covered") for v in covered)
        # Covered messages stay in the store, marked, not deleted.
        stored = app.session._store.messages(app.chat.cid)
        assert len(stored) >= len(views(app)) and any(m.summary_id for m in stored)


async def test_chinese_conversation_gets_the_chinese_notice(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                   language="auto")
    async with app.run_test(size=SIZE) as pilot:
        for i in range(10):
            await send_and_wait(pilot, f"第{i}个问题：请详细解释上下文窗口的管理。" * 12)
            if app.chat.session._engine.summary is not None:
                break
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction")
        assert any(n.startswith("📦 对话已压缩，早期内容已摘要") for n in notices(app))


async def test_summary_edit_changes_the_next_request(fake_server, tmp_path):
    summarising_replies(fake_server)
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [f"fact {i}: the deploy port is 80{i}0" for i in range(4)],
                                "/compact ports")
        await pilot.press("f2")
        editor = app.screen
        assert isinstance(editor, SummaryEditor)
        editor.query_one("TextArea").load_text("The user deploys on port 9999 only.")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.chat.session._engine.summary.kind == "edited", "the edit")
        assert app.chat.query_one(SummaryPanel).summary.content == \
            "The user deploys on port 9999 only."
        await send_and_wait(pilot, "which port?")
        system = fake_server.chat_requests[-1].body["messages"][0]["content"]
        assert SUMMARY_HEADER.strip() in system and "port 9999 only" in system
        assert app.session._store.latest_summary(app.chat.cid).kind == "edited"


async def test_settings_change_writes_toml_and_moves_the_gauge(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, config_text='model = "fake-model"\n')
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hello")
        gauge = app.chat.query_one(TokenGauge)
        assert gauge.usage.budget == 4096 - 512 - 256
        await pilot.press("f3")
        assert isinstance(app.screen, SettingsScreen)
        field = app.screen.query_one("#field-response_reserve")
        field.value = "1024"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), "save")
        data = tomllib.loads((tmp_path / "config.toml").read_text())
        assert data == {"model": "fake-model", "response_reserve": 1024}
        assert gauge.usage.budget == 4096 - 1024 - 256
        await send_and_wait(pilot, "again")
        assert fake_server.chat_requests[-1].body["max_tokens"] == 1024


async def test_overflow_from_the_server_ends_in_a_reply(make_fake_server, tmp_path):
    fake = make_fake_server(limit=2048, flavor="vllm")
    summarising_replies(fake, chat_words=60)
    # We believe the window is 8192; the server's is 2048 and it says so in its error body.
    app = make_app(fake, tmp_path, context_window=8192, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(6):
            await send_and_wait(pilot, f"part {i}: " + "a long pasted log line " * 60)
        assert any(r.overflowed for r in fake.requests)
        shown = views(app)
        assert all(v.message.status != FAILED for v in shown)
        assert shown[-1].message.role == "assistant" and shown[-1].message.status == COMPLETE
        assert any("context window is 2048 tokens" in n for n in notices(app))
        assert not any(n.startswith("✖") for n in notices(app))
        assert app.chat.query_one(TokenGauge).usage.context_window == 2048


async def test_server_down_shows_a_notice_and_restores_the_input(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    # Each countdown lasts a second: long enough to be seen on a loaded machine.
    app = make_app(f"http://127.0.0.1:{port}/v1", tmp_path, max_retries=3, retry_base_delay=1.0,
                   retry_max_delay=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "are you [bold]there[/]?")
        status = app.chat.query_one("#status")
        await wait_for(pilot, lambda: "Retrying in" in str(status.content), "the countdown")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the round to give up")
        assert prompt(app).text == "are you [bold]there[/]?"
        said = notices(app)
        retries = [n for n in said if n.startswith("↻")]
        assert len(retries) == 1 and "(attempt 3)" in retries[0]  # one line, updated
        assert any(n.startswith("✖") for n in said)
        assert any("back in the input" in n for n in said)
        assert views(app)[-1].message.status == FAILED
        assert app.is_running


async def test_error_body_with_brackets_is_shown_literally(fake_server, tmp_path):
    body = {"error": {"message": "bad [bold]request[/] [/] \x1b[31mred", "type": "x"}}
    fake_server.faults.append(("status", 400, {}, body))
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hi")
        error = [n for n in notices(app) if n.startswith("✖")]
        assert error and "[bold]request[/] [/]" in error[0] and "\x1b" not in error[0]


async def test_reply_with_markup_and_escapes_renders_as_text(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "use [bold]x[/] and [/] here \x1b[2J done"
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "[red]hi[/]")
        text = screen_text(app)
        assert "[red]hi[/]" in text
        assert "use [bold]x[/] and [/] here" in text and "\x1b" not in text
        assert views(app)[-1].message.status == COMPLETE


async def test_summary_requests_never_go_through_the_chat_path(fake_server, tmp_path):
    summarising_replies(fake_server)
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [f"note {i}" for i in range(4)])
        summaries = [r for r in fake_server.chat_requests if is_summary_request(r.body)]
        assert summaries and all(not r.body.get("stream") for r in summaries)


async def test_a_link_in_a_reply_is_shown_and_copied_not_opened(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "see [the docs](https://evil.example/x?token=1)"
    app = make_app(fake_server, tmp_path)
    opened: list[str] = []
    app.open_url = lambda url, **kw: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "where are the docs?")
        markdown = views(app)[-1].query_one(Markdown)
        markdown.post_message(Markdown.LinkClicked(markdown, "https://evil.example/x?token=1"))
        await pilot.pause()
        assert opened == [] and app.clipboard == "https://evil.example/x?token=1"
        assert any("https://evil.example" in n.message for n in app._notifications)


async def test_config_warnings_show_in_the_app(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    app._warnings = ["/x/config.toml can be read by other users (mode 0644)"]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any("mode 0644" in n.message for n in app._notifications)


async def test_keys_in_one_burst_send_in_order_and_nothing_typed_is_lost(fake_server, tmp_path):
    """A fast typist or a slow link delivers "hello⏎world" in one read: the first line is sent,
    the rest stays in the prompt (the Enter must not overtake the letters before it)."""
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        prompt(app).focus()
        await pilot.pause()
        burst = [*"hello", "enter", *"world"]
        for key in burst:  # as the driver posts them: all queued before any is handled
            app.post_message(events.Key(key, "\r" if key == "enter" else key))
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 1
                       and app.chat.reply.question is None, "the reply to hello")
        await pilot.pause()
        assert fake_server.chat_requests[0].body["messages"][-1]["content"] == "hello"
        assert prompt(app).text == "world"
        # While a reply streams, Enter keeps the text: nothing is sent and nothing is lost.
        fake_server.chunk_delay = 0.05
        fake_server.reply_fn = lambda body: "word " * 100
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.reply.question is not None, "the second send")
        for key in [*"next", "enter"]:
            app.post_message(events.Key(key, "\r" if key == "enter" else key))
        await pilot.pause(0.2)
        assert prompt(app).text == "next"
