"""Recall across sessions by meaning (issue 40, item 3), the real way: a store file holding
several sessions, the real embedding model, a new session's engine against the fake server,
and what its request carries. A question that does not point back still finds the session
that answers it; one about nothing stored, or about what is in front of the user, finds
nothing."""

from __future__ import annotations

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.recall import sessions as sessions_module
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall_sessions import (
    ETL,
    WORK,
    recalls_nothing,
    sent_block,
    session,
)
from tests.engine_helpers import make_engine, send

CAR = "Evan: I finally got my new Prius last week, it replaced the old van."
FLAT = "小李：我上个月在成都租了一套两居室，离公司很近。"
PETS = ["My cat Miso knocked a plant off the shelf again, she is a menace.",
        "We adopted a second cat from the shelter, a grey one called Pebble."]


@pytest.fixture
def stored(tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", [*WORK, CAR, *WORK])
        session(store, "搬家", [*WORK, FLAT, *WORK])
        session(store, "pets", [*WORK, *PETS, *WORK])
        session(store, "warehouse", [*WORK, ETL, *WORK])
    return tmp_path


@pytest.mark.parametrize("question, wanted", [
    ("What kind of car does Evan drive?", [CAR]),
    ("小李的房子在哪个城市？", [FLAT]),
    ("What are the names of my cats?", PETS),  # an answer in two turns: both come
    # test_recall_sessions.py's: by words it needs "last week"; by meaning it does not.
    ("Which host runs the nightly warehouse ETL, kestrel or something else?", [ETL]),
])
async def test_a_plain_question_in_a_new_session_finds_the_session_that_answers_it(
        fake_server, stored, question, wanted):
    engine = make_engine(fake_server, stored)
    engine.front.meaning.index(None)  # as the worker leaves a store it has had time on
    assert engine.usage(pending=question).recalled > 0  # the gauge shows it before sending
    events = await send(engine, question)
    block = sent_block(fake_server)
    assert [text for text in wanted if text not in block] == []
    said = [e for e in events if isinstance(e, ev.Recalled)]
    assert len(said) == 1 and said[0].sessions
    await engine.provider.aclose()


@pytest.mark.parametrize("question", [
    "What is the capital of Portugal?",  # nothing stored is about it
    "葡萄牙的首都是哪里？",
    "Can you double check this function for me?",  # about what is in front of the user
    "这个模块怎么拆比较干净？",
    "Evan said he finally got a new car.",  # not a question: it brings its own text
])
async def test_a_question_about_nothing_stored_or_about_this_session_finds_nothing(
        fake_server, stored, question):
    await recalls_nothing(fake_server, stored, question)


async def test_off_when_the_user_keeps_sessions_apart(fake_server, stored):
    engine = make_engine(fake_server, stored, recall_other_sessions=False)
    await send(engine, "What kind of car does Evan drive?")
    assert sent_block(fake_server) == ""
    await engine.provider.aclose()


async def test_by_words_only_a_plain_question_stays_in_its_session(fake_server, stored):
    engine = make_engine(fake_server, stored, recall_by_meaning=False)
    await send(engine, "What kind of car does Evan drive?")
    assert sent_block(fake_server) == ""
    await engine.provider.aclose()


async def test_a_story_told_over_turns_comes_back_with_the_turn_beside_it(
        fake_server, tmp_path, monkeypatch):
    # In a store of thousands of messages only the nearest few are read by meaning: here the
    # one nearest. The answer's other half is not among them; beside the turn that is, it is
    # read and comes back too. The small talk on the other side does not: beside the answer
    # is not enough without a score of its own.
    monkeypatch.setattr(sessions_module, "NEAREST", 1)
    story = ["I finally picked a martial art to learn this spring, after months of looking.",
             "It's taekwondo, twice a week at the dojo near the office; my instructor is Mr. Han."]
    small_talk = "Anyway, the weather was lovely on Sunday and we had a picnic."
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", [*WORK, small_talk, *story, *WORK])
    engine = make_engine(fake_server, tmp_path)
    engine.front.meaning.index(None)
    await send(engine, "Which martial art did I take up, and who teaches me?")
    block = sent_block(fake_server)
    assert all(text in block for text in story)
    assert small_talk not in block
    await engine.provider.aclose()
