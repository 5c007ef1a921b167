"""Anthropic's Messages API (``/v1/messages``) over httpx, streaming with SSE.

The engine speaks OpenAI's chat shape; this module translates on the way out (system prompt to
the top-level field, strictly alternating user/assistant turns) and turns Anthropic's events and
error types back into the shared ChatDelta / ChatUsage / ChatDone and ProviderError types.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx

from jarvis_tui.core.calls.tool_args import arguments_or_none
from jarvis_tui.core.providers.base import ChatDelta, ChatDone, ChatEvent, ChatUsage, Completion
from jarvis_tui.core.providers.errors import ProviderError, StreamCut
from jarvis_tui.core.providers.http import HttpProvider, json_or_none, stream_lines
from jarvis_tui.core.providers.registry import ANTHROPIC
from jarvis_tui.core.providers.toolcalls import finish_with_calls, with_ids
from jarvis_tui.core.providers.usage import anthropic_prompt, count

API_VERSION = "2023-06-01"
# Anthropic refuses a conversation that starts with the assistant; after compaction the kept
# turns may do just that, and the earlier ones live in the summary inside the system prompt.
LEAD_IN = "(The conversation so far is summarised in the system prompt.)"
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
# The HTTP status Anthropic documents for each error type, so an error event inside a 200
# stream is classified as the same answer would be before the stream started.
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}


def to_anthropic(messages: list[dict], *, tool_blocks: bool = False
                 ) -> tuple[str, list[dict[str, Any]]]:
    """(system text, messages) for the Messages API from OpenAI-shaped messages.

    With `tool_blocks` (the request defines tools) a call travels as a tool_use block and its
    result as a tool_result block in the next user turn; a call without its results right after
    it, or a result without its call right before, travels as text, since the API refuses
    either half alone. Without tools every call and result is text: the API refuses tool
    blocks in a request that defines no tools."""
    pairs = _Pairs(messages) if tool_blocks else None
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        text = _text(msg.get("content"))
        content: str | list[dict] = text
        if role in ("system", "developer"):
            if text.strip():
                system.append(text)
            continue
        if role == "tool":
            role = "user"
            block = pairs.result_block(i, text) if pairs else None
            content = [block] if block else f"[tool result] {text}"
        elif role == "assistant" and msg.get("tool_calls"):
            uses = pairs.use_blocks(i, msg["tool_calls"]) if pairs else []
            ids = {u["call"] for u in uses}
            text = "\n".join([text, *(_call_line(c) for c in msg["tool_calls"]
                                      if not isinstance(c, dict) or id(c) not in ids)]).strip()
            if uses:
                content = ([{"type": "text", "text": text}] if text else []) + [
                    u["block"] for u in uses]
            else:
                content = text
        elif role != "assistant":
            role = "user"
            if msg.get("images"):
                # Images first: Anthropic's advice, the picture before the question about it.
                content = [*(_image_block(image) for image in msg["images"]),
                           *([{"type": "text", "text": text}] if text.strip() else [])]
        if isinstance(content, str) and not content.strip():
            continue  # Anthropic rejects blank content; a blank turn carries nothing anyway
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] = _joined(turns[-1]["content"], content)
        else:
            turns.append({"role": role, "content": content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": LEAD_IN})
    if turns[-1]["role"] == "assistant":
        # A final assistant turn is a prefill, which may not end in whitespace.
        last = turns[-1]["content"]
        if isinstance(last, str):
            turns[-1]["content"] = last.rstrip()
        elif last and last[-1].get("type") == "text":
            last[-1] = {**last[-1], "text": last[-1]["text"].rstrip()}
    return "\n\n".join(system), turns


def _image_block(image: dict) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image["media_type"],
                                        "data": image["data"]}}


def _joined(before: str | list[dict], after: str | list[dict]) -> str | list[dict]:
    """Two contents of one role as one turn (the API wants roles to alternate): text joined
    as before tools existed, blocks kept in order (results first, the user's words after)."""
    if isinstance(before, str) and isinstance(after, str):
        return before + "\n\n" + after
    return _blocks(before) + _blocks(after)


def _blocks(content: str | list[dict]) -> list[dict]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


class _Pairs:
    """Which calls have their results right after them, and the ids they travel under: the
    API wants ids unique in the request and made of [A-Za-z0-9_-] only, while ours may repeat
    across turns (a server that gives none gets call_0 every time) or hold other characters."""

    def __init__(self, messages: list[dict]) -> None:
        self._ids: dict[tuple[int, str], str] = {}  # (assistant index, id) -> id as sent
        self._results: dict[int, str] = {}  # tool message index -> the id it answers, as sent
        used: set[str] = set()
        for i, msg in enumerate(messages):
            if msg.get("role") != "assistant" or not isinstance(msg.get("tool_calls"), list):
                continue
            calls = [str(c.get("id") or "") for c in msg["tool_calls"] if isinstance(c, dict)]
            answers: dict[str, int] = {}
            j = i + 1
            while j < len(messages) and messages[j].get("role") == "tool":
                rid = str(messages[j].get("tool_call_id") or "")
                if rid and rid in calls and rid not in answers:
                    answers[rid] = j
                j += 1
            for cid in dict.fromkeys(calls):
                if cid not in answers:
                    continue
                sent = base = re.sub(r"[^A-Za-z0-9_-]", "_", cid)
                k = 1
                while sent in used:
                    k += 1
                    sent = f"{base}_{k}"
                used.add(sent)
                self._ids[(i, cid)] = self._results[answers[cid]] = sent

    def use_blocks(self, i: int, calls: list) -> list[dict[str, Any]]:
        """The calls of assistant message `i` that have results, as tool_use blocks (with the
        call they came from, so the rest can travel as text)."""
        out = []
        for call in calls:
            cid = str(call.get("id") or "") if isinstance(call, dict) else ""
            sent = self._ids.get((i, cid))
            if sent is None:
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            out.append({"call": id(call), "block": {
                "type": "tool_use", "id": sent, "name": str(fn.get("name") or ""),
                "input": _input(fn.get("arguments"))}})
        return out

    def result_block(self, j: int, text: str) -> dict[str, Any] | None:
        sent = self._results.get(j)
        if sent is None:
            return None
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": sent}
        if text:
            block["content"] = text
        if text.startswith("Error:"):
            # The model is told the call failed, as the engine words every failed result.
            block["is_error"] = True
        return block


def _input(arguments: object) -> dict[str, Any]:
    """A call's arguments as the object tool_use wants; text the model garbled becomes {} (its
    result already told it what was wrong), never a refused request."""
    value = arguments_or_none(arguments)
    return value if value is not None else {}


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _call_line(call: object) -> str:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return "[tool call]"
    return f"[tool call] {fn.get('name', '?')}({fn.get('arguments', '')})"


def _finish(stop_reason: object) -> str | None:
    if not isinstance(stop_reason, str) or not stop_reason:
        return None
    return STOP_REASONS.get(stop_reason, stop_reason)


def with_cache_breakpoints(system: str, turns: list[dict], *,
                           one_off: bool = False) -> tuple[list[dict], list[dict]]:
    """The system prompt as a text block and the turns, with cache_control breakpoints where a
    later request can read them back: Anthropic caches nothing unmarked, and a read lands only
    on a prefix an earlier request marked. Marked are the system block, the newest turn (the
    next request's prefix runs up to it) and the turn before the newest user turn, which stays
    put when that user turn is retried cut down or sent again. Three, under the API's four;
    to_anthropic leaves no blank turn, and the API refuses a breakpoint on an empty block.
    A `one_off` request (a summary: no later request starts with all of it) leaves its newest
    turn unmarked: a write there costs a quarter more and is never read back."""
    newest_user = max(i for i, turn in enumerate(turns) if turn["role"] == "user")
    marked = ({newest_user - 1} if newest_user else set()) | (
        set() if one_off else {len(turns) - 1})
    blocks = [_block(system)] if system else []
    return blocks, [{**turn, "content": _marked(turn["content"])} if i in marked else turn
                    for i, turn in enumerate(turns)]


def _block(text: str) -> dict:
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}


def _marked(content: str | list[dict]) -> list[dict]:
    # A turn of blocks (tool use, results) is marked on its last block: the prefix ends there.
    if isinstance(content, str):
        return [_block(content)]
    return [*content[:-1], {**content[-1], "cache_control": {"type": "ephemeral"}}]


class AnthropicProvider(HttpProvider):
    name = "anthropic"

    def __init__(self, base_url: str = ANTHROPIC.base_url, api_key: str = "", *,
                 transport: httpx.AsyncBaseTransport | None = None,
                 version: str = API_VERSION, **timeouts: float) -> None:
        headers = {"anthropic-version": version, "content-type": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        root = base_url.rstrip("/")
        # Both ".../v1" (as OpenAI-style configs write it) and the bare host are accepted.
        root = root.removesuffix("/v1")
        super().__init__(root, api_key, headers=headers, transport=transport, **timeouts)

    @property
    def _url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def _payload(self, messages: list[dict], model: str, max_tokens: int,
                 stream: bool, tools: list[dict] | None = None) -> dict[str, Any]:
        system, turns = with_cache_breakpoints(
            *to_anthropic(messages, tool_blocks=bool(tools)), one_off=not stream)
        payload: dict[str, Any] = {"model": model, "messages": turns,
                                   "max_tokens": max(int(max_tokens), 1), "stream": stream}
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [{"name": t["name"], "description": t.get("description", ""),
                                 "input_schema": t.get("parameters") or
                                 {"type": "object", "properties": {}}} for t in tools]
        return payload

    def _error(self, status: int | None, body: str,
               headers: httpx.Headers | None = None) -> ProviderError:
        return self._scrub(self._classify(status, body, headers))

    # --- streaming -----------------------------------------------------------------------------

    async def stream_chat(self, messages: list[dict], *, model: str, max_tokens: int,
                          context_window: int | None = None, tools: list[dict] | None = None,
                          ) -> AsyncIterator[ChatEvent]:
        payload = self._payload(messages, model, max_tokens, stream=True, tools=tools)
        async for event in self._stream(
                self._url, payload, "text/event-stream", self._error,
                lambda resp: self._sse_or_whole(
                    resp, self._sse_events,
                    lambda body: self._completion(body).events())):
            yield event

    async def _sse_events(self, resp: httpx.Response) -> AsyncIterator[ChatEvent]:
        prompt: tuple[int, int | None, int | None] | None = None  # whole, cache read, written
        completion = 0
        stop: str | None = None
        finished = False
        event_name = ""
        uses: dict[int, dict[str, Any]] = {}  # block index -> tool_use id, name, JSON pieces
        async for line in stream_lines(resp):
            if line.startswith("event:"):
                event_name = line[6:].strip()
                continue
            if not line.startswith("data:"):
                continue  # blank separators, ": comments", id:/retry: fields
            data = line[5:].strip()
            event = json_or_none(data)
            if event is None:
                continue
            kind = event.get("type") or event_name
            if kind == "error":
                raise self._stream_error(event, data)
            if kind == "message_start":
                message = event.get("message")
                usage = message.get("usage") if isinstance(message, dict) else None
                prompt = anthropic_prompt(usage)
                if isinstance(usage, dict) and isinstance(usage.get("output_tokens"), int):
                    completion = usage["output_tokens"]
            elif kind == "content_block_start":
                block, index = event.get("content_block"), event.get("index")
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses[index if isinstance(index, int) else len(uses)] = {
                        "id": str(block.get("id") or ""), "name": str(block.get("name") or ""),
                        "input": block.get("input"), "json": []}
            elif kind == "content_block_delta":
                delta = event.get("delta")
                # thinking and signature deltas are not reply text.
                if isinstance(delta, dict) and delta.get("type") == "text_delta":
                    text = delta.get("text")
                    if isinstance(text, str) and text:
                        yield ChatDelta(text)
                elif isinstance(delta, dict) and delta.get("type") == "input_json_delta":
                    use = uses.get(event.get("index"))  # type: ignore[arg-type]
                    if use is None and uses:
                        use = uses[max(uses)]
                    piece = delta.get("partial_json")
                    if use is not None and isinstance(piece, str):
                        use["json"].append(piece)
            elif kind == "message_delta":
                delta, usage = event.get("delta"), event.get("usage")
                if isinstance(delta, dict):
                    stop = _finish(delta.get("stop_reason")) or stop
                if isinstance(usage, dict):
                    if isinstance(usage.get("output_tokens"), int):
                        completion = usage["output_tokens"]  # cumulative, not a delta
                    # Newer API versions repeat the input counts here, cumulative too.
                    prompt = anthropic_prompt(usage) or prompt
            elif kind == "message_stop":
                finished = True
                break
        # message_delta carries the stop reason and final usage; only message_stop is left
        # after it, so a break there loses nothing of the reply.
        if not finished and stop is None:
            raise StreamCut(f"The stream from {self._where} ended before the reply was finished.")
        calls = with_ids([(u["id"], u["name"], "".join(u["json"]) or _start_input(u["input"]))
                          for _, u in sorted(uses.items())], "toolu_")
        for call in calls:
            yield call
        if prompt is not None:
            yield ChatUsage(prompt[0], completion, *prompt[1:])
        yield ChatDone(finish_with_calls(stop, calls))

    def _stream_error(self, event: dict[str, Any], raw: str) -> ProviderError:
        err = event.get("error")
        kind = err.get("type") if isinstance(err, dict) else None
        return self._error(ERROR_STATUS.get(kind) if isinstance(kind, str) else None, raw)

    # --- one-shot ------------------------------------------------------------------------------

    async def complete(self, messages: list[dict], *, model: str, max_tokens: int,
                       context_window: int | None = None,
                       tools: list[dict] | None = None) -> Completion:
        payload = self._payload(messages, model, max_tokens, stream=False, tools=tools)
        return self._completion(await self._post(self._url, payload, self._error))

    def _completion(self, body: str) -> Completion:
        data = self._json_object(body)
        if data.get("type") == "error":
            raise self._stream_error(data, body)
        blocks = data.get("content")
        text = "".join(b["text"] for b in blocks if isinstance(b, dict)
                       and b.get("type") == "text" and isinstance(b.get("text"), str)) \
            if isinstance(blocks, list) else ""
        calls = with_ids([(str(b.get("id") or ""), str(b.get("name") or ""),
                           _start_input(b.get("input")))
                          for b in (blocks if isinstance(blocks, list) else [])
                          if isinstance(b, dict) and b.get("type") == "tool_use"], "toolu_")
        usage = data.get("usage")
        prompt = anthropic_prompt(usage)
        out = count(usage.get("output_tokens")) if isinstance(usage, dict) else None
        whole = Completion(text, prompt[0] if prompt else None, out,
                           finish_with_calls(_finish(data.get("stop_reason")), calls),
                           *(prompt[1:] if prompt else ()))
        return replace(whole, tool_calls=tuple(calls)) if calls else whole


def _start_input(value: object) -> str:
    # The input a tool_use block opened with; streamed ones open with {} and grow by deltas.
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) and value else "{}"


