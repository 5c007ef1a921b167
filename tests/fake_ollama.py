"""A fake Ollama server (native API) on a real loopback socket.

Like the real one it never refuses an over-long prompt: it drops the oldest non-system messages
until the prompt fits ``num_ctx`` (keeping the last message and tool results with their call, as
Ollama's chatPrompt does), cuts tokens if even that is too long, answers anyway, and reports in
``prompt_eval_count`` only what it evaluated. A message's "images" count as a vision model
reads them: resized to at most 1024 pixels a side, one token per 28 x 28 patch. With ``vision``
off (a text-only model) a request whose kept messages carry an image is refused as Ollama
relays llama-server's refusal. Stdlib, tests.fakeserver's tokenizer and Pillow.

    python -m tests.fake_ollama --port 11435 --num-ctx 2048 --context-length 8192
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests import fake_tools as ft
from tests.fakeserver import (
    CHUNK_CHARS,
    FakeServer,
    SentImage,
    count_tokens,
    decode_image,
    fit_reply,
)

MESSAGE_OVERHEAD = 4  # a chat template's role header and end-of-turn marker
PRIMING = 3  # BOS and the open assistant header a template ends with
IMAGE_MAX_SIDE = 1024  # a vision model's images are resized to fit this square
PATCH = 28  # pixels a side of the patch each image token stands for
BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
# llama-server's words, which Ollama relays: to a text-only model given an image, and to a vision
# model given bytes that are no image it can decode.
NO_VISION = "Multimodal data provided, but model does not support multimodal requests."
UNREADABLE = "Failed to load image or audio file"


def image_size(width: int, height: int) -> tuple[int, int]:
    """At most 1024 pixels a side, the aspect kept; never up. Each side floored exactly."""
    long = max(width, height)
    if long <= IMAGE_MAX_SIDE:
        return width, height
    return max(1, width * IMAGE_MAX_SIDE // long), max(1, height * IMAGE_MAX_SIDE // long)


def image_tokens(width: int, height: int) -> int:
    """One token per 28 x 28 patch of the resized image, a part patch counting whole."""
    width, height = image_size(width, height)
    return (-(-width // PATCH)) * (-(-height // PATCH))


def message_image_tokens(message: dict) -> int:
    """A message's images' tokens (an unreadable one counts none: the request is refused)."""
    total = 0
    for data in message.get("images") or []:
        image = decode_image(data) if isinstance(data, str) else None
        if image is not None and image.sent.media_type is not None:
            total += image_tokens(image.sent.width, image.sent.height)
    return total


def count_ollama_prompt(messages: list[dict]) -> int:
    total = PRIMING
    for message in messages:
        total += MESSAGE_OVERHEAD + count_tokens(str(message.get("content") or ""))
        if message.get("tool_calls"):
            total += count_tokens(json.dumps(message["tool_calls"], ensure_ascii=False))
        if message.get("images"):
            total += message_image_tokens(message)
    return total


def sent_images(messages: list[dict]) -> list[SentImage]:
    """Every image of every message, in order, as received."""
    found = []
    for message in messages:
        for data in message.get("images") or []:
            image = decode_image(data) if isinstance(data, str) else None
            found.append(image.sent if image else SentImage(None, 0, 0))
    return found


def llama_server_error(message: str) -> dict[str, str]:
    """Ollama's body for an error llama-server answered: llama-server's whole JSON body, as
    text, under "error" (Ollama's statusErrorMessage passes the body on as it came)."""
    inner = {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
    return {"error": json.dumps(inner, separators=(",", ":"))}


def base64_problem(data: str) -> str | None:
    """Go's encoding/json decoding a string into []byte (an image): its error, or None. The
    offset is the first byte Go's decoder would stop at for a bad character, else where the
    unfinished last quantum starts."""
    raw = data.encode("utf-8")
    body = raw.rstrip(b"=")
    for n, byte in enumerate(body):
        if byte not in BASE64 and byte not in b"\r\n":
            return f"illegal base64 data at input byte {n}"
    if len(raw) % 4 or len(raw) - len(body) > 2:
        return f"illegal base64 data at input byte {len(raw) - len(raw) % 4 or len(raw)}"
    return None


def _tool_block_start(messages: list[dict], i: int) -> int:
    """Never start the kept part on a tool result whose assistant call would be dropped."""
    if i <= 0 or i >= len(messages) or messages[i].get("role") != "tool":
        return i
    start = i
    while start > 0 and messages[start - 1].get("role") == "tool":
        start -= 1
    if start > 0 and messages[start - 1].get("role") == "assistant" and \
            messages[start - 1].get("tool_calls"):
        return start - 1
    return i


def count_tools(tools: object) -> int:
    """Tool definitions, which the template renders into the prompt, as their JSON text."""
    return count_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0


def fit_messages(messages: list[dict], num_ctx: int, tools: object = None
                 ) -> tuple[list[dict], int]:
    """(kept messages, their tokens), as Ollama's chatPrompt: drop from the front, keep system
    messages and always the last message; the tools are rendered whatever is dropped."""
    extra = count_tools(tools)
    for i in range(len(messages)):
        start = _tool_block_start(messages, i)
        kept = [m for m in messages[:start] if m.get("role") == "system"] + messages[start:]
        tokens = count_ollama_prompt(kept) + extra
        if tokens <= num_ctx or i == len(messages) - 1:
            return kept, tokens
    return [], count_ollama_prompt([]) + extra


@dataclass
class OllamaRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    num_ctx: int = 0  # the window this request ran with
    sent_tokens: int = 0  # the prompt as sent
    evaluated: int = 0  # what the model saw: prompt_eval_count
    truncated: bool = False
    kept: list[dict] = field(default_factory=list)  # the messages that survived
    completion_tokens: int = 0
    status: int = 200
    fault: tuple | None = None
    reply: str = ""
    tool_calls: list = field(default_factory=list)  # the FakeCalls the reply asked for
    images: list[SentImage] = field(default_factory=list)  # the images it carried, in order


class FakeOllama(FakeServer):
    """``faults`` is consumed one entry per /api/chat request:

    ("status", code, headers, body)  answer that (body: str, or JSON-able)
    ("cut", n)                        n content lines, then close without a done line
    ("malformed",)                    a garbage line inside an otherwise good stream
    ("stream_error", n, message)      n content lines, then {"error": message} and close
    ("delay", seconds)                wait, then answer normally
    ("empty",)                        a reply with no content
    None                              no fault for this request

    ``reply_fn(body)`` gets the request with "messages" replaced by the ones that survived
    truncation: a model can only answer from what it saw.
    """

    def __init__(self, default_num_ctx: int = 2048, context_length: int = 8192,
                 models: tuple[str, ...] = ("llama3.2",), *, host: str = "127.0.0.1",
                 port: int = 0, modelfile_num_ctx: int | None = None,
                 vision: bool = True) -> None:
        super().__init__(host=host, port=port)
        # False: text-only models, refusing a chat whose kept messages carry images (in
        # llama-server's words) and without "vision" in /api/show's capabilities.
        self.vision = vision
        self.handler = _Handler
        self.default_num_ctx = default_num_ctx
        self.context_length = context_length
        self.models = models
        self.modelfile_num_ctx = modelfile_num_ctx  # PARAMETER num_ctx in the Modelfile
        self.thinking = ""  # streamed as message.thinking before the reply, like qwen3
        self.show_override: tuple[int, Any] | None = None  # (status, body) for /api/show
        # Where a streamed reply's calls go: a line of their own before the last ("line"),
        # the last line itself ("final"), or a line for each call ("each").
        self.tool_calls_in = "line"
        # Models without the "tools" capability (gemma3, for one): a chat offering tools is
        # refused, in Ollama's words, and /api/show does not list the capability.
        self.without_tools: set[str] = set()

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def chat_requests(self) -> list[OllamaRequest]:
        return [r for r in self.requests if r.path == "/api/chat"]

    # --- behaviour -----------------------------------------------------------------------------

    def has_model(self, name: str) -> bool:
        return name in self.models or name.removesuffix(":latest") in self.models

    def default_reply(self, body: dict) -> str:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        text = str(users[-1].get("content") or "") if users else ""
        return f"Reply {len(self.chat_requests)}: {' '.join(text.split()[:8])[:60]}"

    def parameters_text(self) -> str:
        # Ollama pads names to 30 columns; stop tokens are there for nearly every model.
        lines = [f"{'stop':<30} \"<|eot_id|>\""]
        if self.modelfile_num_ctx is not None:
            lines.insert(0, f"{'num_ctx':<30} {self.modelfile_num_ctx}")
        return "\n".join(lines)


def _bad_shape(messages: Any) -> str | None:
    """What Ollama's Go JSON decoder would reject, in its words."""
    if not isinstance(messages, list):
        return "json: cannot unmarshal into Go struct field ChatRequest.messages"
    for m in messages:
        if not isinstance(m, dict):
            return "json: cannot unmarshal into Go struct field ChatRequest.messages"
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            kind = "array" if isinstance(content, list) else "object"
            return (f"json: cannot unmarshal {kind} into Go struct field "
                    "Message.messages.content of type string")
        for call in m.get("tool_calls") or []:
            args = (call.get("function") or {}).get("arguments")
            if args is not None and not isinstance(args, dict):
                return ("json: cannot unmarshal string into Go value of type "
                        "api.ToolCallFunctionArguments")
        for data in m.get("images") or []:
            if not isinstance(data, str):
                return ("json: cannot unmarshal into Go struct field Message.messages.images "
                        "of type []uint8")
            if problem := base64_problem(data):
                return problem
    return None


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOllama
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when we close
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake = self.fake
        fake._record(OllamaRequest(self.path, dict(self.headers.items()), {}))
        if self.path == "/":
            self._send(200, "Ollama is running")
        elif self.path == "/api/version":
            self._send(200, {"version": "0.0.0-fake"})
        elif self.path == "/api/tags":
            self._send(200, {"models": [
                {"name": f"{m}:latest", "model": f"{m}:latest", "size": 2_019_393_189,
                 "details": {"family": "llama", "parameter_size": "3.2B",
                             "quantization_level": "Q4_K_M"}} for m in fake.models]})
        else:
            self._send(404, "404 page not found")

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = dict(self.headers.items())
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            fake._record(OllamaRequest(self.path, headers, {}, status=400))
            self._send(400, {"error": str(exc)})
            return
        if self.path == "/api/show":
            self._show(OllamaRequest(self.path, headers, body), body)
        elif self.path == "/api/chat":
            self._chat(OllamaRequest(self.path, headers, body), body)
        else:
            fake._record(OllamaRequest(self.path, headers, body, status=404))
            self._send(404, "404 page not found")

    def _show(self, rec: OllamaRequest, body: dict) -> None:
        fake = self.fake
        fake._record(rec)
        name = str(body.get("model") or body.get("name") or "")
        if fake.show_override is not None:
            rec.status = fake.show_override[0]
            self._send(*fake.show_override)
        elif not fake.has_model(name):
            rec.status = 404
            self._send(404, {"error": f"model '{name}' not found"})
        else:
            self._send(200, {
                "modelfile": f"FROM {name}\n", "parameters": fake.parameters_text(),
                "template": "{{ .Prompt }}", "details": {"family": "llama", "format": "gguf"},
                "model_info": {"general.architecture": "llama",
                               "general.parameter_count": 3_212_749_888,
                               "llama.context_length": fake.context_length,
                               "llama.embedding_length": 3072},
                "capabilities": ["completion"] + ([] if self._no_tools(name) else ["tools"])
                + (["vision"] if fake.vision else [])})

    def _no_tools(self, model: str) -> bool:
        return model.removesuffix(":latest") in self.fake.without_tools

    def _chat(self, rec: OllamaRequest, body: dict) -> None:
        fake = self.fake
        fake._record(rec)
        fault = fake.take_fault(rec, self._send)
        if fault is False:
            return
        model = str(body.get("model") or "")
        if not fake.has_model(model):
            rec.status = 404
            self._send(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        if body.get("tools") and self._no_tools(model):
            rec.status = 400
            name = model if ":" in model else f"{model}:latest"
            self._send(400, {"error": f"registry.ollama.ai/library/{name} does not support "
                                      "tools"})
            return
        messages = body.get("messages", [])
        bad = _bad_shape(messages)
        if bad:
            rec.status = 400
            self._send(400, {"error": bad})
            return
        rec.images = sent_images(messages)
        options = body.get("options") or {}
        # Ollama runs a model with at most its trained context length: a larger num_ctx is
        # lowered (with a warning in the server log, none to the client).
        rec.num_ctx = min(int(options.get("num_ctx") or fake.default_num_ctx),
                          fake.context_length)
        rec.sent_tokens = count_ollama_prompt(messages) + count_tools(body.get("tools"))
        rec.kept, tokens = fit_messages(messages, rec.num_ctx, body.get("tools"))
        # Past whole messages, the runner cuts tokens too: it never evaluates more than num_ctx.
        rec.evaluated = min(tokens, rec.num_ctx)
        rec.truncated = rec.evaluated < rec.sent_tokens
        # Only the images of the messages kept go to the model, and so only they can be refused.
        kept_images = sent_images(rec.kept)
        if kept_images and (not fake.vision or any(i.media_type is None for i in kept_images)):
            rec.status = 400
            self._send(400, llama_server_error(NO_VISION if not fake.vision else UNREADABLE))
            return
        seen = {**body, "messages": rec.kept}
        reply = fake.reply_for(rec, fault, ft.openai_view(rec.kept), rec.kept, seen, "call_")
        reply, cut = fit_reply(reply, int(options.get("num_predict") or -1))
        finish = "length" if cut else "stop"  # Ollama says stop for a reply with calls too
        rec.reply = reply
        rec.completion_tokens = count_tokens(reply + ft.calls_tokens_text(rec.tool_calls))
        final = {"model": model, "created_at": _now(),
                 "message": {"role": "assistant", "content": ""}, "done": True,
                 "done_reason": finish, "total_duration": 1_000_000, "load_duration": 1000,
                 "prompt_eval_count": rec.evaluated, "prompt_eval_duration": 1000,
                 "eval_count": rec.completion_tokens, "eval_duration": 1000}
        if body.get("stream") is False:
            if fault and fault[0] == "stream_error":
                rec.status = 500
                self._send(500, {"error": fault[2]})
            else:
                message: dict[str, Any] = {"role": "assistant", "content": reply}
                if rec.tool_calls:
                    message["tool_calls"] = ft.ollama_calls(rec.tool_calls)
                self._send(200, {**final, "message": message})
            return
        self._stream(model, rec, reply, final, fault)

    def _stream(self, model: str, rec: OllamaRequest, reply: str, final: dict,
                fault: tuple | None) -> None:
        fake = self.fake
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()

        def piece(**message: str) -> dict:
            return {"model": model, "created_at": _now(),
                    "message": {"role": "assistant", "content": "", **message}, "done": False}

        for n in range(0, len(fake.thinking), CHUNK_CHARS):
            self._line(piece(thinking=fake.thinking[n:n + CHUNK_CHARS]))
        pieces = [reply[i:i + CHUNK_CHARS] for i in range(0, len(reply), CHUNK_CHARS)]
        kind = fault[0] if fault else None
        for n, text in enumerate(pieces):
            if kind in ("cut", "stream_error") and n == fault[1]:
                break
            self._line(piece(content=text))
            if fake.chunk_delay and not fake._sleep(fake.chunk_delay):
                return
            if kind == "malformed" and n == 0:
                self._raw(b'{"message": {"role": "assistant", "content": "bro\n')
        if kind == "cut":
            return  # the connection closes with no done line
        if kind == "stream_error":
            self._line({"error": fault[2]})
            return
        calls = ft.ollama_calls(rec.tool_calls)
        if calls and fake.tool_calls_in == "final":
            final = {**final, "message": {**final["message"], "tool_calls": calls}}
        elif calls:
            groups = [[c] for c in calls] if fake.tool_calls_in == "each" else [calls]
            for group in groups:
                line = {**piece(), "message": {"role": "assistant", "content": "",
                                               "tool_calls": group}}
                ft.write_split(self.wfile, ft.dumps(line).encode() + b"\n")
        self._line(final)

    # --- writing -------------------------------------------------------------------------------

    def _raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def _line(self, obj: Any) -> None:
        self._raw(ft.dumps(obj).encode("utf-8") + b"\n")

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        is_text = isinstance(body, str | bytes)
        data = body if isinstance(body, bytes) else (
            body.encode("utf-8") if is_text else ft.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type",
                         "text/plain; charset=utf-8" if is_text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self._raw(data)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Ollama server (native API).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11435)
    parser.add_argument("--num-ctx", type=int, default=2048,
                        help="window when a request sends no options.num_ctx")
    parser.add_argument("--context-length", type=int, default=8192,
                        help="the model's trained length, as /api/show reports it")
    parser.add_argument("--modelfile-num-ctx", type=int, default=None)
    parser.add_argument("--model", action="append", dest="models",
                        help="a model name it has (repeatable; default llama3.2)")
    parser.add_argument("--no-vision", action="store_true",
                        help="text-only models: refuse chats carrying images")
    args = parser.parse_args(argv)
    fake = FakeOllama(args.num_ctx, args.context_length, tuple(args.models or ("llama3.2",)),
                      host=args.host, port=args.port,
                      modelfile_num_ctx=args.modelfile_num_ctx,
                      vision=not args.no_vision).start()
    fake.run_until_interrupted(
        f"fake Ollama at {fake.base_url}, models {', '.join(fake.models)}, default num_ctx "
        f"{fake.default_num_ctx}")


if __name__ == "__main__":
    main()
