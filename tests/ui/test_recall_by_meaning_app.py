"""/recall in the app ranks as recall does (issue 40, item 4): a question in the other language
that shares no word with its turn brings it up first; with recall_by_meaning off, the words
alone, as before."""

from __future__ import annotations

import pytest

from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.recall import RecallScreen
from tests.core.recall.test_recall_sessions import session
from tests.core.recall.test_search_meaning import ASKED, CAR, CELLO, OTHER_WORDS, TURNS
from tests.ui.app_helpers import SIZE, make_app, screen_text, type_and_send, wait_for


@pytest.mark.parametrize("by_meaning", [True, False])
async def test_recall_finds_the_turn_in_other_words(fake_server, tmp_path, by_meaning):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", TURNS)
    app = make_app(fake_server, tmp_path, recall_by_meaning=by_meaning)
    async with app.run_test(size=SIZE) as pilot:
        shown: dict[str, list[str]] = {}
        for query in (OTHER_WORDS, ASKED):
            await type_and_send(pilot, f"/recall {query}")
            await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the list")
            screen = app.screen
            assert isinstance(screen, RecallScreen)
            shown[query] = [turn[0].content for turn in screen.turns]
            if query == OTHER_WORDS and by_meaning:
                assert "learning to play the cello" in screen_text(app)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is app.chat, "the chat screen")
    if by_meaning:
        assert shown[OTHER_WORDS][0] == CELLO and shown[ASKED][0] == CAR
    else:
        assert CELLO not in shown[OTHER_WORDS] and shown[ASKED][0] != CAR
