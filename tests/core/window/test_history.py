"""The engine's history bookkeeping: kept up to date in place, it must always say what a
rebuild from scratch would say, through appends, pins, withdrawals, compactions and a new
calibration factor."""

from __future__ import annotations

import random

from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.history import History, in_request
from jarvis_tui.core.window.system_message import SystemMessage
from jarvis_tui.core.window.tokens import TokenCounter
from tests.core.window.test_window import random_history
from tests.engine_helpers import make_engine, send, summarising_replies


def reference(messages: list[Message], counter: TokenCounter) -> tuple[list, list, int]:
    active = [m for m in messages if in_request(m)]
    pinned = [i for i, m in enumerate(active) if m.pinned]
    return active, pinned, sum(counter.message(m) for m in active)


def test_random_changes_match_a_rebuild():
    rng = random.Random(11)
    counter = TokenCounter("est", exact=False)
    kept = History([])
    next_id = 1
    for step in range(2_000):
        roll = rng.random()
        if roll < 0.6 or not kept.all:
            msg = Message(rng.choice(["user", "assistant"]), "词 word " * rng.randint(1, 40),
                          id=next_id, pinned=rng.random() < 0.05)
            next_id += 1
            kept.append(msg)
        elif roll < 0.7:  # the newest message grows, as a streaming reply does
            kept.all[-1].content += " more 更多"
        elif roll < 0.8:
            target = rng.choice(kept.all)
            target.pinned = not target.pinned
            kept.changed()
        elif roll < 0.85:
            rng.choice(kept.all).status = FAILED
            kept.changed()
        elif roll < 0.95:  # a compaction covers the oldest uncovered few
            for msg in [m for m in kept.all if not m.covered][: rng.randint(1, 6)]:
                msg.summary_id = step
            kept.changed()
        else:
            counter.observe(1000, rng.randint(800, 1300))  # a new calibration factor
        active, pinned, tokens = reference(kept.all, counter)
        assert kept.active == active
        assert kept.pinned == pinned
        assert kept.tokens(counter) == tokens
        probe = rng.choice(kept.all)
        assert kept.all[kept.position(probe.id)] is probe


def test_window_with_kept_pinned_positions_equals_the_scan():
    rng = random.Random(5)
    counter = TokenCounter("est", exact=False)
    for _ in range(200):
        history = random_history(rng, rng.randint(0, 80))
        kept = History(list(history))
        budget = rng.randint(20, 3000)
        scanned = fit_window(history, budget=budget, counter=counter, system=SystemMessage("s"))
        given = fit_window(kept.active, budget=budget, counter=counter, system=SystemMessage("s"),
                           pinned=kept.pinned)
        assert given.wire == scanned.wire and given.sent == scanned.sent


async def test_a_long_session_keeps_history_and_gauge_in_step(make_fake_server, tmp_path):
    fake = make_fake_server(limit=1500)
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, context_window=1500, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    compactions = 0
    for i in range(30):
        events = await send(engine, f"第{i}轮 question {i}: " + "how does the window move? " * 8)
        compactions += sum(type(e).__name__ == "CompactionFinished" for e in events)
        if i == 10:
            engine.set_pinned(engine.messages[1])  # an early reply, covered by now
        active, pinned, tokens = reference(engine.messages, engine.counter)
        assert engine.history() == active
        assert [engine.history()[p] for p in engine._history.pinned] == \
            [active[p] for p in pinned]
        engine.anchor = None  # the gauge from our own counts, as after a compaction
        assert engine.usage().history == tokens
    assert compactions >= 3  # the bookkeeping went through several rebuilds
    assert engine.messages[1] in engine.history()  # pinned back, so sent
    # A reopened session builds the same from the store.
    again = make_engine(fake, tmp_path, conversation_id=engine.conversation.id,
                        store=engine.store)
    assert [m.id for m in again.history()] == [m.id for m in engine.history()]
    await engine.provider.aclose()
    await again.provider.aclose()
