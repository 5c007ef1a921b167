"""Recall by the shape of what is asked for: "the config file", "which port", "那个命令" bring back
the turn with the path, the port or the command, even when the question shares no other word
with it; and ordinary messages that only say such words bring back nothing."""

from __future__ import annotations

import pytest

from jarvis_tui.core.recall.shapes import cues_of, shapes_of
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall import (
    RELEASE_TALK,
    compact_times,
    lossy,
    recalled,
    recalled_block,
    session,
)
from tests.engine_helpers import make_engine, send

SHAPED = [
    "I fixed the timeout by raising it in src/net/retry_policy.py, it was far too short.",
    "The metrics collector listens on 9464 now, I moved it off the old one.",
    "To rebuild the search index run `python -m indexer rebuild --full` overnight.",
    "支付网关的回调地址改成了 https://pay.example.cn/notify/v2，下周生效。",
    "数据库迁移用这个命令：`alembic upgrade head`，记得先备份。",
    "缓存服务现在监听在端口 6380，旧的停掉了。",
]
LATER = ["What is new today?", "今天有什么新消息？"]


@pytest.fixture
def shaped(tmp_path):
    with Store(tmp_path / "s.db") as store:
        yield store, *session(store, SHAPED + RELEASE_TALK * 4 + LATER)


@pytest.mark.parametrize(("question", "fact"), [
    # One word shared ("timeout"), and a file asked for: the turn with the path.
    ("Which file did we change for the timeout?", SHAPED[0]),
    ("What port does the metrics collector use again?", SHAPED[1]),
    ("What was the command for the search index?", SHAPED[2]),
    ("支付网关的回调链接是什么来着？", SHAPED[3]),
    ("数据库迁移要跑哪个命令？", SHAPED[4]),
    ("缓存服务的端口是多少？", SHAPED[5]),
])
def test_a_question_naming_a_shape_recalls_the_turn_that_holds_one(shaped, question, fact):
    store, cid, history = shaped
    assert recalled(store, cid, history, question) == [fact]


@pytest.mark.parametrize(("question", "fact"), [
    ("that port?", SHAPED[5]),  # the newest port said, not the newest number
    ("What was the URL again?", SHAPED[3]),
    ("上次说的端口是多少？", SHAPED[5]),
    ("那个命令是什么来着？", SHAPED[4]),
])
def test_a_question_that_is_only_a_shape_pointing_back_recalls_the_newest(shaped, question,
                                                                         fact):
    store, cid, history = shaped
    assert recalled(store, cid, history, question) == [fact]


@pytest.mark.parametrize("message", [
    "Can you open that file?",  # a request about something else, not the shape alone
    "What port should a new web service use?",  # no back-reference, nothing shared
    "Which command is best for finding large files?",
    "怎么查看一个端口被哪个程序占用？",
    "Open the config file and check the port, then run the command again.",  # not a question
    "config file port command url error",
])
def test_shape_words_alone_without_a_pointer_back_recall_nothing(shaped, message):
    store, cid, history = shaped
    assert recalled(store, cid, history, message) == []


def test_without_a_shape_the_one_shared_word_is_not_enough(shaped):
    store, cid, history = shaped
    # "timeout" alone is one word: chance, as before; asking for a file makes it the turn.
    assert recalled(store, cid, history, "Is the timeout fine now?") == []
    assert recalled(store, cid, history, "Is the timeout file fine now?") == [SHAPED[0]]


def test_cues_and_shapes():
    assert cues_of("Which file did we change?").kinds == {"path"}
    assert cues_of("what was the port?").kinds == {"port"}
    assert cues_of("那个服务的端口是多少来着？").kinds == {"port", "number"}
    assert cues_of("接口的响应时间是多少？").terms["时间"] == {"number", "time"}
    assert cues_of("那个服务的端口是多少来着？").pointing
    assert "口是" in cues_of("端口是多少？").terms  # the pair across the cue's edge
    assert cues_of("The config file is broken.").kinds == frozenset()  # not a question
    assert cues_of("what file? " + "x " * 200).kinds == frozenset()  # not one question
    assert shapes_of(SHAPED[1]) >= {"number", "port"}
    assert "port" not in shapes_of("He is 41 years old.")
    assert "port" in shapes_of("connect to db.internal:5432")
    assert "port" not in shapes_of("The meeting is at 10:30 tomorrow.")
    assert shapes_of(SHAPED[4]) >= {"command"}
    assert shapes_of(SHAPED[0]) >= {"path"}


async def test_after_three_compactions_the_file_asked_for_comes_back_into_the_request(
        fake_server, tmp_path):
    # The ledger off: recall alone must bring the path back, through the real engine, from a
    # question that shares one word ("timeout") with the turn that said it.
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                         details_max_tokens=0)
    await send(engine, SHAPED[0])
    await send(engine, SHAPED[5])
    await compact_times(engine, 3)
    assert "retry_policy" not in engine.summary.content

    await send(engine, "Which file did we change for the timeout?")
    block = recalled_block(fake_server.chat_requests[-1])
    assert "src/net/retry_policy.py" in block and "6380" not in block
    await send(engine, "上次说的端口是多少？")
    block = recalled_block(fake_server.chat_requests[-1])
    assert "6380" in block and "retry_policy" not in block
    await engine.provider.aclose()


ACROSS = [
    "我们决定把会话数据放在 PostgreSQL 里，不用 MongoDB 了。",
    "The nightly backup job writes to the bucket s3://acme-backups/nightly, keep it.",
]


@pytest.mark.parametrize(("question", "fact"), [
    ("Remind me, which database did we pick for the sessions again?", ACROSS[0]),
    ("之前那个备份任务写到哪里来着？", ACROSS[1]),
])
def test_a_question_in_the_other_language_recalls_the_turn(tmp_path, question, fact):
    """No word in common but what the glossary says in the other language ("sessions" 会话,
    备份 backup), and a pointer back."""
    with Store(tmp_path / "s.db") as store:
        cid, history = session(store, ACROSS + RELEASE_TALK * 4 + LATER)
        assert recalled(store, cid, history, question) == [fact]
