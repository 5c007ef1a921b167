"""Tool calls as the wire protocols stream them, joined into whole ChatToolCall events.

Servers differ in how they cut a call up: OpenAI sends the id and name first and the arguments in
many text pieces keyed by `index`; some servers send a whole call in one chunk, leave out the id,
or give the arguments as an object. What leaves here is always whole: an id unique in the reply,
the name, and the arguments as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from jarvis_tui.core.calls.call_ids import unique_ids
from jarvis_tui.core.providers.base import ChatToolCall


def openai_tools(tools: list[dict] | None) -> list[dict]:
    """ToolSpec.wire() dicts in the chat-completions shape (which Ollama takes too)."""
    return [{"type": "function", "function": dict(tool)} for tool in tools or []]


def args_text(value: object) -> str:
    """Arguments as JSON text: a string is kept as the model wrote it, an object dumped."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def with_ids(calls: list[tuple[str, str, str]], prefix: str = "call_") -> list[ChatToolCall]:
    """(id, name, arguments) as events, each id unique in the reply (see call_ids), since the
    results sent back must name the call they answer."""
    ids = unique_ids([cid for cid, _, _ in calls], prefix)
    return [ChatToolCall(cid, name, args.strip() or "{}")
            for cid, (_, name, args) in zip(ids, calls, strict=True)]


def finish_with_calls(finish: str | None, calls: list[ChatToolCall]) -> str | None:
    """A reply that asks for tools finished to have them run, whatever the server named it
    (function_call, tool_use, or stop from servers that never say otherwise). A reply cut at
    max_tokens keeps "length": its last call's arguments may be cut short."""
    if calls and finish != "length":
        return "tool_calls"
    return finish


class OpenAICalls:
    """The `tool_calls` fragments of a chat-completions stream, joined by their index."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, Any]] = {}
        self._last: int | None = None

    def __bool__(self) -> bool:
        return bool(self._calls)

    def feed(self, fragments: object) -> None:
        if isinstance(fragments, dict):
            fragments = [fragments]
        if not isinstance(fragments, list):
            return
        for fragment in fragments:
            if isinstance(fragment, dict):
                self._feed_one(fragment)

    def feed_function_call(self, fc: object) -> None:
        """The legacy single `function_call` delta, as a call of its own."""
        if isinstance(fc, dict):
            self._feed_one({"index": -1, "function": fc})

    def _feed_one(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        cid = fragment.get("id")
        if not isinstance(index, int) or isinstance(index, bool):
            # No index (some proxies send whole calls without one): a new id opens a new call.
            known = {c["id"] for c in self._calls.values()}
            if self._last is None or (isinstance(cid, str) and cid and cid not in known):
                index = max(self._calls, default=-1) + 1
            else:
                index = self._last
        call = self._calls.setdefault(index, {"id": "", "name": "", "args": []})
        self._last = index
        if isinstance(cid, str) and cid and not call["id"]:
            call["id"] = cid
        fn = fragment.get("function")
        if not isinstance(fn, dict):
            return
        name = fn.get("name")
        # A name comes whole in the first fragment; a server that repeats it must not double it.
        if isinstance(name, str) and name and name != call["name"]:
            call["name"] += name
        args = fn.get("arguments")
        if isinstance(args, str):
            call["args"].append(args)
        elif args is not None:
            call["args"] = [args_text(args)]  # a whole object: it replaces, never appends

    def calls(self) -> list[ChatToolCall]:
        ordered = [self._calls[i] for i in sorted(self._calls)]
        return with_ids([(c["id"], c["name"], "".join(c["args"])) for c in ordered])


def openai_message_calls(message: object) -> list[ChatToolCall]:
    """The calls of a whole (unstreamed) chat-completions message."""
    if not isinstance(message, dict):
        return []
    calls = OpenAICalls()
    raw = message.get("tool_calls")
    if isinstance(raw, list):
        calls.feed([{**c, "index": i} for i, c in enumerate(raw) if isinstance(c, dict)])
    calls.feed_function_call(message.get("function_call"))
    return calls.calls()
