"""Branches against the fake server and a real store: a regenerated reply, an edited question,
an excluded turn and a forked session each change what the next request holds, and nothing
stored is ever lost; the summary and recall follow the branch shown."""

from __future__ import annotations

import json
import sqlite3

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.export import to_markdown
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall import FACT_EN, compact_times, lossy, recalled_block
from tests.engine_helpers import final, make_engine, send, summarising_replies

SMALL = dict(context_window=2048, response_reserve=256, system_reserve=128, keep_recent_turns=1,
             summary_max_tokens=120)


def small_engine(fake, tmp_path, **changes):  # type: ignore[no-untyped-def]
    """A 2,048-token window that compacts within a few turns."""
    return make_engine(fake, tmp_path, **{**SMALL, **changes})


def texts(request) -> list[str]:  # type: ignore[no-untyped-def]
    return [m["content"] for m in request.body["messages"][1:]]


async def regenerate(engine) -> list[ev.Event]:  # type: ignore[no-untyped-def]
    return [e async for e in engine.regenerate()]


async def test_regenerate_keeps_the_old_reply_and_sends_the_same_request(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "first question")
    await send(engine, "second question")
    first = engine.messages[-1]
    events = await regenerate(engine)
    assert isinstance(final(events), ev.Finished)
    # The request is the one the first reply was written for, byte for byte.
    assert fake_server.chat_requests[-1].body == fake_server.chat_requests[-2].body
    second = engine.messages[-1]
    assert second is not first and second.content.startswith("Reply 3")
    assert [m.content for m in engine.messages[:3]] == [
        "first question", "Reply 1: first question", "second question"]
    assert engine.branches.alternatives(second) == (2, 2)
    assert engine.branches.alternatives(first) == (1, 2)
    # Back to the first reply: the next question follows it, not the new one.
    assert engine.branches.switch_alternative(second, -1) is first
    assert engine.messages[-1] is first
    await send(engine, "third question")
    assert texts(fake_server.chat_requests[-1])[-2:] == [first.content, "third question"]
    assert second.content not in texts(fake_server.chat_requests[-1])
    # Both replies stay stored, and a restart shows the branch last shown.
    stored = [m.content for m in engine.store.messages(engine.conversation.id)]
    assert first.content in stored and second.content in stored
    again = make_engine(fake_server, tmp_path, conversation_id=engine.conversation.id)
    assert [m.content for m in again.messages][-3:] == [
        first.content, "third question", again.messages[-1].content]
    assert again.branches.alternatives(again.messages[3]) == (1, 2)
    await engine.provider.aclose()
    await again.provider.aclose()


async def test_a_regenerate_that_fails_keeps_the_reply_it_had(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "question")
    reply = engine.messages[-1]
    fake_server.faults.append(("status", 400, {}, {"error": {"message": "bad request",
                                                             "type": "invalid_request_error"}}))
    events = await regenerate(engine)
    assert isinstance(final(events), ev.Failed)
    assert engine.messages[-1] is reply and engine.messages[0].status == "complete"
    await send(engine, "next")
    assert texts(fake_server.chat_requests[-1]) == ["question", reply.content, "next"]
    await engine.provider.aclose()


async def test_an_edited_question_starts_a_branch_and_the_old_one_stays(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    for text in ("one", "two", "three"):
        await send(engine, text)
    two = engine.messages[2]
    events = [e async for e in engine.stream_reply("two, edited", after=two.parent_id)]
    assert isinstance(final(events), ev.Finished)
    assert texts(fake_server.chat_requests[-1]) == ["one", "Reply 1: one", "two, edited"]
    assert [m.content for m in engine.messages] == [
        "one", "Reply 1: one", "two, edited", "Reply 4: two, edited"]
    edited = engine.messages[2]
    assert engine.branches.alternatives(edited) == (2, 2)
    # The old branch comes back whole, as it was left.
    engine.branches.switch_alternative(edited, -1)
    assert [m.content for m in engine.messages][2:] == [
        "two", "Reply 2: two", "three", "Reply 3: three"]
    assert len(engine.store.messages(engine.conversation.id)) == 8  # nothing deleted
    # Editing the very first question starts a branch at the top.
    events = [e async for e in engine.stream_reply("zero", after=0)]
    assert texts(fake_server.chat_requests[-1]) == ["zero"]
    assert engine.branches.alternatives(engine.messages[0]) == (2, 2)
    await engine.provider.aclose()


async def test_an_excluded_turn_leaves_the_requests_and_comes_back(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "keep this")
    await send(engine, "a wrong turn with a long paste " * 40)
    await send(engine, "and this")
    before = engine.usage().history
    turn = engine.branches.turn_of(engine.messages[3])
    assert [m.role for m in turn] == ["user", "assistant"]
    engine.branches.set_excluded(turn, True)
    assert engine.usage().history < before - 200
    await send(engine, "next")
    sent = texts(fake_server.chat_requests[-1])
    assert not any("wrong turn" in t for t in sent) and "keep this" in sent and "and this" in sent
    with Store(tmp_path / "sessions.db") as reader:
        stored = reader.messages(engine.conversation.id)
        data = reader.export(engine.conversation.id)
    assert [m.excluded for m in stored].count(True) == 2
    assert "excluded from requests" in to_markdown(data)
    engine.branches.set_excluded(turn, False)
    await send(engine, "once more")
    assert any("wrong turn" in t for t in texts(fake_server.chat_requests[-1]))
    await engine.provider.aclose()


async def test_each_branch_has_its_own_summary(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    engine = small_engine(fake_server, tmp_path)
    await send(engine, "alpha question about the window")
    fork_point = engine.messages[-1]
    # Branch B: talk until it compacts.
    i = 0
    while engine.summary is None:
        await send(engine, f"branch B turn {i}: " + "explain the window " * 20)
        i += 1
        assert i < 30
    b_summary = engine.summary
    assert any("branch B" in m.content for m in engine.store.messages(engine.conversation.id)
               if m.summary_id == b_summary.id)
    # Branch A, edited after the fork point: B's summary is no part of it.
    question_b = engine.messages[engine.messages.index(fork_point) + 1]
    await anext_all(engine.stream_reply("branch A instead", after=fork_point.id))
    assert engine.summary is None or engine.summary.id < b_summary.id
    system = fake_server.chat_requests[-1].body["messages"][0]["content"]
    assert "branch B" not in system
    # Back on B, its summary is in force again.
    engine.branches.switch_alternative(engine.messages[-2], -1)
    assert engine.messages[engine.messages.index(fork_point) + 1] is question_b
    assert engine.summary is not None and engine.summary.id == b_summary.id
    await engine.provider.aclose()


async def anext_all(events) -> list[ev.Event]:  # type: ignore[no-untyped-def]
    return [e async for e in events]


async def test_recall_on_a_branch_finds_its_own_turns_only(fake_server, tmp_path):
    lossy(fake_server)
    engine = small_engine(fake_server, tmp_path)
    await send(engine, "hello")
    start = engine.messages[-1]
    await send(engine, FACT_EN)
    await compact_times(engine, 2)
    await send(engine, "Remind me: how much was the launch budget Anna approved?")
    assert FACT_EN in recalled_block(fake_server.chat_requests[-1])
    # A branch from before the fact was said: its compactions never saw it, and recall does
    # not reach into the other branch for it.
    await anext_all(engine.stream_reply("a different start", after=start.id))
    await compact_times(engine, 2)
    await send(engine, "Remind me: how much was the launch budget Anna approved?")
    assert FACT_EN not in recalled_block(fake_server.chat_requests[-1])
    await engine.provider.aclose()


async def test_a_fork_copies_the_branch_and_says_where_it_came_from(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    for text in ("one", "two", "three"):
        await send(engine, text)
    conv = engine.branches.fork(engine.messages[3])
    assert conv.id != engine.conversation.id and "fork" in conv.title and "Reply 2" in conv.title
    forked = make_engine(fake_server, tmp_path, conversation_id=conv.id)
    assert [m.content for m in forked.messages] == ["one", "Reply 1: one", "two", "Reply 2: two"]
    assert forked.store.get_meta(conv.id, "forked_from") == {
        "conversation_id": engine.conversation.id, "message_id": engine.messages[3].id}
    await send(forked, "a new direction")
    assert texts(fake_server.chat_requests[-1]) == [
        "one", "Reply 1: one", "two", "Reply 2: two", "a new direction"]
    assert len(engine.store.messages(engine.conversation.id)) == 6  # the source is unchanged
    await engine.provider.aclose()
    await forked.provider.aclose()


async def test_a_fork_from_inside_the_summary_makes_its_own(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    engine = small_engine(fake_server, tmp_path)
    await send(engine, "我们先谈窗口的事情")
    for i in range(30):
        if engine.summary is not None:
            break
        await send(engine, f"turn {i}: " + "explain the window " * 20)
    covered = next(m for m in engine.messages if m.covered and m.role == "user")
    conv = engine.branches.fork(covered)
    assert "分支自" in conv.title  # the title's language is the session's
    forked = small_engine(fake_server, tmp_path, conversation_id=conv.id)
    assert forked.summary is None and not any(m.covered for m in forked.messages)
    # Later (uncovered) from the tip: the summary comes along and covers the same turns.
    tip = engine.branches.fork(engine.messages[-1])
    carried = make_engine(fake_server, tmp_path, conversation_id=tip.id)
    assert carried.summary is not None and carried.summary.content == engine.summary.content
    assert [m.covered for m in carried.messages] == [m.covered for m in engine.messages]
    await engine.provider.aclose()
    await forked.provider.aclose()
    await carried.provider.aclose()


def test_a_store_from_before_branches_reads_as_one_branch(tmp_path):
    path = tmp_path / "old.db"
    with Store(path) as store:
        conv = store.create_conversation()
        for text in ("a", "b", "c"):
            store.add_message(conv.id, Message("user", text))
    raw = sqlite3.connect(path)
    # As version 3 left it: no tree, no head.
    raw.executescript("UPDATE messages SET parent_id = NULL; UPDATE conversations "
                      "SET head_id = NULL; PRAGMA user_version = 3;")
    raw.commit()
    raw.executescript("DROP TRIGGER embeddings_stale_on_edit; DROP TABLE embeddings; "
                      "DROP TRIGGER memories_withdrawn_when_excluded; "
                      "DROP TRIGGER memories_withdrawn_with_message; "
                      "DROP TRIGGER memories_withdrawn_with_session; "
                      "ALTER TABLE messages DROP COLUMN pasted;"
                      "ALTER TABLE messages DROP COLUMN excluded; DROP INDEX messages_by_parent;"
                      "ALTER TABLE messages DROP COLUMN parent_id;"
                      "ALTER TABLE conversations DROP COLUMN head_id; DROP TABLE memories;"
                      "DROP TABLE attachments;")
    raw.close()
    with Store(path) as store:
        msgs = store.messages(conv.id)
        assert [m.parent_id for m in msgs] == [0, msgs[0].id, msgs[1].id]
        assert store.head(conv.id) == msgs[-1].id
        data = store.export(conv.id)
    assert all(m["on_branch_shown"] for m in data["messages"])
    json.dumps(data)


async def test_retry_after_a_failed_round_asks_the_question_again(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "first")
    fake_server.faults.append(("status", 400, {}, {"error": {"message": "bad request",
                                                             "type": "invalid_request_error"}}))
    events = await send(engine, "second")
    assert isinstance(final(events), ev.Failed) and engine.messages[-1].status == "failed"
    events = await regenerate(engine)
    assert isinstance(final(events), ev.Finished)
    assert texts(fake_server.chat_requests[-1]) == ["first", "Reply 1: first", "second"]
    assert [m.status for m in engine.messages] == ["complete"] * 4
    assert engine.branches.alternatives(engine.messages[-1]) == (1, 1)
    await engine.provider.aclose()


async def test_an_excluded_question_is_not_answered_again_until_it_is_back(fake_server,
                                                                          tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "first")
    await send(engine, "second")
    engine.branches.set_excluded(engine.branches.turn_of(engine.messages[-1]), True)
    requests = len(fake_server.chat_requests)
    events = await regenerate(engine)
    assert isinstance(final(events), ev.Failed) and "excluded" in final(events).error
    assert len(fake_server.chat_requests) == requests  # nothing was sent without its question
    engine.branches.set_excluded(engine.branches.turn_of(engine.messages[-1]), False)
    assert isinstance(final(await regenerate(engine)), ev.Finished)
    assert texts(fake_server.chat_requests[-1])[-1] == "second"
    await engine.provider.aclose()


async def _failed_then_more(engine, fake) -> None:  # type: ignore[no-untyped-def]
    """first (answered), second (its round refused: stored failed), third (answered after it)."""
    await send(engine, "first")
    fake.faults.append(("status", 400, {}, {"error": {"message": "bad request",
                                                      "type": "invalid_request_error"}}))
    assert isinstance(final(await send(engine, "second")), ev.Failed)
    await send(engine, "third")


async def test_an_earlier_failed_question_answered_again_keeps_the_later_turns_reachable(
        fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await _failed_then_more(engine, fake_server)
    failed = engine.messages[2]
    assert failed.status == "failed" and engine.messages[3].content == "third"
    assert isinstance(final(await regenerate_question(engine, failed)), ev.Finished)
    assert texts(fake_server.chat_requests[-1]) == ["first", "Reply 1: first", "second"]
    asked = engine.messages[2]
    assert [m.content for m in engine.messages][:3] == ["first", "Reply 1: first", "second"]
    assert engine.messages[3].role == "assistant" and "second" in engine.messages[3].content
    # The question asked again is a new version of it; < brings back the turns after it.
    assert engine.branches.alternatives(asked) == (2, 2)
    assert engine.branches.switch_alternative(asked, -1) is failed
    assert [m.content for m in engine.messages][2:4] == ["second", "third"]
    assert engine.messages[-1].content.startswith("Reply") and "third" in \
        engine.messages[-1].content
    # Nothing stored was lost, and the old branch still leaves its unanswered question out.
    assert len(engine.store.messages(engine.conversation.id)) == 7
    await send(engine, "fourth")
    assert texts(fake_server.chat_requests[-1])[-3:] == ["third", engine.messages[-3].content,
                                                        "fourth"]
    assert "second" not in texts(fake_server.chat_requests[-1])
    await engine.provider.aclose()


async def test_a_failed_try_at_an_earlier_question_shows_the_later_turns_again(fake_server,
                                                                             tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await _failed_then_more(engine, fake_server)
    shown = list(engine.messages)
    fake_server.faults.append(("status", 400, {}, {"error": {"message": "bad request",
                                                             "type": "invalid_request_error"}}))
    assert isinstance(final(await regenerate_question(engine, shown[2])), ev.Failed)
    assert engine.messages == shown  # the branch with the later turns, as it was
    tries = [m for m in engine.store.messages(engine.conversation.id)
             if m.content == "second"]
    assert [m.status for m in tries] == ["failed", "failed"]  # kept, and left out of requests
    assert engine.branches.alternatives(shown[2]) == (1, 2)
    await engine.provider.aclose()


async def regenerate_question(engine, question) -> list[ev.Event]:  # type: ignore[no-untyped-def]
    return [e async for e in engine.regenerate(question)]


async def test_a_session_stored_with_turns_hidden_behind_a_reply_shows_them_again(fake_server,
                                                                                 tmp_path):
    """Stored by a version that answered an earlier failed question in place: the question
    has the turns that followed it and a reply as children. The reply leads back to them."""
    with Store(tmp_path / "sessions.db") as store:
        cid = store.create_conversation().id
        first = store.add_message(cid, Message("user", "first"))
        store.add_message(cid, Message("assistant", "Reply 1: first", parent_id=first.id))
        failed = store.add_message(cid, Message("user", "second", status="failed"))
        store.add_message(cid, Message("user", "third", parent_id=failed.id))
        store.add_message(cid, Message("assistant", "Reply 3: third"))
        reply = store.add_message(cid, Message("assistant", "Reply 4: second",
                                               parent_id=failed.id))
        store.set_head(cid, reply.id)
    engine = make_engine(fake_server, tmp_path, conversation_id=cid)
    assert [m.content for m in engine.messages][2:] == ["second", "Reply 4: second"]
    shown = engine.messages[-1]
    assert engine.branches.alternatives(shown) == (2, 2)
    later = engine.branches.switch_alternative(shown, -1)
    assert later is not None and later.content == "third"
    assert [m.content for m in engine.messages][2:] == ["second", "third", "Reply 3: third"]
    await engine.provider.aclose()
