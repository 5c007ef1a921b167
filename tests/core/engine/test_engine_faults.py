"""The engine against the faults of issue 13 that live in the engine itself: a bogus learned
limit, a reply that ignores max_tokens, a server that hangs, two engines on one session, and a
store that is locked or full while a reply streams. Real HTTP, real SQLite files."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from dataclasses import replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.messages import COMPLETE, PARTIAL
from jarvis_tui.core.store.store import Store
from tests.engine_helpers import final, kinds, make_engine, send, until
from tests.fakeserver import overflow_answer
from tests.hostile_server import HostileServer, past_max_tokens, silent


def bogus_limit(fake, limit: int = 300) -> None:
    status, body = overflow_answer("openai", limit, 1200, 512)
    fake.faults.append(("status", status, {}, body))


async def test_a_bogus_limit_is_used_once_and_kept_only_when_seen_twice(make_fake_server,
                                                                        tmp_path):
    fake = make_fake_server(limit=100_000)
    engine = make_engine(fake, tmp_path, context_window=8192)
    cid = engine.conversation.id
    await send(engine, "hello " * 50)
    bogus_limit(fake)
    events = await send(engine, "after a proxy's odd error")
    learned = [e for e in events if isinstance(e, ev.ContextLimitLearned)]
    assert [(e.tokens, e.suspect) for e in learned] == [(300, True)]
    assert isinstance(final(events), ev.Finished)
    assert engine.context_window == 300  # this session makes do with it
    assert engine.store.get_meta(cid, "context_limit") is None  # but does not keep it
    again = make_engine(fake, tmp_path, context_window=8192, store=engine.store,
                        conversation_id=cid)
    assert again.context_window == 8192
    bogus_limit(fake)  # the same figure a second time: believed now
    learned = [e for e in await send(again, "and once more") if isinstance(
        e, ev.ContextLimitLearned)]
    assert [(e.tokens, e.suspect) for e in learned] == [(300, False)]
    assert engine.store.get_meta(cid, "context_limit") == 300
    resumed = make_engine(fake, tmp_path, context_window=8192, store=engine.store,
                          conversation_id=cid)
    assert resumed.context_window == 300
    # --context-window on the command line: the same window as when the limit was learned
    # is not news, and the limit stands; another window is, and wins.
    same = Engine(resumed.settings, engine.store, resumed.provider, cid,
                  forget_learned_limit=True)
    assert same.context_window == 300
    assert engine.store.get_meta(cid, "context_limit") == 300
    bigger = replace(resumed.settings, context_window=16_384)
    given = Engine(bigger, engine.store, resumed.provider, cid, forget_learned_limit=True)
    assert given.context_window == 16_384
    assert engine.store.get_meta(cid, "context_limit") is None


async def test_a_window_configured_anew_in_the_config_drops_the_limit_learned_under_the_old(
        make_fake_server, tmp_path):
    """No flag: the window comes from the config file or a variable. The same value on the
    next run keeps the learned limit; a changed value says the server changed, as a flag does."""
    fake = make_fake_server(limit=2048)
    engine = make_engine(fake, tmp_path, context_window=8192, keep_recent_turns=1)
    cid = engine.conversation.id
    for i in range(8):
        await send(engine, f"{i}: " + "lorem ipsum dolor sit amet " * 60)
    assert engine.store.get_meta(cid, "context_limit") == 2048
    same = make_engine(fake, tmp_path, context_window=8192, store=engine.store,
                       conversation_id=cid)
    assert same.context_window == 2048
    edited = make_engine(fake, tmp_path, context_window=32_768, store=engine.store,
                         conversation_id=cid)
    assert edited.context_window == 32_768
    assert engine.store.get_meta(cid, "context_limit") is None


async def test_a_sane_limit_is_kept_at_once(make_fake_server, tmp_path):
    fake = make_fake_server(limit=2048)
    engine = make_engine(fake, tmp_path, context_window=8192, keep_recent_turns=1)
    for i in range(8):
        await send(engine, f"{i}: " + "lorem ipsum dolor sit amet " * 60)
    assert any(r.overflowed for r in fake.chat_requests)
    assert engine.store.get_meta(engine.conversation.id, "context_limit") == 2048


async def test_an_empty_reply_from_a_proxy_is_checked_and_the_overflow_it_hides_compacted(
        make_fake_server, tmp_path):
    """LiteLLM in front of llama-cpp-python answers a streamed request over the real window
    with one empty chunk that "stopped": asked again unstreamed for one token, it names the
    limit, and the round compacts and answers."""
    fake = make_fake_server(limit=2048, flavor="litellm")
    engine = make_engine(fake, tmp_path, context_window=8192, keep_recent_turns=1)
    events: list[ev.Event] = []
    for i in range(8):
        events += await send(engine, f"{i}: " + "lorem ipsum dolor sit amet " * 60)
        assert isinstance(final(events), ev.Finished) and final(events).message.content
    probes = [r for r in fake.chat_requests if r.overflowed and not r.body.get("stream")]
    assert probes and all(r.body["max_tokens"] == 1 for r in probes)
    assert engine.context_window == 2048  # learned from the probe's refusal
    assert any(isinstance(e, ev.CompactionFinished) for e in events)


async def test_a_real_empty_reply_stays_empty_after_one_check(make_fake_server, tmp_path):
    fake = make_fake_server(limit=100_000)
    engine = make_engine(fake, tmp_path, context_window=8192)
    fake.faults.append(("empty",))
    events = await send(engine, "say nothing")
    assert isinstance(final(events), ev.Finished) and final(events).message.content == ""
    assert [r.body.get("stream") for r in fake.chat_requests] == [True, False]  # one check
    # A window the server named, and a request well inside it: nothing to check.
    detected = make_engine(fake, tmp_path, context_window=0, store=engine.store,
                           conversation_id=engine.conversation.id)
    detected.limit.size, detected.limit.source, detected.limit.detected = (
        100_000, "detected from the server", True)
    fake.faults.append(("empty",))
    before = len(fake.chat_requests)
    await send(detected, "nothing again")
    assert len(fake.chat_requests) == before + 1


async def test_a_reply_far_past_max_tokens_is_stopped_and_kept(tmp_path):
    with HostileServer(past_max_tokens) as server:
        engine = make_engine(server.base_url, tmp_path, response_reserve=64)
        events = await send(engine, "go on forever")
    end = final(events)
    assert isinstance(end, ev.Failed) and "past the reply limit" in end.error
    assert end.message is not None and end.message.status == PARTIAL
    stored = engine.store.messages(engine.conversation.id)
    assert stored[-1].content == end.message.content and "and more words" in stored[-1].content


async def test_a_read_timeout_is_asked_again_once_not_max_retries_times(tmp_path):
    with HostileServer(silent) as server:
        engine = make_engine(server.base_url, tmp_path, request_timeout=0.3, max_retries=4)
        events = await send(engine, "anyone there?")
        asked = len(server.requests)
    assert kinds(events).count("Retrying") == 1 and asked == 2
    assert isinstance(final(events), ev.Failed) and "read timeout" in final(events).error


async def test_two_engines_on_one_session_take_turns(make_fake_server, tmp_path):
    fake = make_fake_server(limit=100_000)
    fake.reply_fn = lambda body: "a reply that takes a while " * 40
    fake.chunk_delay = 0.003
    first = make_engine(fake, tmp_path)
    cid = first.conversation.id
    second = make_engine(fake, tmp_path, store=Store(tmp_path / "sessions.db"),
                         conversation_id=cid)
    a, b = await asyncio.gather(send(first, "question A"), send(second, "question B"))
    assert kinds(a).count("SessionBusy") + kinds(b).count("SessionBusy") == 1
    waited = b if "SessionBusy" in kinds(b) else a
    assert "SessionChanged" in kinds(waited)  # it read the other's turn before its own
    stored = first.store.messages(cid)
    assert [m.role for m in stored] == ["user", "assistant"] * 2
    for request in fake.chat_requests:
        roles = [m["role"] for m in request.body["messages"]]
        assert "user, user" not in ", ".join(roles)


async def test_a_retry_waits_for_the_other_engine_and_is_sent_after_it(make_fake_server,
                                                                        tmp_path):
    """/retry in one engine while another answers in the session: the retry waits, reads the
    session again (new records of every message), and still answers the question it was for."""
    fake = make_fake_server(limit=100_000)
    first = make_engine(fake, tmp_path)
    await send(first, "question A")
    cid = first.conversation.id
    second = make_engine(fake, tmp_path, store=Store(tmp_path / "sessions.db"),
                         conversation_id=cid)
    question = second.branches.last_question()
    assert question is not None and question.content == "question A"
    fake.reply_fn = lambda body: "a slow answer " * 100
    fake.chunk_delay = 0.003
    other = asyncio.ensure_future(send(first, "question B"))
    await until(lambda: first._session.held, "the first engine's round to hold the session")
    retried = [e async for e in second.regenerate(question)]
    await other
    assert "SessionBusy" in kinds(retried) and "SessionChanged" in kinds(retried)
    assert isinstance(final(retried), ev.Finished), final(retried)
    # Sent after the other's round, for the question it was asked for, alone on its branch.
    assert [m["content"] for m in fake.chat_requests[-1].body["messages"][1:]] == ["question A"]
    replies = [m for m in first.store.messages(cid) if m.role == "assistant"]
    assert len(replies) == 3 and second.branches.alternatives(second.messages[-1]) == (2, 2)


async def test_a_streaming_reply_is_saved_by_appending_and_read_back_whole(make_fake_server,
                                                                         tmp_path):
    fake = make_fake_server(limit=100_000)
    reply = "piece by piece " * 300
    fake.reply_fn = lambda body: reply
    fake.chunk_delay = 0.002
    engine = make_engine(fake, tmp_path, context_window=16_384, response_reserve=4096)
    seen: list[tuple[str, int]] = []
    async for event in engine.stream_reply("stream it"):
        if isinstance(event, ev.Delta) and engine.streaming_reply is not None \
                and engine.streaming_reply.id is not None:
            with Store(tmp_path / "sessions.db") as reader:  # another process's view
                stored = reader.messages(engine.conversation.id)[-1]
                parts = reader._db.execute("SELECT count(*) FROM message_parts").fetchone()[0]
            seen.append((stored.content, parts))
    assert any(parts > 1 for _, parts in seen)  # the reply grew by appended pieces
    assert all(reply.startswith(content) for content, _ in seen)
    with Store(tmp_path / "sessions.db") as reader:
        last = reader.messages(engine.conversation.id)[-1]
        left = reader._db.execute("SELECT count(*) FROM message_parts").fetchone()[0]
    assert (last.content, last.status, left) == (reply, COMPLETE, 0)  # folded in at the end


async def test_a_lock_held_mid_reply_delays_the_save_not_the_stream(make_fake_server, tmp_path):
    fake = make_fake_server(limit=100_000)
    fake.reply_fn = lambda body: "streamed under a lock " * 200
    fake.chunk_delay = 0.002
    engine = make_engine(fake, tmp_path, context_window=16_384, response_reserve=4096)
    held, release = threading.Event(), threading.Event()

    def other_program() -> None:
        # Held until the reply's final save has met it (however fast or slow the machine
        # streams), then let go.
        with sqlite3.connect(tmp_path / "sessions.db", timeout=10) as db:
            db.execute("BEGIN IMMEDIATE")
            held.set()
            release.wait(15)
            db.execute("COMMIT")

    thread: threading.Thread | None = None
    events: list[ev.Event] = []
    under_lock = 0  # deltas that came while the other program held the lock
    async for event in engine.stream_reply("lock test"):
        events.append(event)
        if isinstance(event, ev.SaveDelayed):
            release.set()
        if isinstance(event, ev.Delta):
            under_lock += held.is_set() and not release.is_set()
            if thread is None and engine.streaming_reply and engine.streaming_reply.id:
                thread = threading.Thread(target=other_program)
                thread.start()
                held.wait(5)
    release.set()
    thread.join()
    assert "SaveDelayed" in kinds(events) and isinstance(final(events), ev.Finished)
    # No delta waited for the lock, told by order, not by the clock: the lock is let go only
    # once the final save has met it, so a delta that had waited for it would come after that
    # save's SaveDelayed (or never, the store giving up after 5 s), not before.
    delayed = kinds(events).index("SaveDelayed")
    assert under_lock > 10 and "Delta" not in kinds(events)[delayed:]
    stored = engine.store.messages(engine.conversation.id)[-1]
    assert stored.content == "streamed under a lock " * 200 and stored.status == COMPLETE
