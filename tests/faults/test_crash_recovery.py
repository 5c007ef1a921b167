"""The process killed (SIGKILL) in the middle of a streamed reply: on restart the question and
what had arrived of the answer are in the store, marked partial, and shown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from jarvis_tui.core.messages import COMPLETE, PARTIAL
from jarvis_tui.core.store.store import Store
from tests.cli.test_cli import flags, run
from tests.ui.app_helpers import SIZE, make_app, views


def wait_for_partial(db, limit_s: float = 20.0) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if db.exists():
            with Store(db) as store:
                conv = store.latest_conversation()
                msgs = store.messages(conv.id) if conv else []
                if len(msgs) == 2 and len(msgs[1].content) > 200:
                    return
        time.sleep(0.05)
    raise AssertionError("the reply never reached the store while streaming")


async def test_sigkill_mid_reply_keeps_question_and_partial(home, fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "word " * 3000
    fake_server.chunk_delay = 0.005
    db = tmp_path / "data" / "jarvis-tui" / "sessions.db"
    proc = subprocess.Popen([sys.executable, "-m", "jarvis_tui", *flags(fake_server), "ask",
                             "tell me a long story"], env=home, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_partial(db)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(db) as store:
        conv = store.latest_conversation()
        user, reply = store.messages(conv.id)
    assert (user.role, user.status, user.content) == ("user", COMPLETE, "tell me a long story")
    assert reply.role == "assistant" and reply.status == PARTIAL
    assert reply.content.startswith("word word") and len(reply.content) < len("word " * 3000)

    # The app shows both on restart, the reply marked partial.
    app = make_app(fake_server, tmp_path, store=Store(db))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = views(app)
        assert [v.message.content[:9] for v in shown] == ["tell me a", "word word"]
        assert shown[1].has_class("-partial")
        assert "partial" in str(shown[1].query_one(".label").content)

    # And the session goes on from there.
    fake_server.reply_fn = None
    fake_server.chunk_delay = 0
    result = run(home, *flags(fake_server), "ask", "go on")
    assert result.returncode == 0, result.stderr
    sent = [m["content"][:9] for m in fake_server.chat_requests[-1].body["messages"][1:]]
    assert sent == ["tell me a", "word word", "go on"]
