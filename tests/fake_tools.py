"""Tool calls for the fake servers: what to answer with, how each protocol puts it on the wire,
and the checks the real servers make of tool turns, in their words. Stdlib only.

A fake answers with tool calls in two ways:

- its ``script``: a queue of replies, one taken per chat request, each a str (a text reply),
  a list of calls ``{"name": ..., "arguments": {...} or "raw JSON text", "id": ...}`` (no "id":
  the fake makes one; "id": None: the server sends none), or ``{"text": ..., "calls": [...]}``;
  ``fragments = N`` splits each call's arguments into N streamed pieces.
- a directive in the newest user message, when the request offers tools: each line
  ``call NAME {json args}`` is a call. Until the messages after that user message hold a result
  for each, the reply is those calls (in order, ids unique per request); then it is the text
  "Read N tool results (M characters).", so a test sees what the model was given.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import Any, BinaryIO

DIRECTIVE = re.compile(r"^[ \t]*call[ \t]+([A-Za-z0-9_.:-]+)[ \t]*(\{.*\})[ \t]*$", re.MULTILINE)


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any] | str  # an object, or JSON text sent as it is (even malformed)
    id: str | None  # None: the server sends no id

    def text(self, ascii_only: bool = False) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=ascii_only)

    def obj(self) -> dict[str, Any] | RawJSON:
        """The arguments as an object, for the protocols that send one ({} if not JSON; JSON
        Python will not read as RawJSON, which `dumps` sends as the object it is)."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            value = json.loads(self.arguments)
        except RecursionError:
            return RawJSON(self.arguments)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


class RawJSON(str):
    """JSON text Python will not read (nested a hundred thousand deep), which a server written
    in another language reads and sends on as the value it is: see `dumps`."""


def dumps(obj: Any) -> str:
    """json.dumps (not ASCII-only), each RawJSON inside `obj` written as the JSON it holds."""
    raws: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, RawJSON):
            raws.append(value)
            return f"\x00raw{len(raws) - 1}\x00"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(obj), ensure_ascii=False)
    for n, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00raw{n}\x00"), raw)
    return text


@dataclass
class ToolReply:
    text: str
    calls: list[FakeCall]


def scripted(entry: object, new_id: Any) -> ToolReply:
    """A script entry as a reply; `new_id()` names a call the entry gave no "id" key."""
    if isinstance(entry, str):
        return ToolReply(entry, [])
    text, raw = ("", entry) if isinstance(entry, list) else (
        str(entry.get("text", "")), entry.get("calls", [])) if isinstance(entry, dict) else ("", [])
    calls = [FakeCall(str(c["name"]), c.get("arguments", {}),
                      c["id"] if "id" in c else new_id()) for c in raw]
    return ToolReply(text, calls)


def directive_reply(user_text: str, results: list[str], seed: str, prefix: str
                    ) -> ToolReply | None:
    """The reply the `call NAME {args}` lines of the newest user message ask for, or None."""
    lines = DIRECTIVE.findall(user_text)
    if not lines:
        return None
    if len(results) >= len(lines):
        n, chars = len(results), sum(len(r) for r in results)
        return ToolReply(f"Read {n} tool result{'' if n == 1 else 's'} ({chars} characters).",
                         [])
    calls = []
    for j, (name, args) in enumerate(lines):
        try:
            parsed: dict[str, Any] | str = json.loads(args)
        except (ValueError, RecursionError):
            parsed = args  # sent as written: a model's malformed (or too deep) arguments
        calls.append(FakeCall(name, parsed, f"{prefix}{seed}_{j}"))
    return ToolReply("", calls)


def request_seed(messages: object) -> str:
    """Ids unique across a conversation: a digest of the request that asked for the calls."""
    raw = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha1(raw).hexdigest()[:10]


def _plain(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, dict) and b.get("type", "text") == "text"
                       and isinstance(b.get("text"), str))
    return ""


def openai_view(messages: list[dict]) -> tuple[str, list[str]]:
    """(newest user text, the tool results after it) of chat-completions (or Ollama) messages."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return "", []
    after = messages[users[-1] + 1:]
    return _plain(messages[users[-1]].get("content")), [
        _plain(m.get("content")) for m in after if m.get("role") == "tool"]


def anthropic_view(messages: list[dict]) -> tuple[str, list[str]]:
    """The same for Messages API turns: the newest user turn with words in it (results come
    in user turns too), and the tool_result blocks after those words."""
    user_text, results = "", []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            [b for b in content if isinstance(b, dict)] if isinstance(content, list) else [])
        for b in blocks:
            if b.get("type") == "text" and str(b.get("text", "")).strip():
                user_text, results = str(b["text"]), []
            elif b.get("type") == "tool_result":
                results.append(_plain(b.get("content")))
    return user_text, results


# --- on the wire -------------------------------------------------------------------------------


def pieces(text: str, n: int) -> list[str]:
    """`text` in `n` pieces. Where the text escapes a character (\\u4f60, as JSON text with
    ensure_ascii has it), one cut falls inside the escape: a client must join the pieces as
    text before it parses them."""
    if n <= 1 or len(text) < 2:
        return [text]
    n = min(n, len(text))
    cuts = {len(text) * k // n for k in range(1, n)}
    escape = text.find("\\u")
    if escape >= 0 and n > 1:
        cuts.discard(min(cuts, key=lambda c: abs(c - escape)))
        cuts.add(escape + 4)
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def write_split(wfile: BinaryIO, data: bytes) -> None:
    """Write `data` in two sends cut inside its first multi-byte character, as TCP may deliver
    it: a client must decode the stream incrementally, not each read on its own."""
    cut = next((i for i, b in enumerate(data) if b >= 0xC0), -1)
    if cut < 0:
        wfile.write(data)
        wfile.flush()
        return
    wfile.write(data[:cut + 1])
    wfile.flush()
    time.sleep(0.002)
    wfile.write(data[cut + 1:])
    wfile.flush()


def openai_deltas(calls: list[FakeCall], fragments: int, *, as_object: bool = False,
                  ascii_only: bool = False) -> list[dict[str, Any]]:
    """The `delta` of each chunk that streams the calls, as OpenAI sends them: id, type and
    name with empty arguments first, then the arguments in pieces; with one fragment (as
    many servers do) or as an object (as some do) each call is whole in one chunk."""
    out: list[dict[str, Any]] = []
    for i, call in enumerate(calls):
        head: dict[str, Any] = {"index": i, "type": "function",
                                "function": {"name": call.name}}
        if call.id is not None:
            head["id"] = call.id
        if as_object or fragments <= 1:
            head["function"]["arguments"] = call.obj() if as_object else call.text(ascii_only)
            out.append({"tool_calls": [head]})
            continue
        head["function"]["arguments"] = ""
        out.append({"tool_calls": [head]})
        out += [{"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                for piece in pieces(call.text(ascii_only), fragments)]
    return out


def openai_message_calls(calls: list[FakeCall], *, as_object: bool = False) -> list[dict]:
    return [{**({"id": c.id} if c.id is not None else {}), "type": "function",
             "function": {"name": c.name, "arguments": c.obj() if as_object else c.text()}}
            for c in calls]


def anthropic_blocks(calls: list[FakeCall], start: int, fragments: int, *,
                     ascii_only: bool = False) -> list[tuple[str, dict]]:
    """(event name, data) of the tool_use blocks, from block index `start`: each opens with an
    empty input, grows by input_json_delta pieces (the first one empty, as the API sends it)."""
    events: list[tuple[str, dict]] = []
    for k, call in enumerate(calls, start):
        block: dict[str, Any] = {"type": "tool_use", "name": call.name, "input": {}}
        if call.id is not None:
            block["id"] = call.id
        events.append(("content_block_start", {"type": "content_block_start", "index": k,
                                               "content_block": block}))
        text = call.text(ascii_only)
        for piece in ["", *(pieces(text, fragments) if text else [])]:
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": k,
                "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": k}))
    return events


def anthropic_content(calls: list[FakeCall]) -> list[dict]:
    return [{"type": "tool_use", **({"id": c.id} if c.id is not None else {}),
             "name": c.name, "input": c.obj()} for c in calls]


def ollama_calls(calls: list[FakeCall]) -> list[dict]:
    return [{**({"id": c.id} if c.id is not None else {}),
             "function": {"index": i, "name": c.name, "arguments": c.obj()}}
            for i, c in enumerate(calls)]


def calls_tokens_text(calls: list[FakeCall]) -> str:
    """What a reply's calls cost in completion tokens: their names and arguments."""
    return "".join(c.name + c.text() for c in calls)


# --- what the real servers refuse --------------------------------------------------------------

JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def bad_schema(schema: object) -> object | None:
    """The first part of a JSON schema whose "type" is no JSON Schema type (what OpenAI's and
    Anthropic's meta-schema checks and llama.cpp's grammar converter all refuse), or None."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
        if any(k not in JSON_TYPES for k in kinds):
            return schema
        for value in schema.values():
            if (found := bad_schema(value)) is not None:
                return found
    elif isinstance(schema, list):
        for value in schema:
            if (found := bad_schema(value)) is not None:
                return found
    return None


def refused_tool(tools: object, schema_key: str) -> tuple[int, str, object] | None:
    """(index, name, the bad part) of the first tool whose schema (under `schema_key`, inside
    "function" for chat completions) a real server refuses."""
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(tool, dict):
            continue
        holder = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        part = bad_schema(holder.get(schema_key))
        if part is not None:
            return i, str(holder.get("name", "")), part
    return None


def openai_schema_refusal(tools: object, flavor: str) -> tuple[int, dict] | None:
    """(status, body) the flavour's server answers a request whose tools hold a bad schema:
    llama.cpp quotes the part its grammar converter could not read, the others word it as
    OpenAI does (naming the function, and its place in `param`)."""
    refused = refused_tool(tools, "parameters")
    if refused is None:
        return None
    i, name, part = refused
    if flavor.startswith("llamacpp") or flavor == "llama_cpp_python":
        text = ("JSON schema conversion failed:\nUnrecognized schema: "
                + json.dumps(part, separators=(",", ":"), sort_keys=True))
        return 400, {"error": {"code": 400, "message": text, "type": "invalid_request_error"}}
    kind = part.get("type") if isinstance(part, dict) else part
    text = (f"Invalid schema for function '{name}': {json.dumps(kind)} is not valid under any "
            "of the given schemas.")
    return 400, {"error": {"message": text, "type": "invalid_request_error",
                           "param": f"tools[{i}].function.parameters",
                           "code": "invalid_function_parameters"}}


def openai_problem(body: dict) -> dict | None:
    """OpenAI's 400 body for tool turns that do not pair up, or malformed tools; else None."""
    def error(message: str, param: str | None, code: str | None = None) -> dict:
        return {"error": {"message": message, "type": "invalid_request_error",
                          "param": param, "code": code}}

    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return error("Invalid type for 'tools': expected an array.", "tools",
                         "invalid_type")
        for i, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(fn, dict) or not fn.get("name"):
                return error(f"Missing required parameter: 'tools[{i}].function.name'.",
                             f"tools[{i}].function.name", "missing_required_parameter")
    pending: tuple[int, list[str]] | None = None  # the assistant's index and its calls left
    for i, m in enumerate(body.get("messages", [])):
        role = m.get("role")
        if role == "tool":
            if pending is None:
                return error("Invalid parameter: messages with role 'tool' must be a response "
                             "to a preceeding message with 'tool_calls'.", f"messages.[{i}].role")
            if m.get("tool_call_id") in pending[1]:
                pending[1].remove(m.get("tool_call_id"))
            continue
        if pending and pending[1]:
            break  # the calls' results ended before all of them were answered
        calls = m.get("tool_calls") if role == "assistant" else None
        pending = (i, [c.get("id") for c in calls if isinstance(c, dict)]) if calls else None
    if pending and pending[1]:
        return error("An assistant message with 'tool_calls' must be followed by tool messages "
                     "responding to each 'tool_call_id'. The following tool_call_ids did not "
                     f"have response messages: {', '.join(map(str, pending[1]))}",
                     f"messages.[{pending[0]}].role")
    return None


def anthropic_problem(body: dict) -> str | None:
    """The Messages API's refusal of the request's tools or tool blocks, in its words."""
    tools = body.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        for field in ("name", "input_schema"):
            if not isinstance(tool, dict) or field not in tool:
                return f"tools.{i}.custom.{field}: Field required"
    if (refused := refused_tool(tools, "input_schema")) is not None:
        return (f"tools.{refused[0]}.custom.input_schema: JSON schema is invalid. It must match "
                "JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more "
                "about tool use at https://docs.claude.com/en/docs/tool-use.")
    messages = body.get("messages", [])

    def blocks(m: dict, kind: str) -> list[tuple[int, dict]]:
        content = m.get("content")
        return [(j, b) for j, b in enumerate(content if isinstance(content, list) else [])
                if isinstance(b, dict) and b.get("type") == kind]

    if any(blocks(m, "tool_use") or blocks(m, "tool_result") for m in messages) and not tools:
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    used: set[object] = set()
    for i, m in enumerate(messages):
        for j, block in blocks(m, "tool_use"):
            if block.get("id") in used:
                return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
            used.add(block.get("id"))
    for i, m in enumerate(messages):
        before = {b.get("id") for _, b in blocks(messages[i - 1], "tool_use")} if i else set()
        for j, block in blocks(m, "tool_result"):
            if block.get("tool_use_id") not in before:
                return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous "
                        "message.")
        uses = [b.get("id") for _, b in blocks(m, "tool_use")]
        if uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else {}
            answered = set()
            content = nxt.get("content")
            # Results must open the next turn: text before them does not count.
            for b in content if isinstance(content, list) else []:
                if not isinstance(b, dict) or b.get("type") != "tool_result":
                    break
                answered.add(b.get("tool_use_id"))
            missing = [u for u in uses if u not in answered]
            if missing:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` "
                        "block must have a corresponding `tool_result` block in the next "
                        "message.")
    return None
