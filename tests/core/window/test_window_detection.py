"""Context window 0 = ask the server: llama.cpp's /props, vLLM's /v1/models; else the table."""

from __future__ import annotations

import pytest

from jarvis_tui.core import events as ev
from tests.engine_helpers import kinds, make_engine, send


@pytest.mark.parametrize("flavor", ["llamacpp", "vllm"])
async def test_the_server_says_its_window(make_fake_server, tmp_path, flavor):
    fake = make_fake_server(limit=3000, flavor=flavor)
    engine = make_engine(fake, tmp_path, context_window=0)
    assert engine.window_source == "default" and engine.context_window == 8192
    events = await send(engine, "hello")
    assert kinds(events)[:2] == ["WindowDetected", "WindowFitted"]
    assert events[0] == ev.WindowDetected(3000)
    assert engine.context_window == 3000 and engine.window_source == "detected from the server"
    assert engine.usage().window_source == "detected from the server"
    assert fake.chat_requests[-1].body["max_tokens"] == 512  # the budget came from 3000
    # Asked once per engine, not once per round.
    asked = len(fake.gets)
    assert "WindowDetected" not in kinds(await send(engine, "again"))
    assert len(fake.gets) == asked > 0


async def test_a_server_that_does_not_say_keeps_the_table_or_default(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path, context_window=0)  # flavor openai: no /props
    events = await send(engine, "hello")
    assert "WindowDetected" not in kinds(events)
    assert engine.window_source == "default" and engine.usage().window_source == "default"


async def test_a_configured_window_is_not_second_guessed(make_fake_server, tmp_path):
    fake = make_fake_server(limit=3000, flavor="llamacpp")
    engine = make_engine(fake, tmp_path, context_window=4096)
    assert "WindowDetected" not in kinds(await send(engine, "hello"))
    assert engine.context_window == 4096
    assert fake.gets == []
