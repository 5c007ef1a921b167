"""Recall by meaning through the provider's embeddings endpoint (embedding_model set), against
the fake server over loopback: its vectors are stored under their own name and used; a server
without the endpoint turns recall by meaning off with one line, and recall goes on by words."""

from __future__ import annotations

import numpy as np
import pytest

from jarvis_tui.core.embed import meaning as meaning_module
from jarvis_tui.core.embed.model import BUNDLED_NAME, Unavailable
from jarvis_tui.core.embed.remote import RemoteEmbedder
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall_meaning_sessions import CAR, WORK
from tests.core.recall.test_recall_sessions import sent_block, session
from tests.engine_helpers import make_engine, send


def test_vectors_come_back_normalised_in_order(fake_server):
    vecs = RemoteEmbedder(fake_server.base_url, "embed-small").embed(
        ["the cat sat", "a dog ran", "the cat sat"])
    assert vecs.shape == (3, 64)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert vecs[0] @ vecs[2] == pytest.approx(1.0) and vecs[0] @ vecs[1] < 0.9
    [request] = [r for r in fake_server.requests if r.path.endswith("/embeddings")]
    assert request.body == {"model": "embed-small", "input": ["the cat sat", "a dog ran",
                                                              "the cat sat"]}


def test_a_server_without_the_endpoint_is_named_with_what_to_do(fake_server):
    fake_server.embeddings = False
    with pytest.raises(Unavailable) as caught:
        RemoteEmbedder(fake_server.base_url, "embed-small").embed(["hello"])
    said = str(caught.value)
    assert "/embeddings" in said and "HTTP 404" in said and "embedding_model" in said


def test_an_unreachable_endpoint_is_one_line_not_a_traceback():
    with pytest.raises(Unavailable, match="could not be reached"):
        RemoteEmbedder("http://127.0.0.1:9/v1", "embed-small").embed(["hello"])


async def test_the_engine_uses_the_providers_vectors(fake_server, tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", [*WORK, CAR, *WORK])
    engine = make_engine(fake_server, tmp_path, embedding_model="embed-small")
    # The fake's vectors are its words: a question sharing "Evan", "car"... finds the turn.
    await send(engine, "Evan got a new Prius last week, what car did he get?")
    assert CAR in sent_block(fake_server)
    assert engine.store.vector_count("remote:embed-small") > 0
    assert engine.store.vector_count(BUNDLED_NAME) == 0  # the bundled model never ran
    await engine.provider.aclose()


async def test_without_the_endpoint_recall_says_so_once_and_goes_on(fake_server, tmp_path):
    fake_server.embeddings = False
    engine = make_engine(fake_server, tmp_path, embedding_model="embed-small")
    await send(engine, "hello")
    await send(engine, "What kind of car does Evan drive?")
    off = [n for n in engine.store.take_notices() if n.startswith("recall by meaning is off")]
    assert len(off) == 1 and "HTTP 404" in off[0]
    events = await send(engine, "and again?")
    assert events and not engine.store.take_notices()
    await engine.provider.aclose()


async def test_a_busy_endpoint_pauses_recall_by_meaning_then_it_comes_back(
        fake_server, tmp_path, monkeypatch):
    # A 503 is the server's for now: recall goes on by words, the user is told it is paused,
    # and the next try after the pause embeds what waited; only a few in a row turn it off.
    monkeypatch.setattr(meaning_module, "PAUSE", 0.0)
    with Store(tmp_path / "sessions.db") as store:
        session(store, "catching up", [*WORK, CAR, *WORK])
    engine = make_engine(fake_server, tmp_path, embedding_model="embed-small")
    fake_server.embeddings_down = 1
    await send(engine, "hello there")
    paused = [n for n in engine.store.take_notices() if "recall by meaning" in n]
    assert len(paused) == 1 and paused[0].startswith("recall by meaning is paused")
    assert "HTTP 503" in paused[0] and "overloaded" in paused[0]
    await send(engine, "Evan got a new Prius last week, what car did he get?")
    assert CAR in sent_block(fake_server)
    assert engine.front.meaning.ready and not engine.store.take_notices()
    assert engine.store.vector_count("remote:embed-small") > 0

    fake_server.embeddings_down = meaning_module.INTERRUPTIONS
    for i in range(meaning_module.INTERRUPTIONS):
        await send(engine, f"and one more thing, number {i}?")
    off = [n for n in engine.store.take_notices() if n.startswith("recall by meaning is off")]
    assert len(off) == 1 and f"{meaning_module.INTERRUPTIONS} times in a row" in off[0]
    assert not engine.front.meaning.ready
    await engine.provider.aclose()
