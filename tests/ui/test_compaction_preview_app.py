"""In the app: /compact opens its summary in the editor before anything is stored; Ctrl+S
stores it (as edited when changed), Esc leaves the conversation as it was, and a summary the
session moved past meanwhile is refused in one line."""

from __future__ import annotations

import pytest
from textual.widgets import Static, TextArea

from jarvis_tui.core.details.ledger import HEADER
from jarvis_tui.ui.screens.proposal_editor import ProposalEditor
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.core.details.test_ledger import PLANTED, replies
from tests.engine_helpers import is_summary_request, kinds, make_engine
from tests.ui.app_helpers import (
    SIZE,
    accept,
    make_app,
    notices,
    propose,
    send_and_wait,
    wait_for,
)

LINES = [text for text, _ in PLANTED] + ["Unrelated: gardening"]


def line(app, selector: str) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one(selector, Static).render())


def last_request(fake) -> list[str]:  # type: ignore[no-untyped-def]
    chats = [r for r in fake.chat_requests if not is_summary_request(r.body)]
    return [m["content"] for m in chats[-1].body["messages"]]


async def talk(pilot) -> None:  # type: ignore[no-untyped-def]
    for text in LINES:
        await send_and_wait(pilot, text)


async def test_the_proposal_is_shown_first_and_ctrl_s_stores_it(fake_server, tmp_path):
    replies(fake_server)  # a lossy summariser: the planted details go to the ledger
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot)
        session, cid = app.chat.session, app.chat.cid
        used = app.chat.query_one(TokenGauge).used
        editor = await propose(pilot, "/compact the collector")
        text = editor.query_one("#editor", TextArea).text
        assert text.startswith("Summary: the user and the assistant discussed")
        assert HEADER in text and "/etc/collector.yaml" in text
        assert line(app, "#title") == ("PROPOSED summary · not applied yet · /compact · "
                                       "focus: the collector")
        cover = line(app, "#cover")
        assert cover.startswith("Accepting folds 6 more messages into the summary: the next "
                                f"request goes from about {used:,} to about ")
        # Nothing is stored yet: no summary, nothing covered, the gauge and panel as they were.
        assert session._store.latest_summary(cid) is None
        assert not any(m.summary_id for m in session._store.messages(cid))
        assert app.chat.query_one(SummaryPanel).summary is None
        assert app.chat.query_one(TokenGauge).used == used
        await pilot.press("ctrl+o")  # the messages it would cover, to check it against
        originals = str(editor.query_one("#originals-text", Static).render())
        assert PLANTED[0][0] in originals and "Unrelated: gardening" not in originals
        await accept(pilot)
        stored = session._store.latest_summary(cid)
        assert stored.content == text and stored.kind == "manual" and stored.focus
        assert app.chat.query_one(SummaryPanel).summary == stored
        assert any(n.startswith("📦 Conversation compacted") for n in notices(app))
        assert app.chat.query_one(TokenGauge).used < used
        await send_and_wait(pilot, "and next?")
        sent = last_request(fake_server)
        assert text in sent[0] and PLANTED[0][0] not in sent


async def test_an_edited_proposal_is_what_is_stored(fake_server, tmp_path):
    replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot)
        editor = await propose(pilot)
        long_cover = line(app, "#cover")
        editor.query_one("#editor", TextArea).load_text("The user runs a collector on 8443.")
        await pilot.pause()
        assert line(app, "#cover") != long_cover  # the estimate follows the text
        await accept(pilot)
        stored = app.chat.session.summary
        assert (stored.content, stored.kind) == ("The user runs a collector on 8443.", "edited")
        await send_and_wait(pilot, "and next?")
        assert "The user runs a collector on 8443." in last_request(fake_server)[0]


@pytest.mark.parametrize(("language", "title", "said"), [
    ("en", "PROPOSED summary · not applied yet · /compact",
     "📦 The proposed summary was discarded; nothing changed."),
    ("zh", "建议的摘要 · 尚未应用 · /compact", "📦 已放弃建议的摘要；没有任何改动。"),
])
async def test_esc_discards_it_and_nothing_changes(fake_server, tmp_path, language, title, said):
    replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1, language=language)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot)
        session, cid = app.chat.session, app.chat.cid
        used = app.chat.query_one(TokenGauge).used
        await propose(pilot)
        assert line(app, "#title") == title
        await pilot.press("escape")
        await wait_for(pilot, lambda: said in notices(app), "the discarded notice")
        assert app.screen is app.chat and app.chat.compaction_work.proposal is None
        assert session._store.latest_summary(cid) is None and session.summary is None
        assert not any(m.summary_id for m in session._store.messages(cid))
        assert app.chat.query_one(TokenGauge).used == used
        await send_and_wait(pilot, "and next?")
        sent = last_request(fake_server)
        assert all(text in sent for text in LINES)  # every turn still verbatim
        assert HEADER not in sent[0]


async def test_a_failed_summary_says_so_once_and_opens_nothing(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: " " if is_summary_request(body) else "Noted. " * 10
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot)
        before = len(notices(app))
        await pilot.press(*"/compact", "enter")
        await wait_for(pilot, lambda: len(notices(app)) > before, "the notice")
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction to end")
        await pilot.pause()
        said = notices(app)[before:]
        assert len(said) == 1 and said[0].startswith("📦 Nothing compacted: could not summarise")
        assert app.screen is app.chat and app.chat.compaction_work.proposal is None
        assert app.chat.session._store.latest_summary(app.chat.cid) is None


async def test_a_summary_another_process_stored_meanwhile_wins(fake_server, tmp_path):
    replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk(pilot)
        session = app.chat.session
        editor = await propose(pilot)
        editor.query_one("#editor", TextArea).load_text("my careful edit")
        # Another jarvis-tui on the same session compacts while the user reads.
        other = make_engine(fake_server, tmp_path, store=session._store,
                            conversation_id=app.chat.cid, keep_recent_turns=1)
        theirs = [e async for e in other.compact(reason="manual")]
        assert kinds(theirs) == ["CompactionStarted", "MemorySuggested", "CompactionFinished"]
        before = len(notices(app))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.chat.compaction_work.proposal is None, "the refusal")
        await pilot.pause()
        refused = [n for n in notices(app)[before:] if n.startswith("📦 Nothing compacted")]
        assert refused == ["📦 Nothing compacted: the proposed summary was not stored: the "
                           "session's summary changed after this one was proposed (another "
                           "compaction or an edit); run /compact again for a summary of it as "
                           "it is now"]
        stored = session._store.summaries(app.chat.cid)
        assert len(stored) == 1 and stored[0].content != "my careful edit"
        assert app.chat.query_one(SummaryPanel).summary == stored[0]  # theirs, read again


def proposal_host(language: str = "en"):  # type: ignore[no-untyped-def]
    from tests.ui.test_summary_editor import Host, make_covered

    editor = ProposalEditor("The user plans Kyoto.", make_covered(), 6, 2000,
                            lambda text: 300 + len(text), 512)
    return Host(editor, language)


async def test_accepting_unchanged_returns_the_text_and_edits_are_asked_about():
    app = proposal_host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert line(app, "#cover") == ("Accepting folds 6 more messages into the summary: the "
                                       "next request goes from about 2,000 to about 321 tokens")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.results == ["The user plans Kyoto."]  # stored as proposed, not "no change"
    app = proposal_host("zh")
    async with app.run_test(size=(100, 40)) as pilot:
        app.screen.query_one("#editor", TextArea).load_text("changed")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert line(app, "#notice") == "放弃这份建议的摘要和你的修改？再按 Esc 放弃，按 ctrl+s 接受"
        assert app.results == []
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]  # discarded
