"""Recall across sessions, the real way: a store file holding several sessions, a new session's
engine against the fake server on loopback, and what its request carries."""

from __future__ import annotations

import sqlite3

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.recall.sessions import HOLDERS_READ, label, points_beyond, recall_beyond
from jarvis_tui.core.recall.turns import OTHER_SESSIONS_HEADER, RECALL_HEADER
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.tokens import TokenCounter
from jarvis_tui.texts.notices import describe
from tests.engine_helpers import make_engine, send

ETL = "Note for later: the nightly warehouse ETL runs on the host kestrel-07 at 02:15 UTC."
QUEUE = "我们决定把消息队列的重试上限定为七次，超过就进死信队列 dlq.orders。"
WORK = [  # a working session's everyday turns: the shared vocabulary of every session
    "The build is red again, the linter complains about an unused import in the handler.",
    "Can you review the retry logic in fetch_orders? The tests are slow today.",
    "构建又挂了，帮我看看测试为什么这么慢。",
    "Here's the log:\n```\n2026-11-20 10:01:02 INFO worker[311] job=sync batch=4 ok\n```",
]


def session(store: Store, title: str, texts: list[str], **message: object) -> int:
    """A stored session: each text a turn (the user's words and a short reply)."""
    conv = store.create_conversation(title=title, model="m")
    for text in texts:
        store.add_message(conv.id, Message("user", text, **message))  # type: ignore[arg-type]
        store.add_message(conv.id, Message("assistant", f"Noted. 好的。({len(text)})"))
    return conv.id


def sent_block(fake) -> str:  # type: ignore[no-untyped-def]
    """What the newest request carried of other sessions: in the new user message, never in
    the system message."""
    messages = fake.chat_requests[-1].body["messages"]
    assert OTHER_SESSIONS_HEADER not in messages[0]["content"]
    text = messages[-1]["content"]
    return text.split(OTHER_SESSIONS_HEADER, 1)[1] if OTHER_SESSIONS_HEADER in text else ""


@pytest.fixture
def stored(tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "Warehouse [ops] \x1b[31mnight\x07 jobs\nwith a newline", [
            *WORK, ETL, *WORK])
        session(store, "队列设计", [*WORK, QUEUE, *WORK])
        session(store, "Everyday", WORK * 5)
    return tmp_path


@pytest.mark.parametrize("question, wanted, other", [
    ("Last week we talked about the nightly warehouse ETL: which host does it run on?",
     "kestrel-07", "dlq.orders"),
    ("上次说的 ETL 主机是哪台？", "kestrel-07", "dlq.orders"),  # the glossary: 主机 host
    ("前几天定的消息队列重试超限以后进的死信队列叫什么？", "dlq.orders", "kestrel-07"),
    ("In the other chat: the dead letter queue for orders?", "dlq.orders", "kestrel-07"),
])
async def test_a_new_session_brings_back_the_turn_another_one_said(
        fake_server, stored, question, wanted, other):
    engine = make_engine(fake_server, stored)
    assert engine.summary is None  # a new session: no summary, nothing folded
    events = await send(engine, question)
    block = sent_block(fake_server)
    assert wanted in block and other not in block
    assert "The build is red" not in block  # shared vocabulary stays out
    said = [e for e in events if isinstance(e, ev.Recalled)]
    assert len(said) == 1 and said[0].turns == 1 and len(said[0].sessions) == 1
    assert said[0].sessions[0] in block  # the turn under its session's label
    notice = describe(said[0], "en") or ""
    assert "other sessions" in notice and said[0].sessions[0] in notice
    assert "其他会话" in (describe(said[0], "zh") or "")
    assert isinstance(events[-1], ev.Finished)
    await engine.provider.aclose()


@pytest.mark.parametrize("question", [
    "Which host runs the nightly warehouse ETL, kestrel or something else?",
    "As I said above, the nightly warehouse ETL must finish before 03:00 UTC.",
    "刚才说的死信队列 dlq.orders 里的消息怎么重新投递？",
    "消息队列的重试上限一般设成多少比较合适？",
])
async def test_by_words_without_a_pointer_beyond_the_session_no_other_session_is_read(
        fake_server, stored, question):
    # By meaning, a plain question does reach the session that answers it
    # (test_recall_meaning_sessions.py); by words, only one that points back.
    await recalls_nothing(fake_server, stored, question, recall_by_meaning=False)


@pytest.mark.parametrize("question", [
    "As I said above, the nightly warehouse ETL must finish before 03:00 UTC.",  # says
    "刚才说的死信队列 dlq.orders 里的消息怎么重新投递？",  # about this session ("刚才")
])
async def test_a_statement_or_a_question_about_this_session_reads_no_other(
        fake_server, stored, question):
    await recalls_nothing(fake_server, stored, question)


async def recalls_nothing(fake_server, stored, question: str,  # type: ignore[no-untyped-def]
                          **changes: object) -> None:
    """A new session's request for `question` carries no other session's turn, nor counts one."""
    engine = make_engine(fake_server, stored, **changes)
    events = await send(engine, question)
    assert sent_block(fake_server) == ""
    assert not any(isinstance(e, ev.Recalled) for e in events)
    assert engine.usage(pending=question).recalled == 0
    await engine.provider.aclose()


async def test_the_gauge_counts_it_and_the_budget_holds(fake_server, stored):
    engine = make_engine(fake_server, stored, recall_budget=0.15)
    question = "Yesterday you heard which host runs the nightly warehouse ETL, which was it?"
    assert engine.usage(pending=question).recalled > 0
    budget = int(engine.context_window * 0.15)
    found = recall_beyond(engine.store, engine.conversation.id, question, engine.counter,
                          budget)
    assert 0 < found.tokens <= budget
    tight = recall_beyond(engine.store, engine.conversation.id, question, engine.counter,
                          found.tokens - 1)
    assert tight.turns == []  # a turn comes whole or not at all
    await engine.provider.aclose()


def test_a_hostile_title_is_one_plain_line_in_its_label(stored):
    with Store(stored / "sessions.db") as store:
        cid = store.create_conversation(title="new").id
        found = recall_beyond(store, cid, "Last week: which host runs the nightly warehouse "
                                          "ETL?", TokenCounter("m", exact=False), 4000)
    assert len(found.turns) == 1
    shown = found.labels[0]
    assert shown.startswith("[Warehouse (ops) ") and shown.count("[") == 1
    assert shown.count("]") == 1 and shown.endswith("]")
    assert not any(ord(ch) < 32 or ch == "\x7f" for ch in shown)
    assert "\n" not in shown and "night" in shown
    assert found.block.count("\n[user] ") == 1  # a title never forges a message's line
    assert label("", 0).startswith("[untitled session, ")


def test_excluded_failed_and_deleted_turns_never_come_back(tmp_path):
    asked = "Last week: which host runs the nightly warehouse ETL?"
    counter = TokenCounter("m", exact=False)
    with Store(tmp_path / "s.db") as store:
        session(store, "work", WORK * 3)
        excluded = session(store, "excluded", [ETL], excluded=True)
        failed = session(store, "failed", [ETL], status=FAILED)
        cid = store.create_conversation(title="new").id
        assert recall_beyond(store, cid, asked, counter, 4000).turns == []
        kept = session(store, "kept", [ETL])
        got = recall_beyond(store, cid, asked, counter, 4000)
        assert [m.content for m in got.turns[0]][0] == ETL
        assert got.labels[0].startswith("[kept, ")
    with sqlite3.connect(tmp_path / "s.db") as db:  # deleted by another tool, as SQLite does
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM conversations WHERE id = ?", (kept,))
    with Store(tmp_path / "s.db") as store:
        assert recall_beyond(store, cid, asked, counter, 4000).turns == []
        assert {excluded, failed} <= {c.id for c in store.list_conversations()}


def test_a_huge_other_session_is_read_by_its_postings_not_whole(tmp_path):
    counter = TokenCounter("m", exact=False)
    with Store(tmp_path / "s.db") as store:
        conv = store.create_conversation(title="huge").id
        with store._write("fill") as db:  # 30,000 messages at once: the test is the recall
            db.executemany(
                "INSERT INTO messages (conversation_id, seq, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(conv, i, "user" if i % 2 == 0 else "assistant",
                  f"{WORK[i % len(WORK)]} step {i} " + "x" * 200, 1.0 + i)
                 for i in range(30_000)])
        session(store, "etl", [ETL])
        cid = store.create_conversation(title="new").id
        read: list[tuple[int, int | None]] = []  # (session, messages asked for; None: all)
        whole = store._messages

        def reading(conv_id: int, ids: list[int] | None = None):  # type: ignore[no-untyped-def]
            read.append((conv_id, None if ids is None else len(ids)))
            return whole(conv_id, ids)

        store._messages = reading  # type: ignore[method-assign]
        got = recall_beyond(store, cid, "Last week: which host runs the nightly warehouse "
                                        "ETL?", counter, 4000)
    assert [m.content for m in got.turns[0]][0] == ETL and len(got.turns) == 1
    # The work, counted rather than timed (the time is bench/recall/cross_session.py's): no session
    # is read whole, and of the huge one no more than a few of its 30,000 messages' text.
    assert read and all(n is not None for _, n in read), read
    assert sum(n or 0 for c, n in read if c == conv) <= HOLDERS_READ, read


@pytest.mark.parametrize("text", [
    "yesterday", "the other day", "last week", "Last time you said", "a few days ago",
    "in the other chat", "in another session", "our previous conversation", "上次", "上周",
    "昨天", "前几天", "另一个对话", "别的会话", "之前那个项目", "上个月"])
def test_what_points_beyond_the_session(text):
    assert points_beyond(text)


@pytest.mark.parametrize("text", [
    "as I said above", "earlier in this chat", "you mentioned it before", "again please",
    "刚才说的", "之前提到的那个函数", "上面那段代码", "last but not least", "the session token",
    "this conversation", "I'll do it tomorrow"])
def test_what_does_not(text):
    assert not points_beyond(text)


def test_in_session_and_cross_session_turns_share_one_block():
    from jarvis_tui.core.recall.sessions import joined
    from jarvis_tui.core.recall.turns import Recalled

    own = Recalled([[Message("user", "said here", id=1)]], 10)
    beyond = Recalled([[Message("user", "said there", id=9)]], 12, ["[there, 2026-11-01]"])
    both = joined(own, beyond)
    assert both.tokens == 22 and both.sessions == ("[there, 2026-11-01]",)
    block = both.block
    assert block.index(RECALL_HEADER) < block.index("said here") < block.index(
        OTHER_SESSIONS_HEADER) < block.index("[there, 2026-11-01]") < block.index("said there")


def test_search_across_sessions_leaves_out_what_requests_would_not_send(tmp_path):
    from jarvis_tui.core.recall.sessions import search_sessions

    with Store(tmp_path / "s.db") as store:
        kept = session(store, "kept", [ETL])
        session(store, "excluded", [ETL], excluded=True)
        session(store, "failed", [ETL], status=FAILED)
        branched = session(store, "branched", [ETL])
        first = store.messages(branched)[0]
        # The question edited: a new branch from the top; the old one stays stored, unshown.
        edited = store.add_message(branched, Message("user", "What's for lunch?", parent_id=0))
        store.set_head(branched, edited.id or 0)
        found = search_sessions(store, "warehouse ETL kestrel")
        assert [(f.session.id, f.turn[0].content) for f in found] == [(kept, ETL)]
        assert [m.role for m in found[0].turn] == ["user", "assistant"]  # the whole turn
        assert search_sessions(store, "warehouse ETL kestrel", beside=kept) == []
        assert first.id not in {m.id for f in found for m in f.turn}


async def test_a_fork_is_not_told_its_own_turns_again(fake_server, tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        original = session(store, "original", [*WORK, ETL])
        session(store, "queues", [QUEUE])
        fork = store.fork(original, store.messages(original), "fork", None).id
    engine = make_engine(fake_server, tmp_path, conversation_id=fork)
    await send(engine, "Last week: which host runs the nightly warehouse ETL?")
    assert sent_block(fake_server) == ""  # it is in this session's own turns already
    await send(engine, "In the other chat: the dead letter queue for orders?")
    assert "dlq.orders" in sent_block(fake_server)
    await engine.provider.aclose()


CODE = '''def acquire(self):
    # When it is zero, it blocks, waiting until some other thread calls release().
    while self._value == 0:
        self._cond.wait()
    # The previous session is closed first, as the other session may hold the lock.
    self._value -= 1
    return True
'''
LOG = "\n".join(f"2026-11-2{i} 10:0{i}:00 INFO worker[31{i}] 昨天 的任务 batch={i} 完成"
                for i in range(6))


@pytest.mark.parametrize("text", [
    f"Here's the file:\n```python\n{CODE}```",
    f"日志如下：\n```\n{LOG}\n```",
    "fix the race where another thread reads the queue"])
def test_a_pointer_inside_pasted_code_or_about_threads_points_nowhere(text):
    assert not points_beyond(text)
    assert points_beyond(text + "\n\nThis is the same bug as last week, isn't it?")


async def test_the_next_request_begins_with_this_one_recalled_turns_and_all(fake_server, stored):
    engine = make_engine(fake_server, stored)
    await send(engine, "Last week: which host runs the nightly warehouse ETL?")
    first = fake_server.chat_requests[-1].body["messages"]
    assert "kestrel-07" in first[-1]["content"]
    await send(engine, "Thanks. Now write me a haiku about spring rain.")
    second = fake_server.chat_requests[-1].body["messages"]
    # The provider's prefix cache serves all but the new turn: the block stays where it was,
    # and the system message never changed for it.
    assert second[:len(first)] == first
    assert OTHER_SESSIONS_HEADER not in second[-1]["content"]
    await engine.provider.aclose()


async def test_kept_apart_no_other_session_reaches_the_request(fake_server, stored):
    engine = make_engine(fake_server, stored, recall_other_sessions=False)
    question = "Last week we talked about the nightly warehouse ETL: which host does it run on?"
    assert engine.usage(pending=question).recalled == 0
    events = await send(engine, question)
    assert sent_block(fake_server) == ""
    assert "kestrel-07" not in str(fake_server.chat_requests[-1].body["messages"])
    assert not any(isinstance(e, ev.Recalled) for e in events)
    await engine.provider.aclose()


async def test_an_earlier_asking_of_the_question_does_not_outrank_the_turn_that_said_it(
        fake_server, stored):
    asked = "Last week we talked about the nightly warehouse ETL: which host does it run on?"
    with Store(stored / "sessions.db") as store:
        for _ in range(3):  # asked before, three times, and never answered
            conv = store.create_conversation(title="asking again", model="m")
            store.add_message(conv.id, Message("user", asked))
            store.add_message(conv.id, Message("assistant", "I don't have that here."))
    engine = make_engine(fake_server, stored)
    await send(engine, asked)
    block = sent_block(fake_server)
    assert "kestrel-07" in block and "asking again" not in block
    await engine.provider.aclose()
