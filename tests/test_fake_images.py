"""The fake providers count, cache and refuse images as their real servers do: real requests
over loopback with real images (Pillow writes them), checked against each provider's published
token formula and its own words for what it refuses."""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Callable

import httpx
import pytest
from PIL import Image

from tests.fake_anthropic import FakeAnthropic, count_input
from tests.fake_ollama import FakeOllama, count_ollama_prompt
from tests.fakeserver import FakeProvider, SentImage, count_prompt
from tests.images import image

ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01"}
ASK = "What is in this picture?"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> str:
    return b64(image(width, height, "PNG", color))


def noise_png(width: int, height: int) -> bytes:
    """A PNG that does not compress: random pixels."""
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG")
    return out.getvalue()


# --- OpenAI chat completions --------------------------------------------------------------------


def openai_messages(*parts: dict) -> list[dict]:
    return [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": [{"type": "text", "text": ASK}, *parts]}]


def image_part(data: str, media_type: str = "image/png", detail: str | None = None) -> dict:
    spec = {"url": f"data:{media_type};base64,{data}"}
    if detail is not None:
        spec["detail"] = detail
    return {"type": "image_url", "image_url": spec}


def openai_post(fake: FakeProvider, messages: list[dict]) -> httpx.Response:
    return httpx.post(f"{fake.base_url}/chat/completions", timeout=30,
                      json={"model": "fake-model", "messages": messages, "max_tokens": 16})


TEXT_ONLY = count_prompt(openai_messages())


@pytest.mark.parametrize(("size", "detail", "tokens"), [
    ((1024, 1024), None, 765),  # OpenAI's worked example: 768 x 768, four tiles
    ((2048, 4096), None, 1105),  # and its other: 1024 x 2048, then 768 x 1536, six tiles
    ((2048, 4096), "high", 1105),
    ((2048, 4096), "auto", 1105),
    ((4096, 8192), "low", 85),
    ((512, 512), None, 255),  # never scaled up: one tile
    ((600, 300), None, 425),  # two tiles, unscaled
])
def test_openai_counts_an_image_by_its_tiles(
        make_fake_server: Callable[..., FakeProvider], size: tuple[int, int],
        detail: str | None, tokens: int) -> None:
    fake = make_fake_server(limit=100_000)
    response = openai_post(fake, openai_messages(image_part(png(*size), detail=detail)))
    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    assert usage["prompt_tokens"] == TEXT_ONLY + tokens
    assert fake.chat_requests[-1].prompt_tokens == TEXT_ONLY + tokens
    assert fake.chat_requests[-1].images == [SentImage("image/png", *size)]


def test_openai_text_only_counts_are_unchanged(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server()
    response = openai_post(fake, openai_messages())
    assert response.json()["usage"]["prompt_tokens"] == TEXT_ONLY
    assert fake.chat_requests[-1].images == []


def test_openai_records_every_image_and_its_format(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server(limit=100_000)
    jpeg = b64(image(300, 200, "JPEG"))
    gif, webp = b64(image(40, 30, "GIF")), b64(image(800, 900, "WEBP"))
    response = openai_post(fake, openai_messages(
        image_part(jpeg, "image/jpeg"), image_part(gif, "image/gif"),
        image_part(webp, "image/webp", detail="low")))
    assert response.status_code == 200, response.text
    assert fake.chat_requests[-1].images == [
        SentImage("image/jpeg", 300, 200), SentImage("image/gif", 40, 30),
        SentImage("image/webp", 800, 900)]
    # 300 x 200: one tile; 40 x 30: one tile; low: 85.
    assert response.json()["usage"]["prompt_tokens"] == TEXT_ONLY + 255 + 255 + 85


def test_openai_cache_reads_the_same_image_as_the_same_prefix(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server(limit=100_000)
    red, blue = png(1024, 1024), png(1024, 1024, (20, 40, 220))
    first = openai_post(fake, openai_messages(image_part(red))).json()["usage"]
    again = openai_post(fake, openai_messages(image_part(red))).json()["usage"]
    other = openai_post(fake, openai_messages(image_part(blue))).json()["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    # The whole prompt again: every image token read back.
    assert again["prompt_tokens_details"]["cached_tokens"] == again["prompt_tokens"]
    # The same size, other pixels: read back up to the image, not into it.
    before_image = count_prompt(openai_messages()) - 3  # the priming comes after the image
    assert other["prompt_tokens"] == first["prompt_tokens"]
    assert other["prompt_tokens_details"]["cached_tokens"] == before_image


def test_openai_text_only_model_refuses_an_image(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server(vision=False)
    assert openai_post(fake, openai_messages()).status_code == 200  # words alone are fine
    response = openai_post(fake, openai_messages(image_part(png(64, 64))))
    assert response.status_code == 400
    assert response.json() == {"error": {
        "message": "Invalid content type. image_url is only supported by certain models.",
        "type": "invalid_request_error", "param": "messages.[1].content.[1].type",
        "code": None}}
    rec = fake.chat_requests[-1]
    assert rec.status == 400 and rec.images == [SentImage("image/png", 64, 64)]


def test_llama_cpp_without_a_projector_refuses_in_its_words(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server(flavor="llamacpp", vision=False)
    response = openai_post(fake, openai_messages(image_part(png(64, 64))))
    assert response.status_code == 500
    assert response.json()["error"]["type"] == "server_error"
    assert response.json()["error"]["message"].startswith("image input is not supported")


def test_openai_refuses_bytes_that_are_no_image(
        make_fake_server: Callable[..., FakeProvider]) -> None:
    fake = make_fake_server()
    response = openai_post(fake, openai_messages(image_part(b64(b"not a picture at all"))))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_image_format"
    assert fake.chat_requests[-1].images == [SentImage(None, 0, 0)]


# --- Anthropic Messages ------------------------------------------------------------------------


def image_block(data: str, media_type: str = "image/png", **extra: object) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                        "data": data}, **extra}


def anthropic_body(*blocks: dict, text: str = ASK) -> dict:
    content = [*blocks, {"type": "text", "text": text}] if text else list(blocks)
    return {"model": "claude-fake", "max_tokens": 16,
            "messages": [{"role": "user", "content": content}]}


def anthropic_post(fake: FakeAnthropic, body: dict) -> httpx.Response:
    return httpx.post(f"{fake.base_url}/v1/messages", json=body, headers=ANTHROPIC_HEADERS,
                      timeout=30)


ANTHROPIC_TEXT = count_input(anthropic_body())


@pytest.mark.parametrize(("size", "tokens"), [
    ((1000, 1000), 1334),  # under both limits: 1,000,000 / 750
    ((1092, 1092), 1590),  # the docs' largest square sent unscaled
    ((4000, 1000), 820),  # the long edge: 1568 x 392
    ((2000, 2000), 1599),  # the pixels: 1095 x 1095, just under 1,600 tokens' worth
    ((200, 100), 27),
])
def test_anthropic_counts_an_image_by_its_pixels(
        make_fake_anthropic: Callable[..., FakeAnthropic], size: tuple[int, int],
        tokens: int) -> None:
    fake = make_fake_anthropic()
    response = anthropic_post(fake, anthropic_body(image_block(png(*size))))
    assert response.status_code == 200, response.text
    assert response.json()["usage"]["input_tokens"] == ANTHROPIC_TEXT + tokens
    assert fake.message_requests[-1].images == [SentImage("image/png", *size)]


def test_anthropic_takes_a_message_of_an_image_alone(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    response = anthropic_post(fake, anthropic_body(image_block(png(1000, 1000)), text=""))
    assert response.status_code == 200, response.text
    assert response.json()["usage"]["input_tokens"] == count_input(anthropic_body(text="")) + 1334


def test_anthropic_counts_the_images_in_a_tool_result(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    tools = [{"name": "look", "description": "Looks.", "input_schema": {"type": "object"}}]
    messages = [
        {"role": "user", "content": "Look."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "look",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "Here:"},
                                                  image_block(png(1000, 1000))]}]}]
    body = {"model": "claude-fake", "max_tokens": 16, "tools": tools, "messages": messages}
    without = json.loads(json.dumps(body))
    without["messages"][2]["content"][0]["content"].pop()
    response = anthropic_post(fake, body)
    assert response.status_code == 200, response.text
    assert response.json()["usage"]["input_tokens"] == count_input(without) + 1334
    assert fake.message_requests[-1].images == [SentImage("image/png", 1000, 1000)]


def test_anthropic_cache_reads_the_same_image_as_the_same_prefix(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    mark = {"cache_control": {"type": "ephemeral"}}
    red, blue = png(1000, 1000), png(1000, 1000, (20, 40, 220))
    first = anthropic_post(fake, anthropic_body(image_block(red, **mark))).json()["usage"]
    again = anthropic_post(fake, anthropic_body(image_block(red, **mark))).json()["usage"]
    other = anthropic_post(fake, anthropic_body(image_block(blue, **mark))).json()["usage"]
    # The breakpoint sits on the image: the role marks and the image's 1,334 tokens.
    marked = 4 + 1334
    assert (first["cache_creation_input_tokens"], first["cache_read_input_tokens"]) == (marked, 0)
    assert (again["cache_creation_input_tokens"], again["cache_read_input_tokens"]) == (0, marked)
    assert (other["cache_creation_input_tokens"], other["cache_read_input_tokens"]) == (marked, 0)
    for usage in (first, again, other):
        assert sum(usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                      "cache_read_input_tokens")) == ANTHROPIC_TEXT + 1334


def anthropic_refusal(fake: FakeAnthropic, body: dict) -> str:
    response = anthropic_post(fake, body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    return error["error"]["message"]


def test_anthropic_refuses_an_image_that_is_not_its_media_type(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    jpeg = b64(image(64, 64, "JPEG"))
    assert anthropic_refusal(fake, anthropic_body(image_block(jpeg, "image/png"))) == (
        "messages.0.content.0.image.source.base64: The image was specified using the image/png "
        "media type, but the image appears to be a image/jpeg image")
    assert fake.message_requests[-1].images == [SentImage("image/jpeg", 64, 64)]
    assert anthropic_post(fake, anthropic_body(image_block(jpeg, "image/jpeg"))).status_code \
        == 200


def test_anthropic_refuses_an_image_over_5_mb_of_base64(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    data = b64(noise_png(1200, 1200))  # about 4.3 MB of PNG, 5.8 MB as base64
    assert len(data) > 5 * 1024 * 1024
    assert anthropic_refusal(fake, anthropic_body(image_block(data))) == (
        f"messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: {len(data)} "
        "bytes > 5242880 bytes")


def test_anthropic_refuses_what_it_cannot_read(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic()
    assert anthropic_refusal(fake, anthropic_body(image_block(b64(b"plain words")))) == (
        "Could not process image")
    assert anthropic_refusal(fake, anthropic_body(image_block(png(8001, 10)))) == (
        "messages.0.content.0.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size: 8000 pixels")
    assert anthropic_refusal(fake, anthropic_body(image_block(png(8, 8), "image/bmp"))) == (
        "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', "
        "'image/png', 'image/gif' or 'image/webp'")
    # Past 20 images in a request, no side may pass 2000 pixels.
    small, wide = image_block(png(10, 10)), image_block(png(2001, 10))
    assert anthropic_post(fake, anthropic_body(wide, *[small] * 19)).status_code == 200
    assert anthropic_refusal(fake, anthropic_body(*[small] * 20, wide)) == (
        "messages.0.content.20.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size for many-image requests: 2000 pixels")


def test_anthropic_model_without_vision_refuses_an_image(
        make_fake_anthropic: Callable[..., FakeAnthropic]) -> None:
    fake = make_fake_anthropic(vision=False)
    assert anthropic_post(fake, anthropic_body()).status_code == 200
    assert anthropic_refusal(fake, anthropic_body(image_block(png(64, 64)))) == (
        "claude-fake does not support images.")
    assert fake.message_requests[-1].images == [SentImage("image/png", 64, 64)]


# --- Ollama /api/chat --------------------------------------------------------------------------


def ollama_post(fake: FakeOllama, messages: list[dict]) -> httpx.Response:
    return httpx.post(f"{fake.base_url}/api/chat", timeout=30, json={
        "model": "llama3.2", "messages": messages, "stream": False,
        "options": {"num_ctx": 8192}})


@pytest.mark.parametrize(("size", "tokens"), [
    ((2048, 1536), 37 * 28),  # resized to 1024 x 768
    ((500, 300), 18 * 11),  # never up
    ((28, 28), 1),
    ((1024, 4096), 10 * 37),  # 256 x 1024
])
def test_ollama_counts_an_image_by_its_patches(
        make_fake_ollama: Callable[..., FakeOllama], size: tuple[int, int],
        tokens: int) -> None:
    fake = make_fake_ollama(context_length=8192)
    text = [{"role": "user", "content": ASK}]
    response = ollama_post(fake, [{**text[0], "images": [png(*size)]}])
    assert response.status_code == 200, response.text
    assert response.json()["prompt_eval_count"] == count_ollama_prompt(text) + tokens
    assert fake.chat_requests[-1].images == [SentImage("image/png", *size)]


def test_ollama_text_only_model_refuses_an_image(
        make_fake_ollama: Callable[..., FakeOllama]) -> None:
    fake = make_fake_ollama(vision=False)
    assert ollama_post(fake, [{"role": "user", "content": ASK}]).status_code == 200
    response = ollama_post(fake, [{"role": "user", "content": ASK, "images": [png(64, 64)]}])
    assert response.status_code == 400
    # llama-server's JSON body, passed on by Ollama as the text of its own "error".
    assert response.json() == {"error": '{"error":{"code":400,"message":"Multimodal data '
                                        'provided, but model does not support multimodal '
                                        'requests.","type":"invalid_request_error"}}'}
    assert fake.chat_requests[-1].images == [SentImage("image/png", 64, 64)]
    show = httpx.post(f"{fake.base_url}/api/show", json={"model": "llama3.2"}).json()
    assert "vision" not in show["capabilities"]


def test_ollama_refuses_only_the_images_it_keeps(
        make_fake_ollama: Callable[..., FakeOllama]) -> None:
    """An image in a message truncation dropped never reaches the model, so it is not refused."""
    fake = make_fake_ollama(vision=False)
    messages = [{"role": "user", "content": ASK, "images": [png(2048, 1536)]},
                {"role": "assistant", "content": "A red square."},
                {"role": "user", "content": "And now?"}]
    response = httpx.post(f"{fake.base_url}/api/chat", timeout=30, json={
        "model": "llama3.2", "messages": messages, "stream": False,
        "options": {"num_ctx": 512}})
    assert response.status_code == 200, response.text
    rec = fake.chat_requests[-1]
    assert rec.truncated and rec.kept == messages[1:]
    assert rec.sent_tokens == count_ollama_prompt(messages) > 1036
    assert rec.images == [SentImage("image/png", 2048, 1536)]


def test_ollama_lists_vision_for_a_vision_model(
        make_fake_ollama: Callable[..., FakeOllama]) -> None:
    fake = make_fake_ollama()
    show = httpx.post(f"{fake.base_url}/api/show", json={"model": "llama3.2"}).json()
    assert show["capabilities"] == ["completion", "tools", "vision"]


def test_ollama_refuses_bad_base64_and_bytes_that_are_no_image(
        make_fake_ollama: Callable[..., FakeOllama]) -> None:
    fake = make_fake_ollama()
    response = ollama_post(fake, [{"role": "user", "content": ASK, "images": ["iVBO*w0K"]}])
    assert (response.status_code, response.json()) == (
        400, {"error": "illegal base64 data at input byte 4"})
    response = ollama_post(fake, [{"role": "user", "content": ASK,
                                   "images": [b64(b"plain words")]}])
    assert response.status_code == 400
    assert json.loads(response.json()["error"])["error"]["message"] == (
        "Failed to load image or audio file")
