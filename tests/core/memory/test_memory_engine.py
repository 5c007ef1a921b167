"""Memory in the requests a real engine sends the fake server: at the front of the one system
message, read again when another process changes it, byte for byte the same while it does not,
within its own budget, counted by the gauge; and the suggestions a compaction stores."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.memory.section import HEADER
from jarvis_tui.core.store.store import Store
from tests.engine_helpers import (
    BASE,
    final,
    is_prefix_summary,
    is_summary_request,
    kinds,
    make_engine,
    send,
    summarising_replies,
)

PROMPT = BASE.system_prompt


def chat_bodies(fake) -> list[dict]:  # type: ignore[no-untyped-def]
    return [r.body for r in fake.chat_requests
            if r.status == 200 and not is_summary_request(r.body)]


def system_of(body: dict) -> str:
    messages = body["messages"]
    assert [m["role"] for m in messages].count("system") == 1  # strict templates want one
    assert messages[0]["role"] == "system"
    return messages[0]["content"]


async def test_the_request_carries_the_memory_after_the_configured_prompt(fake_server,
                                                                          tmp_path):
    store = Store(tmp_path / "sessions.db")
    store.add_memory("Our staging cluster is in Frankfurt.")
    pinned = store.add_memory("以后都用中文回答我。", kind="instruction")
    store.update_memory(pinned.id, pinned=True)
    store.add_memory("We decided to use Postgres.", state="suggested")  # not the user's yet
    engine = make_engine(fake_server, tmp_path, store=store)
    assert isinstance(final(await send(engine, "hello")), ev.Finished)
    assert system_of(chat_bodies(fake_server)[-1]) == (
        f"{PROMPT}\n\n{HEADER}\n- 以后都用中文回答我。\n- Our staging cluster is in Frankfurt.")


async def test_memory_another_process_changes_is_in_the_next_rounds_request(fake_server,
                                                                           tmp_path):
    path = tmp_path / "sessions.db"
    engine = make_engine(fake_server, tmp_path, store=Store(path))
    await send(engine, "first")
    assert system_of(chat_bodies(fake_server)[-1]) == PROMPT  # no memory, no section
    with Store(path) as other:  # another jarvis-tui on the same file
        entry = other.add_memory("Alice is our SRE.", kind="person")
    await send(engine, "second")
    assert system_of(chat_bodies(fake_server)[-1]) == f"{PROMPT}\n\n{HEADER}\n- Alice is our SRE."
    with Store(path) as other:
        other.update_memory(entry.id, text="Alice is our SRE; Bob is on call.")
    await send(engine, "third")
    assert system_of(chat_bodies(fake_server)[-1]).endswith("- Alice is our SRE; Bob is on call.")
    with Store(path) as other:
        other.delete_memory(entry.id)
    await send(engine, "fourth")
    assert system_of(chat_bodies(fake_server)[-1]) == PROMPT


async def test_the_front_is_byte_identical_while_memory_does_not_change(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    for n in range(5):
        store.add_memory(f"Fact number {n}: the build runs on runner {n}.")
    engine = make_engine(fake_server, tmp_path, store=store)
    usages = []
    for n in range(4):
        events = await send(engine, f"question {n}")
        usages += [e for e in events if isinstance(e, ev.Usage)]
    bodies = chat_bodies(fake_server)
    assert len({system_of(b) for b in bodies}) == 1 and HEADER in system_of(bodies[0])
    for before, after in zip(usages, usages[1:], strict=False):  # the server's cache held
        assert after.cached_tokens is not None and after.cached_tokens >= before.prompt_tokens - 8
    assert engine.front.refresh_memory() is False  # nothing changed: nothing is read again
    store.add_memory("One more.")
    assert engine.front.refresh_memory() is True


async def test_memory_budget_zero_sends_no_memory(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    a = store.add_memory("Alice is our SRE.")
    b = store.add_memory("I prefer short answers.")
    engine = make_engine(fake_server, tmp_path, store=store, memory_budget=0)
    await send(engine, "hello")
    assert system_of(chat_bodies(fake_server)[-1]) == PROMPT
    sent = engine.front.memory_sent()
    assert (sent.text, sent.sent, sent.left_out, sent.tokens) == ("", (), (b.id, a.id), 0)
    assert engine.usage().memory == 0


async def test_the_section_keeps_within_a_tenth_of_the_budget(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    ids = [store.add_memory(f"Entry {n}: the service on port 80{n:02d} belongs to team {n}.").id
           for n in range(60)]
    engine = make_engine(fake_server, tmp_path, store=store)  # 4,096: a budget of 3,328
    assert engine.front.memory_budget() == 332  # the setting (512) is more than a tenth of it
    sent = engine.front.memory_sent()
    assert 0 < sent.tokens <= 332 and sent.left_out
    assert sent.sent + sent.left_out == tuple(reversed(ids))  # newest first, in order
    await send(engine, "hello")
    system = system_of(chat_bodies(fake_server)[-1])
    assert system == f"{PROMPT}\n\n{sent.text}"
    assert "Entry 59:" in system and "Entry 0:" not in system


async def test_the_gauge_counts_the_memory_as_its_own_category(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    store.add_memory("Answer in Chinese, keep code comments in English.")
    store.add_memory("Our staging cluster is in Frankfurt.")
    engine = make_engine(fake_server, tmp_path, store=store)
    off = make_engine(fake_server, tmp_path / "off", memory_budget=0)
    with_memory, without = engine.usage("draft"), off.usage("draft")
    tokens = engine.front.memory_sent().tokens
    assert with_memory.memory == tokens == engine.counter.text(engine.front.memory_sent().text) > 0
    assert with_memory.used - without.used == tokens  # in `used`, not in the system reserve
    assert with_memory.system == without.system
    events = await send(engine, "hello")
    fitted = next(e for e in events if isinstance(e, ev.WindowFitted))
    assert fitted.usage.memory == tokens


async def test_a_message_cut_to_fit_leaves_room_for_the_memory(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    for n in range(40):
        store.add_memory(f"Entry {n}: the service on port 80{n:02d} belongs to team {n}.")
    engine = make_engine(fake_server, tmp_path, store=store)
    memory = engine.front.memory_sent().tokens
    assert memory > 200
    events = await send(engine, "word " * 20_000)  # past the whole budget: cut in the middle
    user = chat_bodies(fake_server)[-1]["messages"][-1]
    assert "tokens omitted" in user["content"]
    assert engine.counter.text(user["content"]) + memory <= engine.budget.tokens
    # Fitted right the first time: the server (a 4,096-token limit) did not refuse it.
    assert len(fake_server.chat_requests) == 1 and "Trimmed" not in kinds(events)


async def test_a_compaction_suggests_and_never_remembers_and_a_dismissed_one_stays_out(
        fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    said = ["I prefer short answers with the code first.", "How do I read a file in Go?",
            "我们决定用 Redis 做缓存。", "Thanks, that worked."]
    for text in said:
        await send(engine, text)
    events = [e async for e in engine.compact(reason="manual")]
    assert kinds(events) == ["CompactionStarted", "MemorySuggested", "CompactionFinished"]
    assert events[1].count == 2
    store = engine.store
    suggested = store.memories(("suggested",))
    assert sorted((e.kind, e.text) for e in suggested) == [
        ("decision", "我们决定用 Redis 做缓存。"),
        ("preference", "I prefer short answers with the code first.")]
    by_text = {m.content: m.id for m in engine.messages}
    assert all(e.message_id == by_text[e.text] and e.conversation_id == engine.conversation.id
               for e in suggested)
    assert store.memories() == []  # nothing entered the memory without the user
    # The user says no to one; said again later and folded in again, it is not offered again.
    preference = next(e for e in suggested if e.kind == "preference")
    store.update_memory(preference.id, state="dismissed")
    for text in ["i prefer short answers with the code first", "Alice is our SRE.", "ok",
                 "fine"]:
        await send(engine, text)
    again = [e async for e in engine.compact(reason="manual")]
    assert [e.count for e in again if isinstance(e, ev.MemorySuggested)] == [1]
    assert sorted(e.text for e in store.memories(("suggested",))) == [
        "Alice is our SRE.", "我们决定用 Redis 做缓存。"]
    assert store.memories() == []


async def test_no_suggestions_when_the_setting_is_off(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, memory_suggestions=False)
    for text in ["I prefer tabs over spaces.", "We decided to use Postgres.", "ok", "fine"]:
        await send(engine, text)
    events = [e async for e in engine.compact(reason="manual")]
    assert kinds(events) == ["CompactionStarted", "CompactionFinished"]
    assert engine.store.memories(("active", "suggested", "dismissed")) == []


async def test_a_suggestion_that_holds_a_key_is_not_stored(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    key = "sk-proj-" + "Tq3x9VbN2mLk7RwZ4yHcP1sDfG8jKa0eUo6iBnMv"
    for text in [f"From now on, use the key {key} for the staging calls.", "ok", "fine"]:
        await send(engine, text)
    events = [e async for e in engine.compact(reason="manual")]
    assert "MemorySuggested" not in kinds(events)
    assert engine.store.memories(("suggested",)) == []


async def test_the_summary_request_reuses_the_front_with_the_memory_in_it(fake_server,
                                                                          tmp_path):
    summarising_replies(fake_server)
    store = Store(tmp_path / "sessions.db")
    store.add_memory("Our staging cluster is in Frankfurt.")
    engine = make_engine(fake_server, tmp_path, store=store, keep_recent_turns=1)
    for text in ["one", "two", "three"]:
        await send(engine, text)
    front = system_of(chat_bodies(fake_server)[-1])
    [e async for e in engine.compact(reason="manual")]
    prefix = [r.body for r in fake_server.chat_requests if is_prefix_summary(r.body)]
    assert prefix and prefix[-1]["messages"][0]["content"] == front  # the cached front


def crowded_store(tmp_path) -> Store:  # type: ignore[no-untyped-def]
    """A memory that fills its whole room (a tenth of the 4,096 window's budget)."""
    store = Store(tmp_path / "sessions.db")
    for n in range(60):
        store.add_memory(f"Entry {n}: the service on port 80{n:02d} belongs to team {n}.")
    return store


async def test_a_compaction_goes_down_far_enough_to_leave_the_memory_its_room(fake_server,
                                                                              tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, store=crowded_store(tmp_path),
                         keep_recent_turns=2)
    assert engine.front.memory_sent().tokens > 300
    for n in range(4):
        await send(engine, f"Turn {n}: " + "the migration plan needs more detail " * 20)
    [e async for e in engine.compact(reason="manual")]
    # The low-water mark less the memory leaves room for one of the two turns asked to stay.
    assert len(engine.history()) == 2


async def test_the_editors_estimate_after_a_compaction_counts_the_memory(fake_server,
                                                                         tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, store=crowded_store(tmp_path),
                         keep_recent_turns=1)
    for text in ["one", "two", "three"]:
        await send(engine, text)
    events = [e async for e in engine.compact(reason="manual", preview=True)]
    proposal = events[-1].proposal
    guess = engine.tokens_after(proposal, proposal.text)
    done = [e async for e in engine.commit_compaction(proposal, proposal.text)][-1]
    assert isinstance(done, ev.CompactionFinished)
    assert guess == done.tokens_after == engine.usage().used
    assert engine.usage().memory > 300
