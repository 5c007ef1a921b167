"""The memory's duplicate check by meaning (issue 40, item 4) where the user meets it, with the
real bundled model and a real SQLite file: /remember (ChatSession.memory.remember) of what an entry
says in other words or the other language is that entry, reworded; a compaction does not
suggest what the memory holds in other words, nor the same thing twice; with recall_by_meaning
off, only the same text is a duplicate, as before. The threshold and the pairs it was measured
on: tests/core/recall/test_memory_alike.py."""

from __future__ import annotations

import pytest

from tests.core.test_session import open_session
from tests.engine_helpers import kinds, make_engine, send, summarising_replies


@pytest.mark.parametrize("by_meaning", [True, False])
def test_remember_in_other_words_or_the_other_language_is_the_same_entry(
        fake_server, tmp_path, by_meaning):
    chat = open_session(fake_server, tmp_path, recall_by_meaning=by_meaning)
    dark = chat.memory.remember("The user prefers dark mode")
    billing = chat.memory.remember("Anna owns the billing service.")
    # The same text: always.
    assert chat.memory.remember("the user prefers  dark mode").id == dark.id
    again = chat.memory.remember("User likes the dark theme")
    translated = chat.memory.remember("Anna 负责计费服务。")
    other = chat.memory.remember("Bob owns the billing service.")  # another fact, however near
    texts = sorted(e.text for e in chat.memory.entries())
    assert other.id not in (dark.id, billing.id)
    if by_meaning:
        assert (again.id, translated.id) == (dark.id, billing.id)
        assert texts == ["Anna 负责计费服务。", "Bob owns the billing service.",
                         "User likes the dark theme"]  # worded as last said
    else:
        assert len({dark.id, billing.id, again.id, translated.id, other.id}) == 5
        assert len(texts) == 5


@pytest.mark.parametrize("by_meaning", [True, False])
async def test_a_compaction_suggests_nothing_the_memory_holds_in_other_words(
        fake_server, tmp_path, by_meaning):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1,
                         recall_by_meaning=by_meaning)
    store = engine.store
    store.add_memory("I prefer dark mode.", kind="preference")
    store.add_memory("I prefer tabs over spaces.", kind="preference")
    dismissed = store.add_memory("张伟负责支付服务。", kind="person")
    store.update_memory(dismissed.id, state="dismissed")
    store.add_memory("Always answer in Chinese.", kind="instruction", state="suggested")
    said = ["I like the dark theme.",  # the memory's, in other words
            "Zhang Wei owns the payment service.",  # a dismissed one, in English
            "以后都用中文回答我。",  # a suggestion waiting, in Chinese
            "I prefer spaces over tabs.",  # the user changed their mind: offered
            "我们决定用 Redis 做缓存。",  # new
            "We decided to use Redis for caching.",  # new, but said just before in Chinese
            "ok"]
    for text in said:
        await send(engine, text)
    events = [e async for e in engine.compact(reason="manual")]
    assert "MemorySuggested" in kinds(events)
    suggested = sorted(e.text for e in store.memories(("suggested",)))
    if by_meaning:
        assert suggested == ["Always answer in Chinese.", "I prefer spaces over tabs.",
                             "我们决定用 Redis 做缓存。"]
    else:
        assert suggested == sorted(["Always answer in Chinese.", *said[:-1]])
    await engine.provider.aclose()
