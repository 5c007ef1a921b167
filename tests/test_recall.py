"""Recall against the fake server: facts stated early survive three compactions by a lossy
summariser, and come back into the request when a later question is about them."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.recall import RECALL_HEADER
from tests.engine_helpers import is_summary_request, make_engine, send

FACT_EN = "For the record: the launch budget is 4,200 euros, approved by Anna on Monday."
FACT_ZH = "记一下：服务器的密码提示是鹈鹕，上周五换的。"
FILLER = "Question {i}: tell me more about token windows and long conversations. " * 6


def lossy(fake):
    """A summariser that keeps the gist and drops every detail, as real ones sometimes do."""
    def reply(body: dict) -> str:
        if is_summary_request(body):
            return "Summary: the user and the assistant talked about plans and token windows."
        return fake.default_reply(body) + " and some more words in the answer." * 4
    fake.reply_fn = reply


def recalled_block(request) -> str:
    """The recalled turns a request carried: in its newest user message, never in the system
    message (which then stays the same from turn to turn)."""
    messages = request.body["messages"]
    assert RECALL_HEADER not in messages[0]["content"]
    text = messages[-1]["content"]
    assert messages[-1]["role"] == "user"
    return text.split(RECALL_HEADER, 1)[1] if RECALL_HEADER in text else ""


async def test_facts_come_back_after_three_compactions(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    await send(engine, FACT_EN)
    await send(engine, FACT_ZH)
    compactions = i = 0
    while compactions < 3:
        events = await send(engine, FILLER.format(i=i))
        compactions += sum(isinstance(e, ev.CompactionFinished) for e in events)
        i += 1
        assert i < 60, "the conversation never compacted three times"
    covered = {m.content for m in engine.messages if m.covered}
    assert FACT_EN in covered and FACT_ZH in covered  # only the store still has them
    assert "4,200" not in engine.summary.content and "鹈鹕" not in engine.summary.content

    events = await send(engine, "Remind me: how much was the launch budget Anna approved?")
    block = recalled_block(fake_server.chat_requests[-1])
    assert FACT_EN in block and FACT_ZH not in block
    assert "Question" not in block  # unrelated turns stay out
    said = [e for e in events if isinstance(e, ev.Recalled)]
    assert len(said) == 1 and said[0].turns == 1
    assert isinstance(events[-1], ev.Finished)

    events = await send(engine, "服务器的密码提示是什么来着？")
    block = recalled_block(fake_server.chat_requests[-1])
    assert FACT_ZH in block and FACT_EN not in block and "Question" not in block
    assert isinstance(events[-1], ev.Finished)

    # A question about none of it recalls nothing.
    await send(engine, "What is the capital of Portugal?")
    assert recalled_block(fake_server.chat_requests[-1]) == ""
    # Every request fitted: the server never refused one.
    assert not any(r.overflowed for r in fake_server.requests)
    await engine.provider.aclose()


async def test_recall_budget_zero_turns_it_off(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                         recall_budget=0.0)
    await send(engine, FACT_EN)
    for i in range(12):
        await send(engine, FILLER.format(i=i))
    assert any(m.covered and m.content == FACT_EN for m in engine.messages)
    await send(engine, "How much was the launch budget Anna approved?")
    assert recalled_block(fake_server.chat_requests[-1]) == ""
    await engine.provider.aclose()


async def test_the_gauge_counts_what_the_draft_would_recall(fake_server, tmp_path):
    lossy(fake_server)
    engine = make_engine(fake_server, tmp_path, context_window=2048, response_reserve=256,
                         system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    await send(engine, FACT_EN)
    for i in range(12):
        await send(engine, FILLER.format(i=i))
    assert engine.summary is not None
    about = engine.usage(pending="how much was the launch budget Anna approved?")
    unrelated = engine.usage(pending="what is the capital of Portugal?")
    assert about.recalled > 0 and unrelated.recalled == 0
    assert about.used - unrelated.used >= about.recalled - 5  # counted in what is used
    await engine.provider.aclose()
