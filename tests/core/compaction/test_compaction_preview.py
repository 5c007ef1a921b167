"""/compact's preview in the engine: proposing stores nothing, committing stores what the user
accepted (as edited), discarding changes nothing but the bill, and a proposal the session moved
past is refused with nothing stored."""

from __future__ import annotations

import asyncio

from jarvis_tui.core.compaction_proposal import CompactionProposal, stale
from jarvis_tui.core.details.ledger import HEADER
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.messages import Message
from tests.core.details.test_ledger import PLANTED, replies
from tests.engine_helpers import is_summary_request, kinds, make_engine, send, until


async def talked(fake, tmp_path, **changes) -> Engine:  # type: ignore[no-untyped-def]
    replies(fake)  # a lossy summariser: the planted details go to the ledger
    engine = make_engine(fake, tmp_path, keep_recent_turns=1, **changes)
    for text, _ in PLANTED:
        await send(engine, text)
    await send(engine, "Unrelated: gardening")
    return engine


async def propose(engine: Engine, focus: str | None = None) -> CompactionProposal:
    events = [e async for e in engine.compact(reason="manual", focus=focus, preview=True)]
    assert kinds(events) == ["CompactionStarted", "CompactionProposed"]
    return events[-1].proposal


def covered_ids(engine: Engine) -> list[int]:
    return [m.id for m in engine.store.messages(engine.conversation.id) if m.summary_id]


async def test_a_proposal_stores_nothing(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    cid = engine.conversation.id
    before, sent_before = engine.usage().used, list(engine.history())
    proposal = await propose(engine, focus="the collector")
    assert any(is_summary_request(r.body) for r in fake_server.chat_requests)
    assert proposal.text.startswith("Summary: the user and the assistant discussed")
    assert HEADER in proposal.text and "/etc/collector.yaml" in proposal.text
    assert proposal.focus == "the collector" and proposal.before == before
    assert len(proposal.evict) == 6 and proposal.base_summary_id is None
    assert engine.store.latest_summary(cid) is None and engine.summary is None
    assert covered_ids(engine) == [] and engine.history() == sent_before
    assert engine.usage().used == before
    assert engine.store.usage_totals(cid)[-1].kind == "chat"  # the bill is not in yet
    # The estimate after it: what the gauge would show once it is stored as proposed.
    assert engine.tokens_after(proposal, proposal.text) < before


async def test_committing_stores_it_as_compact_did(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    guess = engine.tokens_after(proposal, proposal.text)
    events = [e async for e in engine.commit_compaction(proposal, proposal.text)]
    # The decision said in a folded turn waits as a suggestion (PLANTED's third).
    assert kinds(events) == ["MemorySuggested", "CompactionFinished"]
    assert [e.text for e in engine.store.memories(("suggested",))] == [PLANTED[2][0]]
    done = events[1]
    summary = engine.store.latest_summary(engine.conversation.id)
    assert summary.content == proposal.text and summary.kind == "manual"
    assert done.summary_id == summary.id and done.reason == "manual"
    assert done.covered_ids == tuple(m.id for m in proposal.evict)
    assert covered_ids(engine) == list(done.covered_ids)
    assert done.calls == proposal.calls >= 1 and done.tokens_after == engine.usage().used
    assert done.tokens_after == guess  # the editor's estimate is what the gauge then shows
    usage = engine.store.last_compaction_usage(engine.conversation.id)
    assert [u.summary_id for u in usage] == [summary.id] and usage[0].freed_tokens > 0
    await send(engine, "next")
    system = fake_server.chat_requests[-1].body["messages"][0]["content"]
    assert proposal.text in system


async def test_an_edited_proposal_is_stored_as_edited(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    events = [e async for e in engine.commit_compaction(proposal, "  The user runs a collector.\n")]
    assert kinds(events) == ["MemorySuggested", "CompactionFinished"]
    summary = engine.store.latest_summary(engine.conversation.id)
    assert (summary.content, summary.kind) == ("The user runs a collector.", "edited")
    assert summary.covered_count == len(proposal.evict)


async def test_an_empty_text_is_refused(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    events = [e async for e in engine.commit_compaction(proposal, " \n ")]
    assert kinds(events) == ["CompactionFailed"] and "it is empty" in events[0].error
    assert engine.store.latest_summary(engine.conversation.id) is None
    assert covered_ids(engine) == []
    spent = [t for t in engine.store.usage_totals(engine.conversation.id) if t.kind == "summary"]
    assert [t.requests for t in spent] == [1]  # refused is discarded: the request still counts


async def test_discarding_changes_nothing_but_counts_the_summary_requests(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    cid = engine.conversation.id
    before = engine.usage().used
    proposal = await propose(engine)
    engine.discard_compaction(proposal)
    assert engine.store.latest_summary(cid) is None and covered_ids(engine) == []
    assert engine.usage().used == before
    spent = [t for t in engine.store.usage_totals(cid) if t.kind == "summary"]
    assert len(spent) == 1 and spent[0].requests == 1 and not spent[0].freed_tokens
    assert engine.store.last_compaction_usage(cid) == []  # no compaction to show in the panel
    await send(engine, "next")
    sent = [m["content"] for m in fake_server.chat_requests[-1].body["messages"]]
    assert PLANTED[0][0] in sent  # still verbatim


async def test_a_proposal_another_process_compacted_past_is_refused(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    # Another jarvis-tui on the same session compacts and stores its summary meanwhile.
    other = make_engine(fake_server, tmp_path, keep_recent_turns=1, store=engine.store,
                        conversation_id=engine.conversation.id)
    theirs = [e async for e in other.compact(reason="manual")]
    assert kinds(theirs) == ["CompactionStarted", "MemorySuggested", "CompactionFinished"]
    stored = engine.store.summaries(engine.conversation.id)
    events = [e async for e in engine.commit_compaction(proposal, "mine, edited")]
    assert kinds(events) == ["SessionChanged", "CompactionFailed"]
    assert events[-1].error.startswith("the proposed summary was not stored: the session's "
                                       "summary changed after this one was proposed")
    assert engine.store.summaries(engine.conversation.id) == stored  # theirs only
    assert engine.summary == stored[-1]


async def test_a_proposal_for_another_session_is_refused(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    elsewhere = make_engine(fake_server, tmp_path, store=engine.store)  # a new session
    events = [e async for e in elsewhere.commit_compaction(proposal, proposal.text)]
    assert kinds(events) == ["CompactionFailed"]
    assert f"it was made for session {engine.conversation.id}, not this one" in events[0].error
    assert engine.store.latest_summary(engine.conversation.id) is None
    assert elsewhere.store.latest_summary(elsewhere.conversation.id) is None


def test_a_message_summarised_or_pinned_since_makes_it_stale():
    first, second = Message("user", "a", id=1), Message("assistant", "b", id=2)
    proposal = CompactionProposal(7, "S", (first, second), None, 100, rest=10, reason="manual",
                                  focus=None, model="m", prompt_tokens=1, completion_tokens=1,
                                  cached_tokens=None, calls=1, cached_prefix=False)
    now = [Message("user", "a", id=1), Message("assistant", "b", id=2)]
    assert stale(proposal, 7, None, now) is None
    now[1].pinned = True
    assert "message 2 it would fold in is already summarised or pinned" in stale(
        proposal, 7, None, now)
    assert "message 2 it would fold in is no longer in the session" in stale(
        proposal, 7, None, now[:1])
    assert "summary changed" in stale(proposal, 7, 3, now)


async def test_a_summariser_failure_proposes_nothing(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    fake_server.reply_fn = lambda body: " " if is_summary_request(body) else "ok"
    events = [e async for e in engine.compact(reason="manual", preview=True)]
    assert kinds(events) == ["CompactionStarted", "CompactionFailed"]
    assert events[-1].error.startswith("could not summarise")
    assert engine.store.latest_summary(engine.conversation.id) is None
    assert covered_ids(engine) == []


async def test_a_commit_waits_for_the_round_on_its_way(fake_server, tmp_path):
    engine = await talked(fake_server, tmp_path)
    proposal = await propose(engine)
    fake_server.chunk_delay = 0.05  # a reply that takes a while to stream
    fake_server.reply_fn = lambda body: "word " * 20
    round_ = asyncio.create_task(send(engine, "a question sent meanwhile"))
    await until(lambda: engine.streaming_reply, "the reply to start streaming")
    assert not round_.done()
    events = [e async for e in engine.commit_compaction(proposal, proposal.text)]
    assert round_.done() and kinds(round_.result())[-1] == "Finished"
    assert kinds(events) == ["MemorySuggested", "CompactionFinished"]
    # Folded in: what was proposed; the question and its reply stay verbatim after it.
    assert [m.content for m in engine.history()][-2:] == ["a question sent meanwhile",
                                                           "word " * 20]
