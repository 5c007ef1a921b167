"""/recall --all in the app: every session's matching turns, each under its session's label;
Enter pins one of this session's and only says so for another's; and a question that points
back to another session says where its recalled turns came from."""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.recall import RecallScreen
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    screen_text,
    send_and_wait,
    type_and_send,
    wait_for,
)

ETL = "Note for later: the nightly warehouse ETL runs on the host kestrel-07 at 02:15 UTC."


def other_session(tmp_path) -> int:  # type: ignore[no-untyped-def]
    with Store(tmp_path / "sessions.db") as store:
        cid = store.create_conversation(title="Ops [night]\x1b[31m jobs").id
        store.add_message(cid, Message("user", ETL))
        store.add_message(cid, Message("assistant", "Noted, kestrel-07."))
    return cid


async def new_session(pilot, app, other: int) -> None:  # type: ignore[no-untyped-def]
    """The app opens the latest session, the other one: a new one is asked about it."""
    await pilot.press("ctrl+n")
    await wait_for(pilot, lambda: app.chat.cid != other, "a new session")


async def test_recall_all_lists_other_sessions_and_pins_only_this_one_s(fake_server, tmp_path):
    other = other_session(tmp_path)
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await new_session(pilot, app, other)
        await send_and_wait(pilot, "the warehouse ETL host here is owl-3, for the staging copy")
        await type_and_send(pilot, "/recall --all")
        await wait_for(pilot, lambda: any("/recall --all WORDS" in n for n in notices(app)),
                       "the usage line")
        await type_and_send(pilot, "/recall --all warehouse ETL host")
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the recall list")
        shown = screen_text(app)
        assert "Recall in every session" in shown
        assert "[Ops (night) jobs, " in shown and f"· #{other}" in shown
        assert "this session" in shown and "kestrel-07" in shown and "owl-3" in shown
        screen = app.screen
        foreign = next(i for i, s in enumerate(screen.sources or []) if s)
        mine = next(i for i, s in enumerate(screen.sources or []) if not s)
        options = screen.query_one("OptionList")
        options.highlighted = foreign
        await pilot.press("enter")
        await wait_for(pilot, lambda: "cannot be pinned here" in screen_text(app), "the line")
        assert app.screen is screen  # nothing opened, nothing pinned
        options.highlighted = mine
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is app.chat, "the chat screen")
        assert any(n.startswith("📌 Pinned") for n in notices(app))
        with Store(tmp_path / "sessions.db") as store:
            assert not any(m.pinned for m in store.messages(other))
        await type_and_send(pilot, "/recall --all zebra quokka")
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the recall list")
        assert "Nothing in any session matches" in screen_text(app)


async def test_a_pointer_to_another_session_says_where_the_turns_came_from(fake_server,
                                                                          tmp_path):
    other_session(tmp_path)
    app = make_app(fake_server, tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await new_session(pilot, app, 1)
        await send_and_wait(pilot, "上次说的 ETL 主机是哪台？")
        said = [n for n in notices(app) if n.startswith("↺ 已为这个问题从其他会话找回 1 轮")]
        assert len(said) == 1 and "[Ops (night) jobs, " in said[0]
        sent = fake_server.chat_requests[-1].body["messages"]
        assert ETL in sent[-1]["content"] and ETL not in sent[0]["content"]
