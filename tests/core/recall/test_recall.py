"""Recall against the fake server: facts stated early survive three compactions by a lossy
summariser, and come back into the request when a later question is about them; and against a
real store, what counts as a message being about an earlier turn."""

from __future__ import annotations

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.turns import MAX_TERMS, RECALL_HEADER, recall
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter
from tests.engine_helpers import is_summary_request, make_engine, send

FACT_EN = "For the record: the launch budget is 4,200 euros, approved by Anna on Monday."
FACT_ZH = "记一下：服务器的密码提示是鹈鹕，上周五换的。"
FILLER = "Question {i}: tell me more about token windows and long conversations. " * 6


def lossy(fake):
    """A summariser that keeps the gist and drops every detail, as real ones sometimes do."""
    def reply(body: dict) -> str:
        if is_summary_request(body):
            return "Summary: the user and the assistant talked about plans and token windows."
        return fake.default_reply(body) + " and some more words in the answer." * 4
    fake.reply_fn = reply


async def compact_times(engine, n: int) -> None:  # type: ignore[no-untyped-def]
    """Unrelated turns until the session has compacted `n` times more."""
    compactions = i = 0
    while compactions < n:
        events = await send(engine, FILLER.format(i=i))
        compactions += sum(isinstance(e, ev.CompactionFinished) for e in events)
        i += 1
        assert i < 60, f"the conversation never compacted {n} times"


def recalled_block(request) -> str:
    """The recalled turns a request carried: in its newest user message, never in the system
    message (which then stays the same from turn to turn)."""
    messages = request.body["messages"]
    assert RECALL_HEADER not in messages[0]["content"]
    text = messages[-1]["content"]
    assert messages[-1]["role"] == "user"
    return text.split(RECALL_HEADER, 1)[1] if RECALL_HEADER in text else ""


async def test_facts_come_back_after_three_compactions(fake_server, tmp_path):
    lossy(fake_server)
    # No ledger: recall alone must bring the facts back (the ledger would hold them now).
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                         details_share=0.0)
    await send(engine, FACT_EN)
    await send(engine, FACT_ZH)
    await compact_times(engine, 3)
    covered = {m.content for m in engine.messages if m.covered}
    assert FACT_EN in covered and FACT_ZH in covered  # only the store still has them
    assert "4,200" not in engine.summary.content and "鹈鹕" not in engine.summary.content

    events = await send(engine, "Remind me: how much was the launch budget Anna approved?")
    block = recalled_block(fake_server.chat_requests[-1])
    assert FACT_EN in block and FACT_ZH not in block
    assert "Question" not in block  # unrelated turns stay out
    said = [e for e in events if isinstance(e, ev.Recalled)]
    assert len(said) == 1 and said[0].turns == 1
    assert isinstance(events[-1], ev.Finished)

    events = await send(engine, "服务器的密码提示是什么来着？")
    block = recalled_block(fake_server.chat_requests[-1])
    assert FACT_ZH in block and FACT_EN not in block and "Question" not in block
    assert isinstance(events[-1], ev.Finished)

    # A question about none of it recalls nothing.
    await send(engine, "What is the capital of Portugal?")
    assert recalled_block(fake_server.chat_requests[-1]) == ""
    # Every request fitted: the server never refused one.
    assert not any(r.overflowed for r in fake_server.requests)
    await engine.provider.aclose()


async def test_recall_budget_zero_turns_it_off(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                         recall_budget=0.0)
    await send(engine, FACT_EN)
    for i in range(12):
        await send(engine, FILLER.format(i=i))
    assert any(m.covered and m.content == FACT_EN for m in engine.messages)
    await send(engine, "How much was the launch budget Anna approved?")
    assert recalled_block(fake_server.chat_requests[-1]) == ""
    await engine.provider.aclose()


async def test_the_gauge_counts_what_the_draft_would_recall(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    await send(engine, FACT_EN)
    for i in range(12):
        await send(engine, FILLER.format(i=i))
    assert engine.summary is not None
    about = engine.usage(pending="how much was the launch budget Anna approved?")
    unrelated = engine.usage(pending="what is the capital of Portugal?")
    assert about.recalled > 0 and unrelated.recalled == 0
    assert about.used - unrelated.used >= about.recalled - 5  # counted in what is used
    await engine.provider.aclose()


# -- what counts as "about an earlier turn": recall() against a real store ------------------

RELEASE_TALK = [  # a session that keeps coming back to the same few things
    "We need to discuss the release build again, the build is slow.",
    "The release build failed on the test step, can we discuss it?",
    "Let's plan the release and the build for next week.",
    "我们讨论一下发布的流程，构建太慢了。",
    "我们再讨论一下构建脚本的问题。",
    "发布之前我们要讨论测试的安排。",
]
FACTS = [
    "For the record: the staging database lives at /srv/pg/staging-14 and listens on 6543.",
    "My neighbour's tortoise is called Sir Reginald and he is 41 years old.",
    "记一下：服务器的密码提示是鹈鹕，上周五换的。",
    "顺便说一下，我表姐的乌龟叫花卷，今年三岁。",
]


def session(store: Store, texts: list[str], *, uncovered: int = 2) -> tuple[int, History]:
    """Each text a turn (the user's words and a short reply), all but the last `uncovered`
    turns covered by a summary."""
    conv = store.create_conversation(model="m")
    msgs = []
    for text in texts:
        msgs.append(store.add_message(conv.id, Message("user", text)))
        msgs.append(store.add_message(conv.id, Message("assistant", "Noted. 好的。")))
    store.add_summary(conv.id, "talk about releases", msgs[:-2 * uncovered], kind="auto")
    return conv.id, History(store.messages(conv.id))


def recalled(store: Store, cid: int, history: History, query: str) -> list[str]:
    got = recall(store, cid, history, query, TokenCounter("m", exact=False), 4000)
    return [m.content for turn in got.turns for m in turn if m.role == "user"]


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.db") as s:
        yield s


def test_prose_that_only_shares_common_words_recalls_nothing(store):
    cid, history = session(store, RELEASE_TALK * 5 + FACTS + ["What is new today?"] * 3)
    for prose in ["Can we discuss the release build tomorrow? The build seems slow again.",
                  "I think the release should wait until the database team is back.",
                  "My neighbour is moving next month, so the old tortoise tank is free.",
                  "我们明天再讨论发布的事情吧，构建还是有点慢。",
                  "我表姐下个月要搬家了，乌龟也一起去。",
                  "服务器今天好像有点慢，我们讨论一下原因。"]:
        assert recalled(store, cid, history, prose) == [], prose


def test_a_question_about_a_name_number_or_path_recalls_its_turn(store):
    cid, history = session(store, FACTS[:2] + RELEASE_TALK * 5 + FACTS[2:]
                           + ["What is new today?"] * 3)
    for question, fact in [
        ("Which port does the staging database at /srv/pg use?", FACTS[0]),
        ("How old is Sir Reginald by now?", FACTS[1]),
        ("那台服务器的密码提示是啥？", FACTS[2]),
        ("我表姐家那只乌龟叫什么？", FACTS[3]),
    ]:
        assert recalled(store, cid, history, question) == [fact], question


def test_a_back_reference_lowers_the_bar_but_is_never_enough_alone(store):
    cid, history = session(store, RELEASE_TALK * 5 + FACTS + ["What is new today?"] * 3)
    # Each shares under half of what it asks with the fact ("host", "disk", "外号" are in no
    # turn): not enough on its own, enough when the user says it is about something earlier.
    # ("名字" would not do: it asks for a name, and the fact holds one; see test_recall_shapes.)
    for plain, back, fact in [
        ("Does the staging database still live on the old host with the big disk?",
         "As you said, does the staging database still live on the old host with the big disk?",
         FACTS[0]),
        ("我表姐家那只乌龟叫啥外号？", "我表姐家那只乌龟叫啥外号来着？", FACTS[3]),
    ]:
        assert recalled(store, cid, history, plain) == [], plain
        assert recalled(store, cid, history, back) == [fact], back
    for alone in ["What did you say earlier?", "Remember what we discussed before? Again?",
                  "Let's try that again.", "还记得之前说的吗？", "你刚才说的是什么来着？"]:
        assert recalled(store, cid, history, alone) == [], alone


def test_a_word_frequent_in_the_session_or_one_word_alone_does_not_recall(store):
    # "tortoise" and "乌龟" come up all the time here; "Reginald" once.
    talk = ["The tortoise ate lettuce again.", "乌龟今天又不吃东西。",
            "Is the tortoise too cold in winter?", "乌龟需要晒太阳吗？"]
    cid, history = session(store, talk * 6 + FACTS + ["What is new today?"] * 3)
    assert recalled(store, cid, history, "Should my tortoise eat lettuce?") == []
    assert recalled(store, cid, history, "乌龟晒太阳要多久？") == []
    assert recalled(store, cid, history, "Reginald?") == []  # one word: as likely chance
    assert recalled(store, cid, history, "Sir Reginald?") == [FACTS[1]]


def test_the_message_being_sent_is_not_evidence_of_itself(store):
    said = "The canary build of pelican-api is pinned to 7.3.1."
    # Said in three turns: still few enough to single them out, but not with a fourth.
    cid, history = session(store, [said] * 3 + RELEASE_TALK * 3 + ["What is new today?"] * 3)
    query = "Which pelican-api version is the canary pinned to?"
    before = recalled(store, cid, history, query)
    assert before == [said] * 3
    store.add_message(cid, Message("user", query))  # the engine stores it, then recalls
    history = History(store.messages(cid))
    assert recalled(store, cid, history, query) == before


def test_a_pasted_file_is_weighed_by_its_first_terms_only(store, monkeypatch):
    log = "\n".join(f"worker-{i} failed: timeout after {i * 7} ms on shard {i % 13}"
                    for i in range(110))  # over MAX_TERMS terms, within half the budget
    cid, history = session(store, [log] + RELEASE_TALK * 3 + ["What is new today?"] * 3)
    asked: list[int] = []
    postings = store.postings

    def counted(conv_id, words, *, cap):
        asked.append(len(words))
        return postings(conv_id, words, cap=cap)

    monkeypatch.setattr(store, "postings", counted)
    # The same log pasted again, with more after it: still about that turn.
    assert recalled(store, cid, history, log + "\nand 5000 more lines like these") == [log]
    assert asked == [MAX_TERMS]  # each term a look-up as the user types: a few hundred at most
