"""The request as a provider's prompt cache sees it: request N+1 begins with request N's messages,
byte for byte, between compactions; the front changes only at a compaction, a pin or a summary
edit; compactions go down to the low-water mark; the summary request reuses the chat prefix."""

from __future__ import annotations

import json

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import PREFIX_INSTRUCTION, SUMMARY_SYSTEM_PROMPT
from jarvis_tui.core.recall.turns import RECALL_HEADER
from jarvis_tui.texts.notices import describe
from tests.engine_helpers import (
    final,
    is_summary_request,
    make_engine,
    send,
    summarising_replies,
)

PROSE = [
    "We plan release {i}; the build must pass on Linux and macOS before we tag it.",
    "第{i}轮：我们讨论一下上下文窗口的管理方式，以及为什么不能只发送最后二十条消息。",
    "Here is the config for step {i}:\n```json\n{{\"port\": 80{i:02d}, \"retries\": 3}}\n```",
]

MAX_TURNS = 30  # the default 4096-token window compacts within a few turns of these


def chat_bodies(fake) -> list[dict]:
    return [r.body for r in fake.chat_requests if r.status == 200
            and not is_summary_request(r.body)]


def starts_with(longer: list[dict], shorter: list[dict]) -> bool:
    """Same bytes, as the provider's cache compares them."""
    dump = json.dumps
    return len(longer) >= len(shorter) and all(
        dump(a, ensure_ascii=False) == dump(b, ensure_ascii=False)
        for a, b in zip(longer, shorter, strict=False))


def requests_in_order(fake) -> list[tuple[str, dict]]:
    return [("summary" if is_summary_request(r.body) else "chat", r.body)
            for r in fake.chat_requests if r.status == 200]


async def test_each_request_starts_with_the_one_before_it_between_compactions(
        fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=16384)
    usages: list[ev.Usage] = []
    for i in range(12):
        events = await send(engine, PROSE[i % 3].format(i=i))
        assert isinstance(final(events), ev.Finished)
        assert not any(isinstance(e, ev.CompactionStarted) for e in events)
        usages += [e for e in events if isinstance(e, ev.Usage)]
    # The server's cache served each request all of the one before it.
    assert len(usages) == 12 and usages[0].cached_tokens == 0
    for before, after in zip(usages, usages[1:], strict=False):
        assert after.cached_tokens is not None and after.cached_tokens >= before.prompt_tokens - 8
    bodies = chat_bodies(fake_server)
    assert len(bodies) == 12
    for before, after in zip(bodies, bodies[1:], strict=False):
        # The whole previous request, then its reply, then the new message.
        assert starts_with(after["messages"], before["messages"])
        assert len(after["messages"]) == len(before["messages"]) + 2


async def test_the_prefix_breaks_only_at_a_compaction(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    engine = make_engine(fake_server, tmp_path)  # 4,096 tokens
    compactions = 0
    for i in range(30):
        events = await send(engine, PROSE[i % 3].format(i=i) + " more detail" * 20)
        assert isinstance(final(events), ev.Finished)
        compactions += sum(isinstance(e, ev.CompactionFinished) for e in events)
    assert compactions >= 2
    breaks = compacted = 0
    previous_chat: dict | None = None
    summary_since = False
    for kind, body in requests_in_order(fake_server):
        if kind == "summary":
            summary_since = True
            continue
        if previous_chat is not None:
            held = starts_with(body["messages"], previous_chat["messages"])
            if summary_since:
                compacted += 1
                # The new front: the system message now carries the new summary.
                assert not held
            else:
                breaks += not held
        previous_chat, summary_since = body, False
    assert breaks == 0 and compacted == compactions


async def compactions_over(fake, engine, turns: int) -> list[ev.CompactionFinished]:
    out: list[ev.CompactionFinished] = []
    for i in range(turns):
        # Turns the size of a pasted snippet: three of them no longer sit under the mark.
        events = await send(engine, PROSE[i % 2].format(i=i) + " and some more context" * 80)
        assert isinstance(final(events), ev.Finished)
        out += [e for e in events if isinstance(e, ev.CompactionFinished)]
    return out


async def test_compaction_goes_down_to_the_low_water_mark(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=40)
    engine = make_engine(fake_server, tmp_path, compact_low_water=0.4, recall_budget=0)
    low = await compactions_over(fake_server, engine, 30)
    assert low
    for event in low:
        # The summary counted at its cap: the request after it is at most the mark.
        assert event.tokens_after <= engine.budget.tokens * 0.4 + engine.summary_max_tokens
    # "Everything but the last 3 turns" (a mark at the threshold) compacts far more often.
    naive = make_engine(fake_server, tmp_path / "naive", compact_low_water=0.69, recall_budget=0)
    high = await compactions_over(fake_server, naive, 30)
    assert len(high) > len(low) and len(low) <= 30 // 4


async def test_the_newest_turn_stays_verbatim_however_large(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, recall_budget=0)
    for i in range(3):
        await send(engine, PROSE[i % 3].format(i=i))
    big = "Please review:\n" + "\n".join(f"line {n}: value = {n * 3}" for n in range(240))
    events = await send(engine, big)
    assert isinstance(final(events), ev.Finished)
    assert any(isinstance(e, ev.CompactionFinished) for e in events)
    last = chat_bodies(fake_server)[-1]["messages"]
    assert last[-1] == {"role": "user", "content": big}


async def test_the_summary_request_is_the_chat_prefix_plus_one_instruction(
        fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    engine = make_engine(fake_server, tmp_path)
    finished: list[ev.CompactionFinished] = []
    for _ in range(MAX_TURNS):
        events = await send(engine, PROSE[len(engine.messages) % 3].format(i=1) + " x" * 60)
        finished += [e for e in events if isinstance(e, ev.CompactionFinished)]
        if finished:
            break
    assert finished, f"no compaction in {MAX_TURNS} turns"
    order = requests_in_order(fake_server)
    at = next(i for i, (kind, _) in enumerate(order) if kind == "summary")
    summary, chat_before = order[at][1], order[at - 1][1]
    front = summary["messages"][:-1]
    assert starts_with(chat_before["messages"], front)  # all of it in the provider's cache
    assert front[-1]["role"] == "assistant"  # roles still alternate
    assert summary["messages"][-1] == {"role": "user", "content": PREFIX_INSTRUCTION}
    assert summary["max_tokens"] == engine.summary_max_tokens and not summary.get("stream")
    assert finished[0].cached_prefix and finished[0].calls == 1
    assert finished[0].cost_prompt_tokens > 0 and finished[0].cost_completion_tokens > 0
    assert f"the summary cost {finished[0].cost_prompt_tokens:,} prompt tokens (the " \
        "conversation's own, from the provider's cache)" in describe(finished[0])
    # What it cost is kept with the summary, for /cost and the summary panel after a restart.
    rows = [r for r in engine.store.usage_rows(engine.conversation.id) if r.kind == "summary"]
    assert [(r.summary_id, r.prompt_tokens, r.completion_tokens) for r in rows] == [
        (finished[0].summary_id, finished[0].cost_prompt_tokens,
         finished[0].cost_completion_tokens)]
    assert rows[0].freed_tokens == finished[0].tokens_before - finished[0].tokens_after > 0
    assert rows[0].cached_tokens and rows[0].cached_tokens > 0.8 * rows[0].prompt_tokens
    # The folded-in turns are the front's turns, and no later ones.
    covered = [m.content for m in engine.messages if m.covered]
    assert [m["content"] for m in front[1:] if m["role"] == "user"] == [
        m for m in covered if m.startswith(("We plan", "第", "Here is"))]


async def test_a_separate_summary_model_gets_the_small_prompt(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    engine = make_engine(fake_server, tmp_path, summary_model="small-summariser")
    finished: list[ev.CompactionFinished] = []
    for _ in range(MAX_TURNS):
        events = await send(engine, PROSE[0].format(i=len(engine.messages)) + " x" * 60)
        finished += [e for e in events if isinstance(e, ev.CompactionFinished)]
        if finished:
            break
    assert finished, f"no compaction in {MAX_TURNS} turns"
    summary = next(b for kind, b in requests_in_order(fake_server) if kind == "summary")
    assert summary["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT
    assert summary["model"] == "small-summariser" and not finished[0].cached_prefix


FACT = "For the record: the staging database lives at db-staging-7.internal port 6432."


async def fact_compacted_away(fake, tmp_path):  # type: ignore[no-untyped-def]
    """An engine whose summary covers FACT's turn: only recall can bring it back."""
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, keep_recent_turns=1)
    await send(engine, FACT)
    for i in range(3):
        await send(engine, PROSE[i % 2].format(i=i) + " filler words" * 60)
    [e async for e in engine.compact(reason="manual")]
    return engine


async def test_recalled_turns_sit_beside_the_new_message_and_stay_there(fake_server, tmp_path):
    engine = await fact_compacted_away(fake_server, tmp_path)
    assert any(m.content == FACT and m.covered for m in engine.messages)
    await send(engine, "Short check before we go on.")
    before = chat_bodies(fake_server)[-1]["messages"]
    events = await send(engine, "Which port did the staging database db-staging-7 use?")
    assert any(isinstance(e, ev.Recalled) for e in events)
    recalled = chat_bodies(fake_server)[-1]["messages"]
    assert RECALL_HEADER not in recalled[0]["content"]  # the system message is unchanged
    assert starts_with(recalled, before)
    assert RECALL_HEADER in recalled[-1]["content"] and FACT in recalled[-1]["content"]
    assert recalled[-1]["content"].endswith("Which port did the staging database db-staging-7 use?")
    # The next request sends that message as it was sent, recalled turns and all.
    await send(engine, "Thanks, that is all.")
    after = chat_bodies(fake_server)[-1]["messages"]
    assert starts_with(after, recalled)
    stored = [m.content for m in engine.store.messages(engine.conversation.id)]
    assert "Which port did the staging database db-staging-7 use?" in stored  # stored as typed


async def test_a_pin_changes_the_front_once(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    for i in range(4):
        await send(engine, PROSE[i % 2].format(i=i) + " filler words" * 40)
    [e async for e in engine.compact(reason="manual")]
    await send(engine, "One more question.")
    covered = next(m for m in engine.messages if m.covered)
    engine.set_pinned(covered)
    await send(engine, "And another one.")
    await send(engine, "And a last one.")
    bodies = chat_bodies(fake_server)
    assert not starts_with(bodies[-2]["messages"], bodies[-3]["messages"])  # pinned back in
    assert {"role": covered.role, "content": covered.content} in bodies[-2]["messages"]
    assert starts_with(bodies[-1]["messages"], bodies[-2]["messages"])  # and then it holds


async def test_a_turn_already_recalled_in_the_request_is_not_sent_twice(fake_server, tmp_path):
    engine = await fact_compacted_away(fake_server, tmp_path)
    first = await send(engine, "Which port did the staging database db-staging-7 use?")
    again = await send(engine, "And the staging database db-staging-7 host name, which port?")
    assert any(isinstance(e, ev.Recalled) for e in first)
    assert not any(isinstance(e, ev.Recalled) for e in again)
    last = chat_bodies(fake_server)[-1]["messages"]
    assert sum(FACT in m["content"] for m in last[1:]) == 1  # carried once, by the first question
