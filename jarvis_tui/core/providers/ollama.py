"""Ollama's native API: ``/api/chat`` streaming NDJSON, ``/api/show`` for the model's window.

Ollama never refuses an over-long prompt: it drops the oldest messages (then cuts tokens) to fit
``num_ctx`` and answers anyway. So this provider sends the window it wants as ``num_ctx`` and
reports ``prompt_eval_count``; the engine compares that with what it sent (truncates_silently).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import httpx

from jarvis_tui.core.calls.tool_args import arguments_or_none
from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatEvent, Completion
from jarvis_tui.core.providers.errors import (
    ProviderError,
    RequestError,
    StreamCut,
    provider_message,
)
from jarvis_tui.core.providers.http import HttpProvider, json_or_none, stream_lines
from jarvis_tui.core.providers.registry import OLLAMA
from jarvis_tui.core.providers.toolcalls import (
    args_text,
    finish_with_calls,
    openai_tools,
    with_ids,
)
from jarvis_tui.core.providers.usage import completion, ollama_usage

OLLAMA_DEFAULT_URL = OLLAMA.base_url

# Ollama allocates the KV cache for the whole num_ctx when it loads the model: running a 128k
# model at its full length can need tens of GB, more than a laptop has. A window detected from
# the model's metadata is capped here; a num_ctx the user set in the Modelfile, or a
# context_window set in our config, is taken as is.
OLLAMA_AUTO_MAX = 32768


def normalize_base_url(base_url: str) -> str:
    """The server root. People paste the OpenAI-compatible ``.../v1`` URL or ``.../api``, or an
    OLLAMA_HOST value without a scheme (``127.0.0.1:11434``); all mean the same server."""
    url = (base_url or "").strip() or OLLAMA_DEFAULT_URL
    if "://" not in url:
        url = "http://" + url
    url = re.sub(r"/(?:v1|api)/*$", "", url.rstrip("/"), flags=re.IGNORECASE)
    return url.rstrip("/")


class OllamaProvider(HttpProvider):
    name = "ollama"
    truncates_silently = True

    def __init__(self, base_url: str = OLLAMA_DEFAULT_URL, api_key: str = "", *,
                 transport: httpx.AsyncBaseTransport | None = None,
                 **timeouts: float) -> None:
        # Ollama itself has no keys; one matters when it sits behind an authenticating proxy.
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(normalize_base_url(base_url), api_key, headers=auth,
                         transport=transport, **timeouts)

    @property
    def _chat_url(self) -> str:
        return f"{self.base_url}/api/chat"

    def _payload(self, messages: list[dict], model: str, max_tokens: int,
                 context_window: int | None, *, stream: bool,
                 tools: list[dict] | None = None) -> dict[str, Any]:
        options: dict[str, Any] = {"num_predict": max_tokens}
        if context_window:
            # Without it Ollama runs its own default (2k-4k on many versions) and cuts silently.
            options["num_ctx"] = context_window
        payload: dict[str, Any] = {"model": model, "messages": to_ollama_messages(messages),
                                   "stream": stream, "options": options}
        if tools:
            payload["tools"] = openai_tools(tools)
        return payload

    # --- streaming -----------------------------------------------------------------------------

    async def stream_chat(self, messages: list[dict], *, model: str, max_tokens: int,
                          context_window: int | None = None, tools: list[dict] | None = None,
                          ) -> AsyncIterator[ChatEvent]:
        payload = self._payload(messages, model, max_tokens, context_window, stream=True,
                                tools=tools)
        async for event in self._stream(
                self._chat_url, payload, "application/x-ndjson",
                lambda status, body, headers: self._error(status, body, headers, model),
                lambda resp: self._ndjson_events(resp, model)):
            yield event

    async def _ndjson_events(self, resp: httpx.Response, model: str
                             ) -> AsyncIterator[ChatEvent]:
        final: dict[str, Any] | None = None
        calls: list[tuple[str, str, str]] = []
        async for line in stream_lines(resp):
            line = line.strip()
            if not line:
                continue
            obj = json_or_none(line)
            if obj is None:
                continue
            if obj.get("error"):
                # Once the 200 is out, Ollama reports a failure as one last {"error": ...} line.
                raise self._scrub(self._error(None, line, None, model))
            message = obj.get("message")
            # message.thinking (reasoning models) is not the reply; only content is.
            text = message.get("content") if isinstance(message, dict) else None
            if isinstance(text, str) and text:
                yield ChatDelta(text)
            # Ollama sends calls whole, usually in a line of their own just before the last.
            calls += _calls_of(message)
            if obj.get("done") is True:
                final = obj
                break
        if final is None:
            raise StreamCut(f"The stream from {self._where} ended before the reply was finished.")
        whole = with_ids(calls)
        for call in whole:
            yield call
        usage = ollama_usage(final)
        if usage is not None:
            yield usage
        yield ChatDone(finish_with_calls(_finish(final.get("done_reason")), whole))

    # --- one-shot ------------------------------------------------------------------------------

    async def complete(self, messages: list[dict], *, model: str, max_tokens: int,
                       context_window: int | None = None,
                       tools: list[dict] | None = None) -> Completion:
        payload = self._payload(messages, model, max_tokens, context_window, stream=False,
                                tools=tools)
        body = await self._post(
            self._chat_url, payload,
            lambda status, text, headers: self._error(status, text, headers, model))
        data = self._json_object(body)
        if data.get("error"):
            raise self._scrub(self._error(None, body, None, model))
        message = data.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        calls = with_ids(_calls_of(message))
        whole = completion(text if isinstance(text, str) else "", ollama_usage(data),
                           finish_with_calls(_finish(data.get("done_reason")), calls))
        return replace(whole, tool_calls=tuple(calls)) if calls else whole

    # --- discovery -----------------------------------------------------------------------------

    async def detect_context_window(self, model: str) -> int | None:
        # "name" is what Ollama before 0.3 read; newer ones read "model" and accept both.
        data = await self._post_json(f"{self.base_url}/api/show", {"model": model, "name": model})
        return context_window_from_show(data) if isinstance(data, dict) else None

    async def _post_json(self, url: str, payload: dict[str, Any]) -> object | None:
        """POST for discovery: any failure means "the server does not say", never an error."""
        try:
            resp = await self._client.post(url, json=payload,
                                           timeout=min(self.connect_timeout, 5.0))
            return resp.json() if resp.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    # --- errors --------------------------------------------------------------------------------

    def _error(self, status: int | None, body: str, headers: Mapping[str, str] | None,
               model: str) -> ProviderError:
        said = provider_message(body)
        low = said.lower()
        label = f" ({status})" if status else ""
        if status in (404, None) and "model" in low and "not found" in low:
            # Old: model "x" not found, try pulling it first. New: model 'x' not found.
            return RequestError(
                f"The model {model!r} is not on the Ollama server at {self._where}{label}. "
                f"Run `ollama pull {model}` there, or pick one `ollama list` shows.",
                status=status, body=body)
        if "requires more system memory" in low:
            # Retrying cannot help; a smaller num_ctx (context window) or model can.
            return RequestError(
                f"Ollama cannot load {model!r}{label}: {said} Try a smaller context window or "
                "a smaller model.", status=status, body=body)
        return self._classify(status, body, headers)

    def _network_error(self, exc: Exception) -> ProviderError:
        err = super()._network_error(exc)
        if isinstance(exc, httpx.ConnectError) and "connection refused" in err.message:
            err.message += " Start it with `ollama serve`."
            err.args = (err.message,)
        return err


def context_window_from_show(data: Mapping[str, Any]) -> int | None:
    """The window from an ``/api/show`` answer: the Modelfile's num_ctx if set (the user chose
    it), else the model's trained length capped at OLLAMA_AUTO_MAX."""
    params = data.get("parameters")
    if isinstance(params, str):
        m = re.search(r"^\s*num_ctx\s+(\d+)\s*$", params, re.MULTILINE)
        if m and int(m[1]) > 0:
            return int(m[1])
    info = data.get("model_info")
    if not isinstance(info, dict):
        return None
    arch = info.get("general.architecture")
    length = info.get(f"{arch}.context_length") if isinstance(arch, str) else None
    if not isinstance(length, int):
        length = next((v for k, v in info.items()
                       if k.endswith(".context_length") and isinstance(v, int)), None)
    if not isinstance(length, int) or isinstance(length, bool) or length <= 0:
        return None
    return min(length, OLLAMA_AUTO_MAX)


def to_ollama_messages(messages: list[dict]) -> list[dict]:
    """OpenAI-shaped messages as Ollama's Go decoder takes them: content must be a string and
    tool-call arguments an object (a JSON string or a content list is a 400 there)."""
    call_names: dict[str, str] = {}
    out: list[dict] = []
    for message in messages:
        msg = dict(message)
        content = msg.get("content")
        if isinstance(content, list):
            msg["content"] = "\n".join(p["text"] for p in content
                                       if isinstance(p, dict) and isinstance(p.get("text"), str))
        elif content is None:
            msg["content"] = ""
        if "images" in msg:  # Ollama's own shape: base64 strings beside the text
            msg["images"] = [image["data"] for image in msg["images"]]
        calls = msg.get("tool_calls")
        if isinstance(calls, list):
            msg["tool_calls"] = [_tool_call(c, call_names) for c in calls if isinstance(c, dict)]
        if msg.get("role") == "tool" and "tool_name" not in msg:
            # Ollama's templates name the tool whose result this is; OpenAI only gives the id.
            name = call_names.get(str(msg.get("tool_call_id")))
            if name:
                msg["tool_name"] = name
        out.append(msg)
    return out


def _tool_call(call: dict, names: dict[str, str]) -> dict:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    args = fn.get("arguments")
    if isinstance(args, str):
        parsed = arguments_or_none(args)
        # Unparseable arguments are kept as text rather than dropped.
        args = parsed if parsed is not None else {"arguments": args}
    elif not isinstance(args, dict):
        args = {}
    if call.get("id") and isinstance(fn.get("name"), str):
        names[str(call["id"])] = fn["name"]
    return {**call, "function": {**fn, "arguments": args}}


def _calls_of(message: object) -> list[tuple[str, str, str]]:
    """(id, name, arguments as JSON text) of a message's tool_calls; Ollama before 0.12
    gives no ids, and its arguments are an object."""
    raw = message.get("tool_calls") if isinstance(message, dict) else None
    out = []
    for call in raw if isinstance(raw, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
            out.append((str(call.get("id") or ""), fn["name"], args_text(fn.get("arguments"))))
    return out


def _finish(reason: object) -> str:
    # Ollama before 0.1.3x sent done: true with no done_reason; it finished, so "stop".
    return str(reason) if isinstance(reason, str) and reason else "stop"
