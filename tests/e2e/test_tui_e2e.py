"""The full-screen app, driven by Pilot, against the real model server."""

from __future__ import annotations

import pytest
from textual.widgets import Markdown

from jarvis_tui.core.messages import COMPLETE, FAILED
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LocalServer
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.e2e.conftest import N_CTX, REAL_TIMEOUTS, log_text
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    send_and_wait,
    type_and_send,
    views,
    wait_for,
)

pytestmark = pytest.mark.e2e
SLOW_S = 600.0  # a bound on a hang, not a speed: a busy 2-core machine reads 1k tokens in minutes

TALK = [
    "Tell me about the history of the printing press. " * 20,
    "请介绍一下中国古代的造纸术和它对世界的影响。" * 12,
    "What are the main differences between a summary and an abstract? " * 15,
    "上下文窗口满了以后，聊天程序应该如何处理早期的对话内容？" * 10,
    "Describe a quiet morning in a small harbour town. " * 20,
    "请用三句话描述一个安静的图书馆。" * 15,
]


def refusals(server: LocalServer) -> int:
    return log_text(server).count('/v1/chat/completions HTTP/1.1" 400')


async def test_send_stream_compact_and_fill_the_summary_panel(tmp_path, llama_server):
    app = make_app(llama_server.base_url, tmp_path, model=LOCAL_MODEL_NAME, context_window=N_CTX,
                   response_reserve=32, system_reserve=128, keep_recent_turns=1,
                   summary_max_tokens=64, **REAL_TIMEOUTS)
    streamed: set[int] = set()  # replies seen on screen while they were still streaming

    def round_over() -> bool:
        view = app.chat.reply.view
        if view is not None and view.streaming and view.message.content:
            streamed.add(id(view))
        return app.chat.reply.question is None

    async with app.run_test(size=SIZE) as pilot:
        for text in TALK:
            await type_and_send(pilot, text)
            await wait_for(pilot, round_over, "the reply", SLOW_S)
            await pilot.pause()
            if app.chat.session._engine.summary is not None:
                break
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction",
                       SLOW_S)
        await pilot.pause()
        assert app.chat.session._engine.summary is not None, (
            f"six long turns did not compact a {N_CTX} window: {app.chat.session._engine.usage()}")
        shown = views(app)
        replies = [v for v in shown if v.message.role == "assistant"]
        assert replies and all(v.message.status == COMPLETE for v in replies)
        assert streamed, "no reply was seen streaming"
        for view in replies:  # the streamed document is the stored reply
            assert view.query_one(Markdown).source == view.message.content
        assert any(n.startswith("📦 Conversation compacted") for n in notices(app))
        panel = app.chat.query_one(SummaryPanel)
        assert panel.summary is not None and panel.summary.content.strip()
        assert any(v.message.covered for v in shown)
        assert not any(n.startswith("✖") for n in notices(app))


async def test_told_8192_while_the_server_has_far_less(tmp_path, llama_server):
    """The server's real 400 is caught, its limit learned from the text, later requests fit,
    and the user sees no error."""
    app = make_app(llama_server.base_url, tmp_path, model=LOCAL_MODEL_NAME, context_window=8192,
                   response_reserve=32, system_reserve=128, keep_recent_turns=1,
                   summary_max_tokens=64, **REAL_TIMEOUTS)
    refused_before = refusals(llama_server)
    async with app.run_test(size=SIZE) as pilot:
        # Three turns of about 350 tokens: together more than the server's window, while the
        # last one, kept verbatim after the compaction, leaves later turns room to spare.
        long_turns = [f"Part {i} of my notes. " + "The window is full, keep the notes. " * 42
                      for i in range(3)]
        for text in long_turns:
            await send_and_wait(pilot, text, SLOW_S)
        assert refusals(llama_server) > refused_before, (
            "the server never refused: no test. App notices: "
            f"{notices(app)[-4:]}; server log ends: {log_text(llama_server)[-1500:]}")
        assert app.chat.session._engine.context_window <= N_CTX
        assert any(f"context window is {N_CTX} tokens" in n for n in notices(app))
        refused_after_learning = refusals(llama_server)
        for text in ("And one more short question: what is a token?", "谢谢！"):
            await send_and_wait(pilot, text, SLOW_S)
        assert refusals(llama_server) == refused_after_learning  # later requests fit
        shown = views(app)
        assert all(v.message.status != FAILED for v in shown)
        assert shown[-1].message.role == "assistant" and shown[-1].message.status == COMPLETE
        assert not any(n.startswith("✖") for n in notices(app))
        assert app.chat.query_one(TokenGauge).usage.context_window == N_CTX
