"""/recall and /recall --all in the app list the turn the user kept and none they took out (x,
/forget): Enter on a listed turn pins it into every request, so an excluded one listed there
would be one key away from going back to the model."""

from __future__ import annotations

import pytest

from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.recall import RecallScreen
from tests.excluded_turns import KEPT, QUERY, leaked, store_session
from tests.ui.app_helpers import SIZE, make_app, screen_text, type_and_send, wait_for


@pytest.mark.parametrize("command", [f"/recall {QUERY}", f"/recall --all {QUERY}"])
async def test_recall_lists_the_kept_turn_and_nothing_taken_out(fake_server, tmp_path, command):
    with Store(tmp_path / "sessions.db") as store:
        stored = store_session(store)
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.cid == stored.conversation_id, "the session")
        await type_and_send(pilot, command)
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the recall list")
        screen = app.screen
        listed = "\n".join(m.content for turn in screen.turns for m in turn)
        assert screen.turns and screen.turns[0][0].content == KEPT, listed
        assert leaked(listed) == [] and leaked(screen_text(app)) == []
        assert "9052" in screen_text(app)
