"""The gauge's estimate against the real server's own count of the same request."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.system_message import SystemMessage
from tests.e2e.conftest import N_CTX, server_prompt_tokens
from tests.engine_helpers import BASE

pytestmark = pytest.mark.e2e

TURNS = [
    "I am planning a trip to Kyoto in April. 我想在四月去京都旅行，看樱花，也想参观寺庙。"
    "What should I pack for the weather, and which temples are worth an early start?",
    "我们一共有五天时间，预算大概是一万二千元人民币。Could you split five days between "
    "Kyoto, Nara and Osaka so that no day has more than three sights?",
    "One more thing: my friend is vegetarian. 她不吃肉，也不吃鱼。"
    "Which neighbourhoods have good vegetarian restaurants?",
]
NEXT = "最后一个问题：how early should we book the ryokan, 还有需要付定金吗？"


async def test_estimate_within_5_percent_after_3_turns(tmp_path, llama_server):
    settings = replace(BASE, base_url=llama_server.base_url, model=LOCAL_MODEL_NAME,
                       context_window=N_CTX, response_reserve=48, system_reserve=256)
    async with OpenAIProvider(llama_server.base_url) as provider:
        with Store(tmp_path / "sessions.db") as store:
            engine = Engine(settings, store, provider, None)
            uncalibrated = None
            for text in TURNS:
                if uncalibrated is None:
                    uncalibrated = engine.usage(pending=text)
                async for _ in engine.stream_reply(text):
                    pass
            assert engine.counter.source == "calibrated"
            assert engine.summary is None  # all of it is sent: the gauge's sum is the request

            gauge = engine.usage(pending=NEXT)
            estimate = gauge.system + gauge.summary + gauge.history + gauge.pending
            fitted = fit_window(engine.history() + [Message("user", NEXT)],
                                budget=engine.budget.tokens, counter=engine.counter,
                                system=SystemMessage(settings.system_prompt))
            assert not fitted.dropped
            real = server_prompt_tokens(llama_server, fitted.wire)
    error = abs(estimate - real) / real
    assert error <= 0.05, (f"gauge {estimate} vs server {real} tokens: {error:.1%} off "
                           f"(first turn, uncalibrated: {uncalibrated.used})")
