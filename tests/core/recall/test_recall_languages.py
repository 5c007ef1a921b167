"""Recall across sessions in the other language, the real way: a store file with working
sessions in English and Chinese, a new session's engine against the fake server on loopback,
and what its request carries; and the glossary it reads, keyed as the index makes terms."""

from __future__ import annotations

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.recall.glossary import ENTRIES
from jarvis_tui.core.recall.turns import bridged, content_terms
from jarvis_tui.core.recall.words import chinese_words, other_language
from jarvis_tui.core.store.search_index import terms
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall_sessions import WORK, recalls_nothing, sent_block, session
from tests.engine_helpers import make_engine, send

BACKUPS = "FYI the staging database backups are uploaded every night to the bucket nightly-dumps-7."
REFUNDS = "The refund callback integration is owned by the payments team; Lena is its tech lead."
NOTIFY = "我们决定通知服务的重试上限改成五次，对应的配置项是 notify.retry_max。"
POOL = "只读副本的连接池上限是 25，别再调大了，调大以后主库会被拖慢。"
# Everyday turns that use the glossary's common words in every other message, in both
# languages: sharing those says nothing about which turn a question means.
CHATTER = [
    "The deploy went out, the tests passed, and the config for staging is unchanged.",
    "部署完了，测试也过了，预发环境的配置没改。",
    "Let's schedule a team meeting about the project and the tech debt next week.",
    "团队开会讨论了项目进度和技术债，下周再同步。",
]


@pytest.fixture
def stored(tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "ops notes", [*WORK, BACKUPS, *CHATTER, REFUNDS, *WORK])
        session(store, "通知服务", [*WORK, NOTIFY, *CHATTER, POOL, *WORK])
        session(store, "Everyday", (WORK + CHATTER) * 3)
    return tmp_path


@pytest.mark.parametrize("question, wanted", [
    ("上周说的预发数据库每晚的备份传到哪个存储桶了？", "nightly-dumps-7"),
    ("上次说退款回调集成的负责人是谁？", "Lena"),
    ("Last week we decided the retry limit for the notification service: which config key?",
     "notify.retry_max"),
    ("In the other chat, what was the connection pool limit for the read-only replica?",
     "别再调大了"),
])
async def test_a_question_in_the_other_language_brings_back_the_turn(
        fake_server, stored, question, wanted):
    engine = make_engine(fake_server, stored)
    events = await send(engine, question)
    block = sent_block(fake_server)
    assert wanted in block
    assert not any(text in block for text in CHATTER)  # only the turn asked about
    said = [e for e in events if isinstance(e, ev.Recalled)]
    assert len(said) == 1 and said[0].turns == 1
    await engine.provider.aclose()


@pytest.mark.parametrize("question", [
    # Only the glossary's common words, which half the turns hold.
    "上周部署和测试的配置你再帮我看看？",
    "Last week the team talked about the project and the tech, thoughts?",
    # A few glossary words in a sentence that is about much more than they say.
    "上次会议指出目前主要风险是第三方退款接口的文档不完整，需要尽快和对方沟通确认。",
])
async def test_common_glossary_words_alone_bring_back_nothing(fake_server, stored, question):
    # The glossary's rule, by words alone. By meaning, "the team talked about the project and
    # the tech" is what "a team meeting about the project and the tech debt" was about, and
    # it comes back (test_recall_meaning_sessions.py measures what should not).
    await recalls_nothing(fake_server, stored, question, recall_by_meaning=False)


def test_every_chinese_word_is_keyed_by_a_pair_the_index_makes_of_it():
    for line in ENTRIES.strip().splitlines():
        written, *english = line.split()
        word, _, key = written.partition("/")
        key = key or word[-2:]
        assert len(key) == 2 and key in terms(word).split(), line
        assert english and all(w == w.lower() and w.isalnum() for w in english), line
        assert set(english) <= set(other_language(key)), line


def test_chinese_words_are_found_longest_first_and_their_share_counted():
    words, share = chinese_words("数据仓库的备份")
    assert words == ["数据", "仓库", "备份"]  # never 据仓, the pair across two words
    assert share == 1.0  # 的 says nothing alone
    assert chinese_words("测试环境的数据库")[0] == ["测试", "环境", "据库"]  # 数据库 is one word
    words, share = chinese_words("会议指出目前风险很大")
    assert words == ["会议"] and share == pytest.approx(2 / 10)
    assert chinese_words("no chinese here") == ([], 0.0)


@pytest.mark.parametrize("english, chinese", [
    ("retries", "重试"), ("configured", "配置"), ("machines", "机器"), ("backups", "备份"),
    ("deploying", "部署"),
])
def test_the_questions_inflections_find_the_glossarys_plain_words(english, chinese):
    assert chinese in other_language(english)


@pytest.mark.parametrize("question, said", [
    ("退款回调集成的负责人是谁？", ["退款", "回调", "集成", "责人"]),
    ("预发环境的 Postgres 副本在哪台主机上？", ["预发", "环境", "副本", "主机", "postgres"]),
    # Glossary words that are not most of what it says: no English turn can be shown to be
    # about the rest.
    ("会议指出目前主要风险是第三方退款接口的文档不完整，需要尽快和对方沟通确认。", []),
    ("The refund callback integration, who owns it?", []),  # its own words are already English
])
def test_a_question_as_the_other_language_can_say_it(question, said):
    assert bridged(question, content_terms(question)[0]) == said
