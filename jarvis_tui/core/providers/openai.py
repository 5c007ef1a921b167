"""OpenAI-compatible ``/chat/completions`` over httpx, streaming with SSE.

Speaks to OpenAI, llama.cpp server, vLLM, LM Studio, OpenRouter and Ollama's ``/v1``. Every
failure leaves here as a ProviderError subclass with one clear line, never an httpx traceback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx

from jarvis_tui.core.calls.tool_args import Unreadable
from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatEvent, ChatUsage, Completion
from jarvis_tui.core.providers.errors import (
    ContextOverflow,
    NetworkError,
    ProviderError,
    StreamCut,
)
from jarvis_tui.core.providers.http import HttpProvider, json_or_none, stream_lines
from jarvis_tui.core.providers.text_calls import TextCalls, completion_calls
from jarvis_tui.core.providers.toolcalls import (
    OpenAICalls,
    finish_with_calls,
    openai_message_calls,
    openai_tools,
)
from jarvis_tui.core.providers.usage import completion, openai_usage


class OpenAIProvider(HttpProvider):
    name = "openai"

    def __init__(self, base_url: str, api_key: str = "", *,
                 extra_headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 text_tool_calls: bool = False, **timeouts: float) -> None:
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(base_url, api_key, headers={**auth, **(extra_headers or {})},
                         transport=transport, **timeouts)
        # Some servers and proxies reject stream_options; once seen, stop sending it.
        self._send_stream_options = True
        # llama-cpp-python's server streams no usage but counts tokens at /extras/tokenize/count;
        # None = not tried yet, False = this server has no such endpoint.
        self._can_count: bool | None = None
        # Sampling for one-shot requests (summaries) to the bundled model; none for others.
        self.complete_sampling: dict[str, float] = {}
        # The bundled local model's server (llama-cpp-python with the GGUF's own template) hands
        # back the calls the model writes as plain content: read them from the text
        # (text_calls.py), and never send it a null content, which it answers with a 500.
        self.text_tool_calls = text_tool_calls

    @property
    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    async def detect_context_window(self, model: str) -> int | None:
        """llama.cpp says its per-slot n_ctx at /props; vLLM says max_model_len at /v1/models."""
        root = self.base_url.removesuffix("/v1")
        props = await self._get_json(f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else props.get("n_ctx")
            if isinstance(n_ctx, int) and n_ctx > 0:
                return n_ctx
        models = await self._get_json(f"{self.base_url}/models")
        data = models.get("data") if isinstance(models, dict) else None
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and entry.get("id") == model:
                size = entry.get("max_model_len")
                if isinstance(size, int) and size > 0:
                    return size
        return None

    # --- streaming -----------------------------------------------------------------------------

    async def stream_chat(self, messages: list[dict], *, model: str, max_tokens: int,
                          context_window: int | None = None, tools: list[dict] | None = None,
                          ) -> AsyncIterator[ChatEvent]:
        messages = self._outgoing(messages)
        payload: dict[str, Any] = {"model": model, "messages": messages,
                                   "max_tokens": max_tokens, "stream": True}
        if tools:
            payload["tools"] = openai_tools(tools)
        for _ in range(2):
            if self._send_stream_options:
                payload["stream_options"] = {"include_usage": True}
            else:
                payload.pop("stream_options", None)
            reply: list[str] = []
            usage_seen = any_event = False
            events = self._stream(
                self._url, payload, "text/event-stream", self._status_error,
                lambda resp: self._sse_or_whole(
                    resp, self._sse_events, lambda body: self._completion(body).events()))
            held = TextCalls(_names(tools)) if self.text_tool_calls and tools else None
            if held is not None:
                events = held.events(events)
            try:
                async for event in events:
                    any_event = True
                    if isinstance(event, ChatDelta):
                        reply.append(event.text)
                    elif isinstance(event, ChatUsage):
                        usage_seen = True
                    elif isinstance(event, ChatDone) and not usage_seen:
                        # Without usage, the gauge could never be calibrated to this model.
                        # A call read from the text was written by the model all the same.
                        written = held.written if held is not None else reply
                        counted = await self._server_count(messages, "".join(written))
                        if counted is not None:
                            yield counted
                    yield event
                return
            except _StreamOptionsRejected:
                continue  # once: the flag is off now
            except StreamCut:
                if not any_event:
                    await self._refusal_behind_empty_stream(payload)
                raise

    async def _refusal_behind_empty_stream(self, payload: dict[str, Any]) -> None:
        """llama-cpp-python answers a streamed request that overflows its window with 200, then
        drops the connection: its refusal, with the numbers, only comes unstreamed. So a stream
        that ended before its first event is asked again once, unstreamed and for one token:
        a ContextOverflow from that is raised; anything else leaves the cut stream as it was."""
        probe = {k: v for k, v in payload.items() if k != "stream_options"}
        probe.update(stream=False, max_tokens=1)
        for _ in range(3):
            try:
                await self._post(self._url, probe, self._classify)
            except ContextOverflow:
                raise
            except NetworkError:
                # The pool handed out a keep-alive connection the server was closing (the
                # broken stream's own, back in the pool before the server's FIN arrived).
                continue
            except ProviderError:
                pass
            return

    async def _server_count(self, messages: list[dict], reply: str) -> ChatUsage | None:
        """The prompt and reply counted by the server's own tokenizer, where it offers that
        (llama-cpp-python). Exact for its chatml format; other formats differ by their few
        template tokens per message. Any failure means "not known", never an error."""
        if self._can_count is False:
            return None
        url = f"{self.base_url.removesuffix('/v1')}/extras/tokenize/count"
        counts = []
        try:
            for text in [chatml_prompt(messages)] + ([reply] if reply else []):
                resp = await self._client.post(url, json={"input": text},
                                               timeout=min(self.connect_timeout, 5.0))
                count = (json_or_none(resp.text) or {}).get("count")
                if resp.status_code != 200 or not isinstance(count, int):
                    self._can_count = False
                    return None
                counts.append(count)
        except (httpx.HTTPError, Unreadable):
            return None
        self._can_count = True
        # The tokenizer puts a BOS before the reply text that the reply itself does not have.
        return ChatUsage(counts[0], max(0, counts[1] - 1) if reply else 0)

    def _status_error(self, status: int, body: str, headers: httpx.Headers) -> ProviderError:
        if self._send_stream_options and status in (400, 422) and "stream_options" in body:
            # Some servers and proxies reject stream_options: ask again without it.
            self._send_stream_options = False
            return _StreamOptionsRejected(body)
        return self._classify(status, body, headers)

    async def _sse_events(self, resp: httpx.Response) -> AsyncIterator[ChatEvent]:
        finish: str | None = None
        usage: ChatUsage | None = None
        calls = OpenAICalls()
        done = False
        async for line in stream_lines(resp):
            if not line.startswith("data:"):
                continue  # blank separators, ": comments", event:/id:/retry: fields
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                break
            chunk = json_or_none(data)
            if chunk is None:
                continue
            if chunk.get("error"):
                raise self._scrub(self._stream_error(chunk, data))
            choices = chunk.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                choice = choices[0]
                delta = choice.get("delta") or {}
                # reasoning_content (thinking) is not the reply; it is dropped for now.
                text = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(text, str) and text:
                    yield ChatDelta(text)
                if isinstance(delta, dict):
                    calls.feed(delta.get("tool_calls"))
                    calls.feed_function_call(delta.get("function_call"))
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
            # OpenAI sends usage in a last chunk with no choices; llama.cpp in the finish chunk
            # or that last one, with its timings (sent even when usage was not asked for).
            usage = openai_usage(chunk.get("usage"), chunk.get("timings")) or usage
        if not done and finish is None:
            raise StreamCut(f"The stream from {self._where} ended before the reply was finished.")
        whole = calls.calls()
        for call in whole:
            yield call
        if usage is not None:
            yield usage
        yield ChatDone(finish_with_calls(finish, whole))

    def _stream_error(self, chunk: dict[str, Any], raw: str) -> ProviderError:
        err = chunk.get("error")
        code = err.get("code") if isinstance(err, dict) else None
        status = int(code) if isinstance(code, int | str) and str(code).isdigit() else None
        if status is not None and not 400 <= status <= 599:
            status = None
        return self._classify(status, raw)

    # --- one-shot ------------------------------------------------------------------------------

    async def complete(self, messages: list[dict], *, model: str, max_tokens: int,
                       context_window: int | None = None,
                       tools: list[dict] | None = None) -> Completion:
        payload: dict[str, Any] = {"model": model, "messages": self._outgoing(messages),
                                   "max_tokens": max_tokens, "stream": False,
                                   **self.complete_sampling}
        if tools:
            payload["tools"] = openai_tools(tools)
        whole = self._completion(await self._post(self._url, payload, self._classify))
        if self.text_tool_calls and tools:
            return completion_calls(whole, _names(tools))
        return whole

    def _outgoing(self, messages: list[dict]) -> list[dict]:
        """The messages as this server takes them: images as content parts; and for
        llama-cpp-python, whose request model wants an assistant's content to be a string,
        calls or not (a null is a 500 naming every message type), no null content."""
        messages = [with_image_parts(m) if "images" in m else m for m in messages]
        if not self.text_tool_calls:
            return messages
        return [{**m, "content": ""} if m.get("role") == "assistant" and m.get("content") is None
                else m for m in messages]

    def _completion(self, body: str) -> Completion:
        data = self._json_object(body)
        if data.get("error"):
            raise self._scrub(self._stream_error(data, body))
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else {}
        message = choice.get("message") if isinstance(choice, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        calls = openai_message_calls(message)
        whole = completion(text if isinstance(text, str) else "",
                           openai_usage(data.get("usage"), data.get("timings")),
                           finish_with_calls(str(finish) if finish else None, calls))
        return replace(whole, tool_calls=tuple(calls)) if calls else whole


def _names(tools: list[dict] | None) -> set[str]:
    return {str(t.get("name")) for t in tools or [] if isinstance(t, dict) and t.get("name")}


def with_image_parts(message: dict) -> dict:
    """A message carrying "images" (Message.to_wire) as chat completions takes it: the images
    as image_url parts with data URLs, first (models read a picture best before the question
    about it), then the text."""
    out = {k: v for k, v in message.items() if k != "images"}
    parts: list[dict[str, Any]] = [
        {"type": "image_url",
         "image_url": {"url": f"data:{image['media_type']};base64,{image['data']}"}}
        for image in message["images"]]
    if text := message.get("content"):
        parts.append({"type": "text", "text": text})
    out["content"] = parts
    return out


def chatml_prompt(messages: list[dict]) -> str:
    """The prompt text a chatml server builds from `messages`, as llama-cpp-python lays it out:
    the first system message (an empty one if none), user and assistant turns, then the
    opening of the reply."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    parts = [f"<|im_start|>system\n{system}<|im_end|>\n"]
    for m in messages:
        if m.get("role") in ("user", "assistant"):
            content = m.get("content")
            text = content if isinstance(content, str) else ""
            parts.append(f"<|im_start|>{m['role']}\n{text}<|im_end|>\n" if text
                         else f"<|im_start|>{m['role']}\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


class _StreamOptionsRejected(ProviderError):
    pass
