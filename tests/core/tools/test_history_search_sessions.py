"""search_history's all_sessions, the model calling it against the fake server and a real store
file that holds other sessions: their turns come back labelled with title and date, only when
asked for, never an excluded one, within the same cap."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from tests.core.tools.test_history_search import (
    SMALL,
    ask_call,
    fold_the_facts,
    lossy,
    stored_results,
)
from tests.engine_helpers import make_engine, send

ETL = "Note for later: the nightly warehouse ETL runs on the host kestrel-07 at 02:15 UTC."
HIDDEN = "The warehouse ETL password hint is albatross, keep it out of the tickets."


def other_sessions(path) -> None:  # type: ignore[no-untyped-def]
    with Store(path) as store:
        cid = store.create_conversation(title="Ops [night]\x1b[2J jobs").id
        store.add_message(cid, Message("user", ETL))
        store.add_message(cid, Message("assistant", "Noted, kestrel-07 it is."))
        store.add_message(cid, Message("user", HIDDEN, excluded=True))
        store.add_message(cid, Message("assistant", "Noted."))


async def test_all_sessions_finds_another_session_s_turn_labelled(fake_server, tmp_path):
    other_sessions(tmp_path / "sessions.db")
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await fold_the_facts(engine)
    definition = fake_server.chat_requests[-1].body["tools"][0]["function"]
    assert definition["parameters"]["properties"]["all_sessions"]["type"] == "boolean"
    events = await send(engine, ask_call(
        '{"query": "warehouse ETL host"}',
        '{"query": "warehouse ETL host", "all_sessions": true}',
        '{"query": "warehouse ETL", "all_sessions": "yes"}'))
    outcomes = [e.outcome for e in events if isinstance(e, ev.ToolFinished)]
    assert outcomes == ["ok", "ok", "error"]
    here, everywhere, bad = stored_results(engine)[-3:]
    assert ETL not in here and here.startswith("Nothing in the earlier turns")
    assert ETL in everywhere and "Noted, kestrel-07 it is." in everywhere  # the whole turn
    assert "from another session, [Ops (night) jobs, " in everywhere
    assert "\x1b" not in everywhere and "albatross" not in everywhere  # excluded stays out
    assert bad == ('Error: search_history was not run: "all_sessions" must be true or false, '
                   "not a string")
    await engine.provider.aclose()


async def test_all_sessions_keeps_to_the_result_cap(fake_server, tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        for i in range(12):
            cid = store.create_conversation(title=f"ops {i}").id
            store.add_message(cid, Message("user", f"{ETL} Run {i}: " + "detail " * 300))
            store.add_message(cid, Message("assistant", "Noted."))
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await fold_the_facts(engine)
    await send(engine, ask_call('{"query": "warehouse ETL", "all_sessions": true, "limit": 10}'))
    result = stored_results(engine)[-1]
    cap = engine.front.result_cap()
    turns, _, note = result.rpartition("\n\n(")
    assert engine.counter.text(turns) <= cap  # the note on what did not fit comes after
    assert "did not fit" in note and "from another session" in turns
    await engine.provider.aclose()


async def test_all_sessions_kept_apart_says_so_and_reads_this_session_only(fake_server,
                                                                          tmp_path):
    other_sessions(tmp_path / "sessions.db")
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, recall_other_sessions=False, **SMALL)
    await fold_the_facts(engine)
    await send(engine, ask_call('{"query": "warehouse ETL host", "all_sessions": true}'))
    result = stored_results(engine)[-1]
    assert result.startswith("Other sessions are not searched: the user keeps each session's "
                             "turns to itself (setting recall_other_sessions). Nothing in the "
                             "earlier turns folded into the summary matches")
    assert ETL not in result and "kestrel-07" not in result
    await engine.provider.aclose()
