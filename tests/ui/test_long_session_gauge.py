"""A long stored session's gauge: what the sidebar shows is what the engine would send, counted
from scratch, when the session opens and after more rounds (the engine keeps its history sums
up to date instead of recounting; this checks the two never drift apart)."""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.history import in_request
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.ui.app_helpers import SIZE, make_app, send_and_wait

N = 2000
COVERED = N - 40


def long_store(path) -> Store:  # type: ignore[no-untyped-def]
    store = Store(path)
    conv = store.create_conversation()
    stored = []
    for i in range(N):
        text = (f"第{i}条：上下文窗口 {i}。" if i % 3 else f"Turn {i}: the window moves on. ") * 4
        stored.append(store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant",
                                                         text)))
    store.add_summary(conv.id, "Summary: a long talk about windows.", stored[:COVERED],
                      kind="auto")
    stored[7].pinned = True  # pinned back from /recall: covered, yet always sent
    store.update_message(stored[7])
    return store


def from_scratch(app) -> int:  # type: ignore[no-untyped-def]
    engine = app.chat.session._engine
    return sum(engine.counter.message(m) for m in engine.messages if in_request(m))


async def test_the_gauge_of_a_long_session_matches_the_engine(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, store=long_store(tmp_path / "sessions.db"),
                   context_window=8192, response_reserve=512, system_reserve=256)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        gauge = app.chat.query_one(TokenGauge)
        engine = app.chat.session._engine
        assert len(engine.messages) == N
        assert gauge.usage == engine.usage()
        assert gauge.usage.history == from_scratch(app) > 0
        assert engine.messages[7] in engine.history()
        for text in ("What did we say about the window?", "窗口后来怎么样了？"):
            await send_and_wait(pilot, text)
            await pilot.pause()
            engine.anchor = None  # compare our own counts, not the server's last one
            app.chat.update_gauge()
            assert gauge.usage == engine.usage()
            assert gauge.usage.history == from_scratch(app)
        assert len(engine.messages) == N + 4
