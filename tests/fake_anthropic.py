"""A fake Anthropic Messages API (``POST /v1/messages``) on a real loopback socket.

It checks what the real API checks (x-api-key, anthropic-version, required fields, no unknown
fields, strictly alternating roles starting with "user", no blank content, at most four
cache_control breakpoints and none on an empty block), counts input tokens with tiktoken,
refuses too-long requests with Anthropic's exact 400 bodies, and streams the real SSE event
sequence. Its prompt cache reads back the longest prefix an earlier request marked, up to this
request's last breakpoint, and writes the rest up to it: input_tokens is what is left after,
as the real API counts. An image block counts as Anthropic publishes (scaled to a long edge of
1568 pixels and 1,600 tokens' worth of pixels, then width x height / 750), its token ids taken
from its bytes so the cache sees the same image as the same prefix; the API's refusals of an
image (too large, not what its media_type says) come in its words, and with ``vision`` off a
request with an image is refused outright. Fault switches as in tests.fakeserver. Stdlib,
tiktoken and Pillow only.

    python -m tests.fake_anthropic --port 8766 --limit 4096
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler
from math import isqrt
from typing import Any

from tests import fake_tools as ft
from tests.fakeserver import (
    CHUNK_CHARS,
    FakeServer,
    ImageBytes,
    RecordedRequest,
    SentImage,
    count_tokens,
    decode_image,
    encode,
    fit_reply,
    image_token_ids,
    start_event_stream,
)
from tests.prompt_cache import PromptCache

# Each message's role markers, like a chat template's: ids of their own, so that the prompt is a
# token list its cache can match prefixes of.
ROLE_MARKS = {"user": (-11, -12, -13, -14), "assistant": (-21, -22, -23, -24)}
MAX_BREAKPOINTS = 4  # blocks with cache_control in one request, the API's limit
CACHE_SLOTS = 64  # prefixes kept, a few requests' worth of breakpoints
PING_EVERY = 5  # a ping event after this many text deltas (the real API interleaves them)
ALLOWED_FIELDS = {"model", "messages", "max_tokens", "system", "stream", "stop_sequences",
                  "temperature", "top_p", "top_k", "metadata", "tools", "tool_choice",
                  "thinking", "service_tier"}
# Images: the media types the API takes, the size it scales to (a long edge of 1568 pixels, and
# 1,600 tokens' worth of pixels, about 1.15 megapixels), pixels per token, the largest image it
# takes (5 MB measured on the base64 text, as the API measures it) and the largest side (8000
# pixels; 2000 in a request of more than 20 images).
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_LONG_EDGE = 1568
PIXELS_PER_TOKEN = 750
IMAGE_MAX_PIXELS = 1600 * PIXELS_PER_TOKEN
IMAGE_MAX_BYTES = 5 * 1024 * 1024
IMAGE_MAX_SIDE = 8000
MANY_IMAGES, MANY_IMAGES_MAX_SIDE = 20, 2000


def text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def has_content(content: object) -> bool:
    """Whether a message says anything: words, or a tool or image block (which need none)."""
    return bool(text_of(content).strip()) or any(
        isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result", "image")
        for b in (content if isinstance(content, list) else []))


def image_size(width: int, height: int) -> tuple[int, int]:
    """The size Anthropic reads an image at: scaled down, its aspect kept, until its long edge
    is at most 1568 pixels and it is at most 1,600 tokens' worth of pixels; never up. Each side
    floored exactly (integer arithmetic), so both limits hold."""
    long = max(width, height)
    if long <= IMAGE_LONG_EDGE and width * height <= IMAGE_MAX_PIXELS:
        return width, height
    if IMAGE_LONG_EDGE * IMAGE_LONG_EDGE * width * height <= IMAGE_MAX_PIXELS * long * long:
        # The edge is the tighter limit.
        return (max(1, width * IMAGE_LONG_EDGE // long),
                max(1, height * IMAGE_LONG_EDGE // long))
    # The pixels are: each side times sqrt(max / (w*h)), i.e. sqrt(max * w / h) for the width.
    return (max(1, isqrt(IMAGE_MAX_PIXELS * width // height)),
            max(1, isqrt(IMAGE_MAX_PIXELS * height // width)))


def image_tokens(width: int, height: int) -> int:
    """Anthropic's published count: width x height / 750 at the size it reads the image at."""
    width, height = image_size(width, height)
    return -(-width * height // PIXELS_PER_TOKEN)


def block_image(block: dict) -> ImageBytes | None:
    """The image a base64 image block holds (None: none the fake can read)."""
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    return decode_image(data) if isinstance(data, str) else None


def image_ids(block: dict) -> list[int]:
    """An image block's tokens, ids taken from its bytes (none for one it cannot read: such a
    request is refused before it is counted)."""
    image = block_image(block)
    if image is None or image.sent.media_type is None:
        return []
    return image_token_ids(image, image_tokens(image.sent.width, image.sent.height))


def image_blocks(body: dict) -> list[tuple[str, dict]]:
    """(path as the API names it, block) of every image block in the messages, in prompt
    order: in a message's content and in a tool result's."""
    found: list[tuple[str, dict]] = []
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                found.append((f"messages.{i}.content.{j}", block))
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found += [(f"messages.{i}.content.{j}.tool_result.content.{k}", inner)
                          for k, inner in enumerate(block["content"])
                          if isinstance(inner, dict) and inner.get("type") == "image"]
    return found


def image_problem(path: str, block: dict, many: bool) -> str | None:
    """The API's refusal of one image block, in its words, or None."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        # The API also fetches {"type": "url"} sources; the fake has no network to.
        return f"{path}.image.source: the fake server reads base64 image sources only"
    where = f"{path}.image.source.base64"
    declared, data = source.get("media_type"), source.get("data")
    if declared not in IMAGE_MEDIA_TYPES:
        return (f"{where}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or "
                "'image/webp'")
    if not isinstance(data, str):
        return f"{where}.data: Input should be a valid string"
    if len(data) > IMAGE_MAX_BYTES:
        return f"{where}: image exceeds 5 MB maximum: {len(data)} bytes > {IMAGE_MAX_BYTES} bytes"
    image = decode_image(data)
    if image is None:
        return f"{where}: invalid base64 data"
    if image.sent.media_type is None:
        return "Could not process image"
    if image.sent.media_type != declared:
        return (f"{where}: The image was specified using the {declared} media type, but the "
                f"image appears to be a {image.sent.media_type} image")
    side = MANY_IMAGES_MAX_SIDE if many else IMAGE_MAX_SIDE
    if max(image.sent.width, image.sent.height) > side:
        kind = " for many-image requests" if many else ""
        return (f"{where}.data: At least one of the image dimensions exceed max allowed "
                f"size{kind}: {side} pixels")
    return None


def images_problem(blocks: list[tuple[str, dict]]) -> str | None:
    many = len(blocks) > MANY_IMAGES
    return next((p for path, block in blocks if (p := image_problem(path, block, many))), None)


def sent_images(blocks: list[tuple[str, dict]]) -> list[SentImage]:
    return [image.sent if (image := block_image(block)) else SentImage(None, 0, 0)
            for _, block in blocks]


def block_text(block: dict) -> str:
    """What a block puts before the model: its text, a call's name and input, a result's text."""
    kind = block.get("type", "text")
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {}),
                                                       ensure_ascii=False)
    if kind == "tool_result":
        content = block.get("content")
        return content if isinstance(content, str) else text_of(content)
    text = block.get("text")
    return text if isinstance(text, str) else ""


def blocks_of(content: object) -> list[dict]:
    """Content as blocks: a string is one text block without a breakpoint."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def prompt_of(body: dict) -> tuple[list[int], list[int]]:
    """The input as tokens (the system text, then each message with its overhead; a block
    counted on its own, as breakpoints fall between blocks) and where its cache breakpoints
    fall: the token count up to the end of each block that has cache_control. Tool definitions
    come first, as the API renders them, counted as their JSON text. An image block is its
    image's tokens (image_tokens); a tool result's images follow its text."""
    tools = body.get("tools")
    tokens: list[int] = encode(json.dumps(tools, ensure_ascii=False)) if tools else []
    marks: list[int] = []

    def add(content: object) -> None:
        for block in blocks_of(content):
            tokens.extend(encode(block_text(block)))
            kind = block.get("type")
            if kind == "image":
                tokens.extend(image_ids(block))
            elif kind == "tool_result" and isinstance(block.get("content"), list):
                for inner in block["content"]:
                    if isinstance(inner, dict) and inner.get("type") == "image":
                        tokens.extend(image_ids(inner))
            if block.get("cache_control"):
                marks.append(len(tokens))

    add(body.get("system"))
    for message in body.get("messages", []):
        tokens.extend(ROLE_MARKS.get(message.get("role"), ROLE_MARKS["user"]))
        add(message.get("content"))
    return tokens, marks


def count_input(body: dict) -> int:
    return len(prompt_of(body)[0])


def breakpoint_problem(body: dict) -> str | None:
    """The real API's refusal of the request's cache_control breakpoints, or None."""
    lists = [("system", body.get("system"))] + [
        (f"messages.{m}.content", message.get("content"))
        for m, message in enumerate(body["messages"])]
    marked = [(f"{path}.{i}", block) for path, content in lists if isinstance(content, list)
              for i, block in enumerate(blocks_of(content)) if block.get("cache_control")]
    for path, block in marked:
        if block.get("type", "text") == "text" and not block.get("text"):
            return f"{path}.text: cache_control cannot be set for empty text blocks"
    if len(marked) > MAX_BREAKPOINTS:
        return (f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(marked)}.")
    return None


def no_vision_message(model: object) -> str:
    """A model without vision given an image. Not found verbatim: the API's words for a model
    given a PDF it cannot read ("claude-3-5-haiku-20241022 does not support PDFs."), for
    images."""
    return f"{model} does not support images."


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def overflow_message(limit: int, prompt: int, max_tokens: int) -> str | None:
    """Anthropic checks the prompt alone first, then prompt + max_tokens."""
    if prompt > limit:
        return f"prompt is too long: {prompt} tokens > {limit} maximum"
    if prompt + max_tokens > limit:
        return (f"input length and `max_tokens` exceed context limit: {prompt} + {max_tokens} "
                f"> {limit}, decrease input length or `max_tokens` and try again")
    return None


def invalid_messages(messages: object) -> str | None:
    """The real API's wording for a messages list it refuses, or None."""
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    previous = None
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            return ('messages: Unexpected role "system". The Messages API accepts a top-level '
                    '`system` parameter, not "system" as an input message role.')
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if role == previous:
            return ('messages: roles must alternate between "user" and "assistant", but found '
                    f'multiple "{role}" roles in a row')
        last = i == len(messages) - 1
        if not has_content(message.get("content")) and not (last and role == "assistant"):
            return (f"messages.{i}: all messages must have non-empty content except for the "
                    "optional final assistant message")
        previous = role
    return None


class FakeAnthropic(FakeServer):
    """``faults`` is consumed one entry per valid /v1/messages request:

    ("status", code, headers, body)  answer that (body: str, or JSON-able)
    ("cut", n)                        n text deltas, then close without finishing
    ("malformed",)                    a garbage data: line inside an otherwise good stream
    ("stream_error", n, error_obj)    n text deltas, then ``event: error`` with error_obj; close
    ("delay", seconds)                wait, then answer normally
    ("empty",)                        a reply with no content
    None                              no fault for this request
    """

    def __init__(self, limit: int = 200_000, *, api_key: str | None = None,
                 host: str = "127.0.0.1", port: int = 0, model: str = "claude-fake",
                 vision: bool = True) -> None:
        super().__init__(host=host, port=port)
        self.handler = _Handler
        self.limit = limit
        self.api_key = api_key
        self.model = model
        # False: a model that reads no images (Claude 2, the first Claude 3.5 Haiku); a
        # request with one is refused (no_vision_message).
        self.vision = vision
        self.cache = PromptCache(CACHE_SLOTS)
        # Newer API versions repeat the input counts in message_delta; the documented stream
        # has only output_tokens there.
        self.repeat_usage = False
        self.thinking = ""  # if set, a thinking block (with signature) streams before the text

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"  # as api.anthropic.com: no /v1

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/v1/messages")]

    def default_reply(self, body: dict) -> str:
        """Deterministic: "Reply N: <first words of the last user message>"."""
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        words = " ".join(text_of(users[-1].get("content")).split()[:8])[:60] if users else ""
        return f"Reply {len(self.message_requests)}: {words}"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    protocol_version = "HTTP/1.0"  # a stream ends when we close
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = dict(self.headers.items())
        rec = RecordedRequest(self.path, headers, {})
        fake._record(rec)
        refused = self._refusal(raw, rec)
        if refused is not None:
            rec.status = refused[0]
            self._send(*refused)
            return
        body = rec.body
        fault = fake.take_fault(rec, self._send)
        if fault is False:
            return
        max_tokens = body["max_tokens"]
        too_long = overflow_message(fake.limit, rec.prompt_tokens, max_tokens)
        if too_long is not None:
            rec.overflowed, rec.status = True, 400
            self._send(400, error_body("invalid_request_error", too_long))
            return
        self._use_cache(rec)
        reply = fake.reply_for(rec, fault, ft.anthropic_view(body["messages"]),
                               body["messages"], body, "toolu_")
        reply, cut = fit_reply(reply, max_tokens)
        stop = "max_tokens" if cut else ("tool_use" if rec.tool_calls else "end_turn")
        rec.reply = reply
        rec.completion_tokens = count_tokens(reply + ft.calls_tokens_text(rec.tool_calls))
        if body.get("stream"):
            self._stream(rec, stop, fault)
        else:
            self._send(200, {**self._message(rec, stop), "content": (
                [{"type": "text", "text": reply}] if reply else []) + ft.anthropic_content(
                    rec.tool_calls)})

    def _refusal(self, raw: bytes, rec: RecordedRequest) -> tuple[int, dict] | None:
        """(status, body) for a request the real API would turn away before any work."""
        fake = self.fake
        if not self.path.rstrip("/").endswith("/v1/messages"):
            return 404, error_body("not_found_error", "Not Found")
        key = self.headers.get("x-api-key")
        if fake.api_key is not None and not key:
            return 401, error_body("authentication_error", "x-api-key header is required")
        if fake.api_key is not None and key != fake.api_key:
            return 401, error_body("authentication_error", "invalid x-api-key")
        if not self.headers.get("anthropic-version"):
            return 400, error_body("invalid_request_error", "anthropic-version: header is required")
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            return 400, error_body("invalid_request_error", "There was an issue with the "
                                   "format of your request: the body is not valid JSON")
        if not isinstance(body, dict):
            return 400, error_body("invalid_request_error", "Input should be an object")
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return 400, error_body("invalid_request_error", f"{name}: Field required")
        extra = sorted(set(body) - ALLOWED_FIELDS)
        if extra:
            return 400, error_body("invalid_request_error",
                                   f"{extra[0]}: Extra inputs are not permitted")
        if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
            return 400, error_body("invalid_request_error",
                                   "max_tokens: Input should be greater than or equal to 1")
        wrong = (invalid_messages(body["messages"]) or ft.anthropic_problem(body)
                 or breakpoint_problem(body))
        if wrong:
            return 400, error_body("invalid_request_error", wrong)
        images = image_blocks(body)
        rec.images = sent_images(images)
        if images and not fake.vision:
            return 400, error_body("invalid_request_error", no_vision_message(body["model"]))
        if images and (wrong := images_problem(images)):
            return 400, error_body("invalid_request_error", wrong)
        rec.body, rec.prompt_tokens = body, count_input(body)
        return None

    def _use_cache(self, rec: RecordedRequest) -> None:
        """Read back the longest prefix an earlier request marked, up to this one's last
        breakpoint, and write the rest up to that breakpoint; unmarked input is neither."""
        tokens, marks = prompt_of(rec.body)
        last = max(marks, default=0)
        rec.cached_tokens = self.fake.cache.longest_entry(tokens, last)
        rec.cache_write_tokens = last - rec.cached_tokens
        for mark in marks:
            self.fake.cache.store(tokens[:mark])

    def _input_usage(self, rec: RecordedRequest) -> dict[str, int]:
        read, written = rec.cached_tokens or 0, rec.cache_write_tokens or 0
        return {"input_tokens": rec.prompt_tokens - read - written,
                "cache_creation_input_tokens": written, "cache_read_input_tokens": read}

    def _message(self, rec: RecordedRequest, stop: str | None) -> dict[str, Any]:
        fake = self.fake
        return {"id": f"msg_fake_{len(fake.requests)}", "type": "message", "role": "assistant",
                "model": rec.body.get("model", fake.model), "content": [],
                "stop_reason": stop, "stop_sequence": None,
                "usage": {**self._input_usage(rec),
                          "output_tokens": rec.completion_tokens if stop else 1}}

    def _stream(self, rec: RecordedRequest, stop: str, fault: tuple | None) -> None:
        fake = self.fake
        start_event_stream(self)
        self._event("message_start", {"type": "message_start",
                                      "message": self._message(rec, None)})
        index = 0
        if fake.thinking:
            self._block(index, {"type": "thinking", "thinking": ""}, [
                {"type": "thinking_delta", "thinking": fake.thinking},
                {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}])
            index += 1
        self._event("ping", {"type": "ping"})
        kind = fault[0] if fault else None
        pieces = [rec.reply[i:i + CHUNK_CHARS] for i in range(0, len(rec.reply), CHUNK_CHARS)]
        if pieces:
            self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": {"type": "text", "text": ""}})
        for n, piece in enumerate(pieces):
            if kind in ("cut", "stream_error") and n == fault[1]:
                break
            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": piece}})
            if fake.chunk_delay and not fake._sleep(fake.chunk_delay):
                return
            if kind == "malformed" and n == 0:
                self._write('event: content_block_delta\ndata: {"type": "content_block_delta", '
                            '"delta": {"type": "text_delta", "text": "bro')
            if (n + 1) % PING_EVERY == 0:
                self._event("ping", {"type": "ping"})
        if kind == "cut":
            return  # the connection closes with no message_delta and no message_stop
        if kind == "stream_error":
            self._event("error", fault[2])
            return
        if pieces:
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        for name, data in ft.anthropic_blocks(rec.tool_calls, index, fake.fragments,
                                              ascii_only=fake.ascii_args):
            raw = f"event: {name}\ndata: " + json.dumps(data, ensure_ascii=False)
            ft.write_split(self.wfile, raw.encode("utf-8") + b"\n\n")
        usage = {"output_tokens": rec.completion_tokens}
        if fake.repeat_usage:
            usage = {**self._input_usage(rec), **usage}
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": usage})
        self._event("message_stop", {"type": "message_stop"})

    def _block(self, index: int, start: dict, deltas: list[dict]) -> None:
        self._event("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": start})
        for delta in deltas:
            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": delta})
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    # --- writing -------------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.wfile.write(text.encode("utf-8") + b"\n\n")
        self.wfile.flush()

    def _event(self, name: str, obj: Any) -> None:
        self._write(f"event: {name}\ndata: " + json.dumps(obj, ensure_ascii=False))

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        is_text = isinstance(body, str | bytes)
        data = body if isinstance(body, bytes) else (
            body.encode("utf-8") if is_text else json.dumps(body, ensure_ascii=False).encode())
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if is_text
                         else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_fake_{len(self.fake.requests)}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Anthropic Messages API server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--limit", type=int, default=200_000, help="context window in tokens")
    parser.add_argument("--api-key", default=None, help="require this x-api-key")
    parser.add_argument("--fragments", type=int, default=1,
                        help="stream each tool call's arguments in this many pieces")
    parser.add_argument("--no-vision", action="store_true",
                        help="a model without vision: refuse requests carrying images")
    args = parser.parse_args(argv)
    fake = FakeAnthropic(args.limit, api_key=args.api_key, host=args.host, port=args.port,
                         vision=not args.no_vision)
    fake.start()
    fake.fragments = args.fragments
    fake.run_until_interrupted(
        f"fake Anthropic server, context {args.limit} tokens, at {fake.base_url}")


if __name__ == "__main__":
    main()
