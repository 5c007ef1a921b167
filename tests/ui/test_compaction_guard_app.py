"""In the app: a summariser that always fails gets one clear notice that automatic compaction
is paused, every message is still answered, and /compact starts it again."""

from __future__ import annotations

from tests.engine_helpers import is_summary_request, summary_material
from tests.ui.app_helpers import (
    SIZE,
    accept,
    make_app,
    notices,
    propose,
    send_and_wait,
    wait_for,
)


async def test_failing_summaries_pause_compaction_with_one_notice(fake_server, tmp_path):
    working = {"yes": False}

    def reply(body: dict) -> str:
        if is_summary_request(body):
            if not working["yes"]:
                return " "  # an empty summary: the summariser failed
            return "Summary: " + " ".join(summary_material(body).split()[:30])
        return "Here is a long answer about the window. " * 12

    fake_server.reply_fn = reply
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=200)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(12):
            await send_and_wait(pilot, f"question {i}: " + "tell me more " * 20)
            await wait_for(pilot, lambda: not app.chat.compaction_work.running,
                           "the compaction to end")
            if any("paused" in n for n in notices(app)):
                break
        paused = [n for n in notices(app) if "Automatic compaction is paused" in n]
        assert len(paused) == 1
        answered = [r for r in fake_server.chat_requests if not is_summary_request(r.body)]
        assert len(answered) == i + 1  # every message was answered
        working["yes"] = True
        await propose(pilot)
        await accept(pilot)
        assert not app.chat.session._engine.guard.paused
