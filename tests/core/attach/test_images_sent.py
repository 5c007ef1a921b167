"""Images on every wire, as a session sends them to the fake servers over loopback (each counts
an image by its provider's published formula, independently of ours): the picture goes as that
provider's own part, scaled to its limit beforehand; the chip's tokens are what the server then
counts; the store keeps the bytes so a later request (and a later session) sends the image
again; Anthropic's cache breakpoints still land; a model without vision is one clear line."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.attach.cost import image_cost
from jarvis_tui.core.attach.message import Sending, message_with
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.session import ChatSession, Store
from jarvis_tui.core.settings.config import Settings
from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakeserver import FakeProvider, SentImage
from tests.images import image

KEY = "sk-ant-api03-images-0123456789"
ASK = "What does this screenshot show?"


def serving(protocol: str, **kw):  # noqa: ANN201
    if protocol == "anthropic":
        return FakeAnthropic(**kw)
    if protocol == "ollama":
        return FakeOllama(default_num_ctx=32768, context_length=32768, **kw)
    return FakeProvider(limit=128_000, **kw)


def settings_for(protocol: str, fake) -> Settings:  # noqa: ANN001
    s = Settings(base_url=fake.base_url, model="bench-model", context_window=32768)
    if protocol == "anthropic":
        return replace(s, provider="anthropic", api_key=KEY)
    if protocol == "ollama":
        return replace(s, provider="ollama", model="llama3.2")
    return s


def requests_of(fake):  # noqa: ANN001, ANN201
    if isinstance(fake, FakeAnthropic):
        return fake.message_requests
    return fake.chat_requests


async def answer(session: ChatSession, question: Message) -> list[ev.Event]:
    return [e async for e in session.stream_reply(question)]


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("size", [(640, 480), (4000, 3000)])
async def test_an_image_goes_on_each_wire_as_counted(protocol, size, tmp_path):
    (tmp_path / "shot.png").write_bytes(image(*size, "PNG", (20, 120, 220)))
    with serving(protocol) as fake, Store(tmp_path / "s.db") as store:
        session = ChatSession(settings_for(protocol, fake), store, make_provider)
        read = Sending(read_path("shot.png", tmp_path))
        sending = session.as_sent([read])[0]
        att = sending.attachment
        expect = image_cost(protocol, *size)
        assert (att.width, att.height) == (expect.width, expect.height)
        assert (att.width, att.height) != size or size == (640, 480)
        chip = session.attachment_tokens([sending])[0]
        await answer(session, message_with("Hello.", []))
        before = session.last_usage.prompt_tokens
        events = await answer(session, message_with(ASK, [sending]))
        assert isinstance(events[-1], ev.Finished), events[-1]
        sent = requests_of(fake)[-1]
        assert sent.images == [SentImage("image/png", att.width, att.height)]
        # What the chip said is what the server counted for it (the reply before the new
        # question, and the question's own words, are the rest of the difference).
        added = session.last_usage.prompt_tokens - before
        question_alone = session.tokens(ASK)
        reply = session.tokens(session.messages[-3].content)
        assert abs(added - (chip + question_alone + reply)) <= 12, (added, chip)
        await session.aclose()
        # The store keeps the bytes: a later session sends the picture again.
        again = ChatSession(settings_for(protocol, fake), store, make_provider,
                            conversation_id=session.id)
        await answer(again, Message("user", "And the colour?"))
        assert requests_of(fake)[-1].images == [SentImage("image/png", att.width, att.height)]
        await again.aclose()


async def test_anthropic_breakpoints_land_with_an_image_and_the_next_turn_reads_it(tmp_path):
    (tmp_path / "shot.png").write_bytes(image(1200, 900))
    with FakeAnthropic() as fake, Store(tmp_path / "s.db") as store:
        session = ChatSession(settings_for("anthropic", fake), store, make_provider)
        sending = session.as_sent([Sending(read_path("shot.png", tmp_path))])[0]
        await answer(session, message_with(ASK, [sending]))
        first = fake.message_requests[-1].body["messages"][-1]["content"]
        assert [b["type"] for b in first] == ["image", "text"]
        assert first[-1]["cache_control"] == {"type": "ephemeral"}
        await answer(session, Message("user", "Is it dark?"))
        image_tokens = image_cost("anthropic", 1200, 900).tokens
        # The picture is read from the cache, not evaluated again.
        assert session.last_usage.cached_tokens >= image_tokens
        await session.aclose()


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "ollama"])
async def test_a_model_without_vision_is_one_clear_line_and_the_question_stays(protocol,
                                                                              tmp_path):
    (tmp_path / "shot.png").write_bytes(image(64, 64))
    with serving(protocol, vision=False) as fake, Store(tmp_path / "s.db") as store:
        session = ChatSession(settings_for(protocol, fake), store, make_provider)
        sending = session.as_sent([Sending(read_path("shot.png", tmp_path))])[0]
        events = await answer(session, message_with(ASK, [sending]))
        failed = events[-1]
        assert isinstance(failed, ev.Failed), events
        assert failed.error.startswith("The model takes no images"), failed.error
        assert failed.error.endswith("Ask again without the image, or pick a model that "
                                     "reads images")
        assert len(requests_of(fake)) == 1  # refused once, not retried
        stored = [m for m in store.messages(session.id) if m.role == "user"]
        assert stored[-1].content.endswith(ASK) and stored[-1].attachments
        # Kept with the session: the next image is refused when attached, this run or next.
        assert session.takes_images() is False
        await session.aclose()
        again = ChatSession(settings_for(protocol, fake), store, make_provider,
                            conversation_id=session.id)
        assert again.takes_images() is False
        await again.aclose()


async def test_an_animated_gif_goes_as_its_first_frame_in_png(tmp_path):
    from PIL import Image

    frames = [Image.new("RGB", (120, 80), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    frames[0].save(tmp_path / "spin.gif", save_all=True, append_images=frames[1:], duration=50)
    with FakeProvider(limit=128_000) as fake, Store(tmp_path / "s.db") as store:
        session = ChatSession(settings_for("openai", fake), store, make_provider)
        sending = session.as_sent([Sending(read_path("spin.gif", tmp_path))])[0]
        assert sending.attachment.media_type == "image/png"
        await answer(session, message_with(ASK, [sending]))
        assert fake.chat_requests[-1].images == [SentImage("image/png", 120, 80)]
        await session.aclose()
