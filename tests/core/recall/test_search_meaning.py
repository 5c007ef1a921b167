"""The searches rank as recall does (issue 40, item 4, "One ranker"): the model's
search_history, /recall (ChatSession.search, search_all) and search_covered / search_sessions
under them, with the real embedding model, a real SQLite store and the real engine against the
fake server. A question in other words finds its turn ("what car does Evan drive" the turn about
the new Prius, ahead of every other turn that names Evan; "我在学什么乐器" an English turn about
the cello, which shares no word with it); with recall_by_meaning off each search is what it
was, the index's words in its order. The filters stay: a turn taken out never comes back by
its vector, nor another session's secret."""

from __future__ import annotations

import pytest

from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.embed.model import bundled
from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.sessions import search_sessions
from jarvis_tui.core.recall.turns import search_covered, search_turns
from jarvis_tui.core.safety.redact import redactor
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.history import History
from tests.core.recall.test_recall import compact_times, lossy
from tests.core.recall.test_recall_sessions import WORK, session
from tests.core.test_session import answer, open_session
from tests.core.tools.test_history_search import ask_call, stored_results
from tests.engine_helpers import make_engine, send

CAR = "Evan: I finally got my new Prius last week, it replaced the old van."
EVAN = ["Evan: my sister Maria is visiting us in May.",
        "Evan: I started running again, 5k every morning.",
        "Evan: work has been hectic lately."]
CELLO = "I've been learning to play the cello for three months now."
TURNS = [*WORK, EVAN[0], EVAN[1], CAR, EVAN[2], CELLO, *WORK]
ASKED = "what car does Evan drive"  # the index finds every turn that names Evan
OTHER_WORDS = "我在学什么乐器"  # "which instrument am I learning": no word of it in the index
SMALL = dict(context_window=2048, response_reserve=256, system_reserve=128, keep_recent_turns=1,
             summary_max_tokens=120, details_share=0.0)
KEY = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def firsts(turns: list[list[Message]]) -> list[str]:
    return [turn[0].content for turn in turns]


@pytest.fixture
def stored(tmp_path):
    """One session of TURNS (the user's words and a short reply each)."""
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", TURNS)
    return tmp_path


@pytest.mark.parametrize("by_meaning", [True, False])
def test_search_turns_ranks_the_turn_in_other_words_first(stored, by_meaning):
    with Store(stored / "sessions.db") as store:
        meaning = Meaning(store, bundled()) if by_meaning else None
        messages = store.messages(1)
        asked = firsts(search_turns(store, 1, messages, ASKED, 3, meaning))
        other = firsts(search_turns(store, 1, messages, OTHER_WORDS, 3, meaning))
        unrelated = search_turns(store, 1, messages, "zebra quokka xylophone", 3, meaning)
        embedded = store.vector_count(bundled().name)
    assert unrelated == []
    # The words find what they found: the Chinese turns that share 什么 with the question.
    assert other.count(WORK[2]) == 2
    if by_meaning:
        assert asked[0] == CAR and other[0] == CELLO
        assert embedded == 2 * len(TURNS)  # what it ranked, it embedded first
    else:  # the index's three best by its own measure: the shorter turns that name Evan
        assert asked == [EVAN[2], EVAN[1], EVAN[0]] and CELLO not in other
        assert embedded == 0


@pytest.mark.parametrize("by_meaning", [True, False])
async def test_recall_in_the_app_finds_it(fake_server, tmp_path, by_meaning):
    """/recall and /recall --all: ChatSession.search and search_all, as the command calls
    them."""
    chat = open_session(fake_server, tmp_path, recall_by_meaning=by_meaning)
    for text in [EVAN[0], EVAN[1], CAR, EVAN[2], CELLO]:
        await answer(chat, text)
    found = firsts(chat.search(ASKED))
    assert all(text in found for text in EVAN)  # the words find what they found
    everywhere = [turn[0].content for turn, _ in chat.search_all(OTHER_WORDS)]
    if by_meaning:
        assert found[0] == CAR and firsts(chat.search(OTHER_WORDS))[0] == CELLO
        assert everywhere[0] == CELLO
    else:
        assert found[0] != CAR and CELLO not in firsts(chat.search(OTHER_WORDS))
        assert CELLO not in everywhere


async def folded(fake_server, tmp_path, **settings):  # type: ignore[no-untyped-def]
    """An engine whose summary covers the Evan turns and the flat, the details lost."""
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL, **settings)
    for text in [EVAN[0], EVAN[1], CAR, EVAN[2], CELLO]:
        await send(engine, text)
    await compact_times(engine, 2)
    assert all(m.covered for m in engine.messages if m.content in (CAR, CELLO, *EVAN))
    return engine


async def test_search_history_finds_the_turn_in_other_words(fake_server, tmp_path):
    engine = await folded(fake_server, tmp_path)
    await send(engine, ask_call(f'{{"query": "{ASKED}"}}', f'{{"query": "{OTHER_WORDS}"}}',
                                '{"query": "zebra quokka xylophone"}'))
    asked, other, unrelated = stored_results(engine)[-3:]
    assert CAR in asked
    assert CELLO in other and CAR not in other
    assert unrelated.startswith("Nothing in the earlier turns folded into the summary matches")
    await engine.provider.aclose()


async def test_search_history_by_words_alone_as_before(fake_server, tmp_path):
    engine = await folded(fake_server, tmp_path, recall_by_meaning=False)
    await send(engine, ask_call(f'{{"query": "{ASKED}"}}', f'{{"query": "{OTHER_WORDS}"}}'))
    asked, other = stored_results(engine)[-2:]
    assert CAR not in asked and all(text in asked for text in EVAN)  # three turns, by words
    assert CELLO not in other
    assert engine.store.vector_count(bundled().name) == 0  # the model was never asked
    await engine.provider.aclose()


@pytest.mark.parametrize("by_meaning", [True, False])
async def test_search_history_in_every_session(fake_server, stored, by_meaning):
    """all_sessions: another session's turn in other words, labelled, its secret hidden."""
    with Store(stored / "sessions.db") as store:
        session(store, "keys", [f"I've been learning the cello; the music school's portal key "
                                f"is {KEY}."])
    engine = await folded(fake_server, stored, recall_by_meaning=by_meaning)
    await send(engine, ask_call(f'{{"query": "{OTHER_WORDS}", "all_sessions": true}}'))
    result = stored_results(engine)[-1]
    assert KEY not in result
    if by_meaning:
        assert CELLO in result and "from another session, [catching up, " in result
    else:
        assert CELLO not in result
    await engine.provider.aclose()


def test_a_turn_taken_out_never_comes_back_by_its_vector(stored):
    """x keeps a message's vector (it may be put back): no search may find the turn by it."""
    with Store(stored / "sessions.db") as store:
        store.add_summary(1, "Chores and Evan's news.", store.messages(1), kind="auto")
        meaning = Meaning(store, bundled())
        meaning.index(None)
        car = next(m for m in store.messages(1) if m.content == CAR)
        car.excluded = True
        store.update_message(car)
        assert car.id in meaning.vectors([car.id])  # the vector is there
        messages = store.messages(1)
        shown = [firsts(search_turns(store, 1, messages, ASKED, 10, meaning)),
                 firsts([f.turn for f in search_sessions(store, ASKED, meaning=meaning)]),
                 firsts(search_covered(store, 1, History(messages), ASKED, 10, meaning))]
        assert all(EVAN[0] in found and CAR not in found for found in shown), shown


def test_search_sessions_hides_another_session_s_secret_found_by_meaning(stored):
    with Store(stored / "sessions.db") as store:
        session(store, "keys", [f"I've been learning the cello; the music school's portal key "
                                f"is {KEY}."])
        found = search_sessions(store, OTHER_WORDS, scrub=redactor(()),
                                meaning=Meaning(store, bundled()))
        shown = [m.content for f in found for m in f.turn]
        assert any("the music school's portal key is" in text for text in shown)
        assert all(KEY not in text for text in shown)
        by_words = search_sessions(store, OTHER_WORDS, scrub=redactor(()))
        assert not any("portal key" in m.content for f in by_words for m in f.turn)
