"""A refused request's retry counts in what the server counted beyond our estimate (issue 13,
item 19): the engine against the fake server, which counts with the real cl100k."""

from __future__ import annotations

import random
import string

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.retry_policy import OVERFLOW_CALIBRATION_STEP
from jarvis_tui.core.messages import COMPLETE
from jarvis_tui.core.window.tokens import estimate
from tests.engine_helpers import final, make_engine, send

# Random punctuation: still estimated about 9x below what cl100k counts.
PUNCTUATION = "".join(random.Random(19).choices(string.punctuation, k=60_000))


@pytest.mark.parametrize("flavor, window", [
    ("openai", 4096), ("vllm_new", 4096), ("llamacpp", 4096), ("anthropic", 4096),
    ("openai", 16384),  # the refusal also teaches the limit
])
async def test_a_request_underestimated_9x_fits_on_the_first_retry(make_fake_server, tmp_path,
                                                                   flavor, window):
    fake = make_fake_server(limit=4096, flavor=flavor)
    engine = make_engine(fake, tmp_path, context_window=window)
    events = await send(engine, PUNCTUATION)
    assert isinstance(final(events), ev.Finished), events[-1]
    refused = [r for r in fake.chat_requests if r.overflowed]
    assert len(refused) == 1 and len(fake.chat_requests) == 2
    # We sent what we thought was at most the budget or the message: the server counted 5x more.
    budget = next(e for e in events if isinstance(e, ev.WindowFitted)).usage.budget
    assert refused[0].prompt_tokens > 5 * min(budget, estimate(PUNCTUATION))
    sent = fake.chat_requests[-1].body["messages"][-1]["content"]
    assert "tokens omitted ..." in sent  # cut in the request only
    stored = engine.store.messages(engine.conversation.id)
    assert stored[0].content == PUNCTUATION and stored[0].status == COMPLETE


async def test_the_gap_stays_in_its_round_and_the_factor_moves_a_bounded_step(fake_server,
                                                                              tmp_path):
    engine = make_engine(fake_server, tmp_path)
    factors: list[float] = []
    async for event in engine.stream_reply(PUNCTUATION):
        if isinstance(event, ev.WindowFitted):
            factors.append(engine.counter.factor)
    # The refusal said ~9x: the factor, which prices every message of the session, went up by
    # OVERFLOW_CALIBRATION_STEP only; the retry fit by counting the rest of the gap in.
    assert factors == [1.0, OVERFLOW_CALIBRATION_STEP]
    assert engine.counter.per_char == 0
    stored = engine.store.get_meta(engine.conversation.id, "calibration")
    assert max(stored.values()) < 3.0  # nor was the saved factor pushed to the cap

