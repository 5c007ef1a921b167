"""Calibration as a session meets it, against the fake servers over real HTTP, per wire protocol:
a short first turn, then a long text; and a conversation of several turns in a script our
estimator undercounts.

A short request is mostly framing, and each protocol frames its own way (Anthropic's system is a
field, not a message, and no reply is primed): learned whole as the tokenizer's ratio, a first
turn of a few words had the gauge read every long text after it about a fifth low."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.calibration import DECISIVE_TOKENS
from jarvis_tui.core.window.tokens import TokenCounter, estimate
from tests.engine_helpers import BASE, Sleeps, send
from tests.fake_anthropic import FakeAnthropic
from tests.fakeserver import count_tokens

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-ant-api03-calibration-0123456789"
WINDOW = 65_536
HINDI = ["नमस्ते, आज मौसम बहुत अच्छा है और हम पार्क जा रहे हैं।",
         "मेरे दादाजी हर सुबह बगीचे में पौधों को पानी देते हैं।",
         "इस किताब में भारत के इतिहास की कई कहानियाँ लिखी हैं।",
         "कल रात बारिश हुई, इसलिए सड़कें अभी भी गीली हैं।",
         "हमारी टीम ने परियोजना को समय से पहले पूरा कर लिया।",
         "क्या आप मुझे स्टेशन का रास्ता बता सकते हैं?",
         "बाज़ार में आज सब्ज़ियाँ सस्ती और ताज़ी थीं।",
         "बच्चे स्कूल के बाद मैदान में क्रिकेट खेलते हैं।"]


def sample(name: str, chars: int = 12_000) -> str:
    """bench/data's prose or code, its samples joined."""
    text = (ROOT / "bench" / "data" / f"{name}.txt").read_text(encoding="utf-8")
    return "\n\n".join(s.strip("\n") for s in text.split("\n----\n") if s.strip())[:chars]


def hindi(rng: random.Random, sentences: int) -> str:
    return " ".join(rng.choice(HINDI) for _ in range(sentences))


@pytest.fixture(params=["openai", "anthropic"])
async def served(request, make_fake_server, make_fake_anthropic, tmp_path):
    """(the fake server, an engine on it) for each wire protocol."""
    settings = replace(BASE, context_window=WINDOW)
    if request.param == "anthropic":
        fake = make_fake_anthropic()
        settings = replace(settings, provider="anthropic", api_key=KEY)
    else:
        fake = make_fake_server(limit=WINDOW)
    settings = replace(settings, base_url=fake.base_url)
    engine = Engine(settings, Store(tmp_path / "sessions.db"), make_provider(settings),
                    sleep=Sleeps(), jitter=lambda: 0.5)
    yield fake, engine
    await engine.provider.aclose()
    engine.store.close()


def counted(fake) -> int:
    """The server's own count of the newest request."""
    requests = fake.message_requests if isinstance(fake, FakeAnthropic) else fake.chat_requests
    return requests[-1].prompt_tokens


async def shown_and_counted(engine: Engine, fake, text: str) -> tuple[int, int]:
    """What the gauge showed for sending `text`, and what the server counted when it came."""
    u = engine.usage(pending=text)
    shown = u.system + u.summary + u.history + u.pending
    await send(engine, text)
    return shown, counted(fake)


def test_a_light_report_leaves_the_guess_to_the_first_whole_one() -> None:
    counter = TokenCounter("some-local-model", exact=False)
    counter.observe(32, 25, weight=32 / DECISIVE_TOKENS)
    assert 25 / 32 < counter.factor < 1.0  # moved, a little
    assert counter.source == "calibrated"
    counter.observe(2000, 2400)
    assert counter.factor == pytest.approx(1.2)  # not half way from where the light one left it
    counter.observe(2000, 3000)
    assert 1.2 < counter.factor < 1.5  # from then on, part of the way


@pytest.mark.parametrize("name", ["english", "chinese", "code"])
async def test_a_short_first_turn_does_not_scale_the_long_text_after_it(served, name):
    fake, engine = served
    await send(engine, "What is in this file?")
    first = counted(fake)
    shown, real = await shown_and_counted(engine, fake, sample(name))
    assert real > 50 * first  # the first request was a few words and its framing
    error = (shown - real) / real
    assert abs(error) <= 0.03, f"gauge {shown} vs server {real} tokens: {error:+.1%}"


async def test_after_turns_in_a_script_we_undercount_the_gauge_is_the_servers(served):
    fake, engine = served
    rng = random.Random(7)
    text = hindi(rng, 60)
    # Hindi costs cl100k (the fakes' tokenizer) about a fifth more than we estimate: only the
    # servers' counts can teach it.
    assert estimate(text) < 0.9 * count_tokens(text)
    await send(engine, "Hello!")
    for sentences in (8, 12, 16, 20):
        await send(engine, hindi(rng, sentences))
    learned = engine.counter.text(text) / count_tokens(text) - 1
    assert abs(learned) <= 0.05, f"the text counted {learned:+.1%} off after the conversation"
    shown, real = await shown_and_counted(engine, fake, text)
    error = (shown - real) / real
    assert abs(error) <= 0.03, f"gauge {shown} vs server {real} tokens: {error:+.1%}"
