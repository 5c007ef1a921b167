"""The hybrid ranker's arithmetic (recall/hybrid.py), done as arrays over every message at once
(a 10,000-turn session in a few milliseconds), against the same rule spelled out per turn, on
the real bundled model's vectors in a real SQLite file."""

from __future__ import annotations

import numpy as np
import pytest

from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.embed.model import bundled
from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.hybrid import (
    LEXICAL_WEIGHT,
    NEIGHBOUR,
    OWN_FLOOR,
    ranked,
    turn_scores,
)
from jarvis_tui.core.store.store import Store

TEXTS = ["What kind of car does Evan drive?", "Evan: I finally got my new Prius last week.",
         "小李在成都租了一套两居室。", "离公司很近，走路十分钟。",
         "The weather in Paris was rainy all week.", "Yes, it rained every day.",
         "Not embedded yet: written after the index ran."]


def spelled_out(vecs: dict[int, np.ndarray], q: np.ndarray, turn: list[int],
                words: dict[int, float], without: set[int]) -> float:
    """The rule per turn: mean of the best message's (cosine + weight x share) and the
    whole turn's cosine, with the turn's share; words alone without a vector."""
    share = max((words.get(m, 0.0) for m in turn), default=0.0)
    have = [m for m in turn if m in vecs and m not in without]
    if not have:
        return LEXICAL_WEIGHT * share
    best = max(float(vecs[m] @ q) + LEXICAL_WEIGHT * words.get(m, 0.0) for m in have)
    summed = sum(vecs[m] for m in have)
    whole = float(summed @ q) / float(np.linalg.norm(summed))
    return (best + whole + LEXICAL_WEIGHT * share) / 2


@pytest.fixture
def meaning(tmp_path):  # type: ignore[no-untyped-def]
    with Store(tmp_path / "s.db") as store:
        conv = store.create_conversation(model="m")
        ids = [store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant", t)).id
               for i, t in enumerate(TEXTS[:-1])]
        found = Meaning(store, bundled())
        found.index(conv.id, limit=100)
        ids.append(store.add_message(conv.id, Message("user", TEXTS[-1])).id)
        yield found, ids, conv.id


def test_the_arrays_give_what_the_rule_per_turn_gives(meaning):
    found, ids, _ = meaning
    q = found.query("Which car is Evan driving now?")
    turns = [ids[0:2], ids[2:4], ids[4:6], ids[6:7], []]
    words = {ids[1]: 0.5, ids[6]: 1.0}
    without = {ids[4]}
    vecs = found.vectors(ids)
    got = turn_scores(found, q, turns, words, without=without)
    want = [spelled_out(vecs, q, t, words, without) if t else 0.0 for t in turns]
    assert np.allclose(got, want, atol=1e-5)
    assert got[0] > got[1] and got[0] > got[2]  # the car, in other words
    assert got[3] == pytest.approx(LEXICAL_WEIGHT)  # no vector: its words alone


def test_a_message_embedded_later_is_read_the_next_time(meaning):
    found, ids, conv_id = meaning
    q = found.query("Not embedded yet?")
    turns = [ids[0:2], ids[6:7]]
    before = turn_scores(found, q, turns, {}, key="same turns")
    assert before[1] == 0.0
    found.index(conv_id, limit=100)
    after = turn_scores(found, q, turns, {}, key="same turns")
    assert after[1] > 0.5 and after[0] == pytest.approx(before[0], abs=1e-6)


def test_ranked_keeps_the_best_with_neighbours_and_the_newer_of_a_tie():
    scores = [0.2, 0.9, 0.26, 0.5, 0.5, 0.0]
    got = ranked(scores, floor=0.3)
    total = [0.2 + NEIGHBOUR * 0.9, 0.9 + NEIGHBOUR * 0.23, 0.26 + NEIGHBOUR * 0.7,
             0.5 + NEIGHBOUR * 0.38, 0.5 + NEIGHBOUR * 0.25, 0.0 + NEIGHBOUR * 0.5]
    # Lifted over the floor by a neighbour, a turn still needs a score of its own (0: the
    # small talk beside the answer stays out; 2: part of the story comes back).
    want = sorted((i for i in range(6) if total[i] >= 0.3 and scores[i] >= OWN_FLOOR),
                  key=lambda i: (-total[i], -i))
    assert 2 in want and 0 not in want and 5 not in want
    assert [r.index for r in got] == want
    assert [r.score for r in got] == pytest.approx([total[i] for i in want])
    assert [r.index for r in ranked(scores, floor=0.3, limit=2)] == want[:2]
    assert [r.index for r in ranked([0.5, 0.5], floor=0.3, neighbours=False)] == [1, 0]
