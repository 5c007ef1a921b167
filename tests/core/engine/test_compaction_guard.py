"""Automatic compaction never loops: once a turn unless the server refuses, held for the turn
after a compaction that freed too little, paused after three failed summaries in a row. Driven
against the fake server with summarisers built to provoke each loop."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.compaction_guard import MAX_FAILURES
from jarvis_tui.texts.notices import describe
from tests.engine_helpers import is_summary_request, make_engine, send, summary_material

TIGHT = dict(context_window=2048, response_reserve=256, system_reserve=128,
             keep_recent_turns=1, summary_max_tokens=200)


def replies(fake, summary):  # type: ignore[no-untyped-def]
    """Chat replies long enough to pass the threshold within a few turns; `summary(body)` for
    the summary requests."""

    def reply(body: dict) -> str:
        if is_summary_request(body):
            return summary(body)
        return "Here is a long answer about the window. " * 12

    fake.reply_fn = reply


def summary_requests(fake) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for r in fake.chat_requests if is_summary_request(r.body))


def per_turn(turns: list[list[ev.Event]], kind: type) -> list[int]:
    return [sum(isinstance(e, kind) for e in events) for events in turns]


async def test_a_summariser_that_always_fails_pauses_automatic_compaction(fake_server,
                                                                         tmp_path):
    replies(fake_server, lambda body: "   ")  # an empty summary is a failed one
    engine = make_engine(fake_server, tmp_path, **TIGHT)
    turns = [await send(engine, f"question {i}: " + "tell me more " * 20) for i in range(12)]
    assert all(isinstance(events[-1], ev.Finished) for events in turns)  # every turn answered
    failed = [e for events in turns for e in events if isinstance(e, ev.CompactionFailed)]
    held = [e for events in turns for e in events if isinstance(e, ev.CompactionHeld)]
    assert len(failed) == MAX_FAILURES
    assert held == [ev.CompactionHeld("paused", failures=MAX_FAILURES)]
    assert "/compact" in describe(held[0], "en") and "自动压缩已暂停" in describe(held[0], "zh")
    asked = summary_requests(fake_server)
    await send(engine, "one more question " * 20)
    assert summary_requests(fake_server) == asked  # paused: no summary asked
    # /compact still runs, and a summary that works starts the automatic cycle again.
    replies(fake_server, lambda body: "Summary: " + " ".join(summary_material(body).split()[:30]))
    manual = [e async for e in engine.compact(reason="manual")]
    assert isinstance(manual[-1], ev.CompactionFinished)
    assert not engine.guard.paused


async def test_a_summary_longer_than_what_it_replaced_holds_compaction_for_the_turn(
        fake_server, tmp_path):
    # The summariser writes as long as it is allowed, whatever it is given; what it is given
    # is two short turns, since the newest message alone passes the threshold and stays.
    replies(fake_server, lambda body: "padding words for the summary " * 200)
    engine = make_engine(fake_server, tmp_path, **TIGHT)
    for i in range(2):
        await send(engine, f"short question {i}")
    big = "a very long pasted log line with numbers 12345 " * 130
    turns = [await send(engine, big + f" part {i}") for i in range(3)]
    assert all(isinstance(events[-1], ev.Finished) for events in turns)
    assert max(per_turn(turns, ev.CompactionStarted)) <= 1  # never twice in one turn
    held = [e for e in turns[0] if isinstance(e, ev.CompactionHeld)]
    assert len(held) == 1 and held[0].why == "stalled"
    assert held[0].freed < 2048 * 0.05
    assert "freed only" in describe(held[0], "en") and "作用太小" in describe(held[0], "zh")
    started = [i for i, e in enumerate(turns[0]) if isinstance(e, ev.CompactionStarted)]
    assert len(started) == 1  # held: the turn went on with the plain window


async def test_a_newest_turn_larger_than_the_threshold_never_loops(fake_server, tmp_path):
    replies(fake_server, lambda body: "Summary: " + " ".join(summary_material(body).split()[:20]))
    engine = make_engine(fake_server, tmp_path, **TIGHT)
    for i in range(3):
        await send(engine, f"warm-up question {i}")
    big = "a very long pasted log line with numbers 12345 " * 130  # over the threshold alone
    turns = [await send(engine, big + f" part {i}") for i in range(4)]
    assert all(isinstance(events[-1], ev.Finished) for events in turns)
    assert max(per_turn(turns, ev.CompactionStarted)) <= 1
    assert sum(m.role == "user" for m in engine.messages) == 7  # every message kept


async def test_settings_changed_resume_a_paused_compaction(fake_server, tmp_path):
    from dataclasses import replace

    replies(fake_server, lambda body: "")
    engine = make_engine(fake_server, tmp_path, **TIGHT)
    for i in range(12):
        await send(engine, f"question {i}: " + "tell me more " * 20)
        if engine.guard.paused:
            break
    assert engine.guard.paused
    engine.apply_settings(replace(engine.settings, compact_threshold=0.6))
    assert not engine.guard.paused


async def test_one_automatic_compaction_a_turn(fake_server, tmp_path):
    replies(fake_server, lambda body: "Summary: " + " ".join(summary_material(body).split()[:20]))
    engine = make_engine(fake_server, tmp_path, **TIGHT)
    for i in range(20):
        events = await send(engine, f"question {i}: " + "tell me more " * 20)
        if any(isinstance(e, ev.CompactionStarted) for e in events):
            break
    else:
        raise AssertionError("no turn compacted")
    # The app's background compaction after the reply, in the same turn: not a second one.
    assert [e async for e in engine.compact(reason="threshold")] == []
    assert engine.guard.allows("overflow")  # a refusal from the server is still compacted for
    manual = [e async for e in engine.compact(reason="manual")]
    assert isinstance(manual[-1], ev.CompactionFinished | ev.CompactionFailed)  # the user's own
