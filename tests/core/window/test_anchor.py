"""The gauge anchored to the server's count of the last request: only what is new is estimated."""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.anchor import Anchor
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.system_message import SystemMessage
from jarvis_tui.core.window.tokens import TokenCounter
from tests.engine_helpers import make_engine, send
from tests.fakeserver import count_prompt

# Text whose tokens our estimator and cl100k (the fake's tokenizer) see differently, so a single
# calibration factor cannot get every mix right.
TURNS = ["def f(x): return {'k': [x, x ** 2]}  # 计算平方 " * 6,
         "上下文窗口是有限的，需要把早期对话压缩成摘要。" * 5,
         "Plain English prose about the weather in the harbour town. " * 6]
NEXT = "请再解释一次。 Once more, please: {'a': 1}"


def gauge_total(engine, pending: str) -> int:
    u = engine.usage(pending=pending)
    return u.system + u.summary + u.history + u.pending


def server_count(engine, pending: str) -> int:
    fitted = fit_window(engine.history() + [Message("user", pending)],
                        budget=engine.budget.tokens, counter=engine.counter,
                        system=SystemMessage(engine.settings.system_prompt,
                                             summary_head=engine.summary.content
                                             if engine.summary else ""))
    return count_prompt(fitted.wire)


async def test_after_three_turns_the_gauge_is_the_servers_count_plus_the_draft(
        fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path, context_window=16384)
    for text in TURNS:
        await send(engine, text)
    assert engine.anchor is not None
    rec = fake_server.chat_requests[-1]
    assert engine.anchor.prompt_tokens == rec.prompt_tokens
    assert engine.anchor.reply_tokens == rec.completion_tokens
    real = server_count(engine, NEXT)
    error = abs(gauge_total(engine, NEXT) - real) / real
    assert error <= 0.02, f"{gauge_total(engine, NEXT)} vs {real}"
    # The gauge stands on the server's count: move the count, the gauge moves with it.
    from dataclasses import replace

    anchored = gauge_total(engine, NEXT)
    engine.anchor = replace(engine.anchor, prompt_tokens=engine.anchor.prompt_tokens + 100)
    assert gauge_total(engine, NEXT) == anchored + 100
    await engine.provider.aclose()


async def test_a_compaction_lets_go_of_the_anchor(fake_server, tmp_path):
    from tests.engine_helpers import summarising_replies

    summarising_replies(fake_server, chat_words=40)
    engine = make_engine(fake_server, tmp_path, context_window=16384, keep_recent_turns=1)
    for text in TURNS:
        await send(engine, text)
    before = gauge_total(engine, "")
    async for _ in engine.compact(reason="manual"):
        pass
    assert engine.summary is not None
    history = engine.history()
    assert engine.anchor.total("x", history, engine.counter) is None
    # The gauge now counts the summary and the kept turns, not the old request.
    assert gauge_total(engine, "") < before
    await engine.provider.aclose()


def test_anchor_applies_only_while_the_request_starts_the_same():
    counter = TokenCounter("fake", exact=False)
    a = Message("user", "hello", id=1)
    b = Message("assistant", "hi there", id=2)
    c = Message("user", "next question", id=3)
    anchor = Anchor(system="sys", ids=(1,), prompt_tokens=50, reply_id=2, reply_tokens=7)
    framing = counter.message(b) - counter.text(b.content)
    assert anchor.total("sys", [a, b, c], counter) == 50 + 7 + framing + counter.message(c)
    assert anchor.total("sys", [a], counter) == 50
    assert anchor.total("another summary", [a, b, c], counter) is None  # summary edited
    assert anchor.total("sys", [b, c], counter) is None  # the first message left the window
    assert anchor.total("sys", [], counter) is None
