"""Tool calls a model writes as its reply's text, for a server that does not read them itself.

llama-cpp-python's server puts the offered tools into the model's own chat template (Qwen 2.5's
"# Tools ... <tool_call>" block) but never parses the reply back into `tool_calls`: a call
arrives as content, `{"name": ..., "arguments": {...}}`, bare, in a ```json fence, or between
<tool_call> tags, one or several. Such a reply becomes ordinary ChatToolCall events, which go
through the app's consent like any other call; nothing here runs anything.

Only a reply that is wholly calls of offered tools is taken: a name not offered, or a call with
prose around it, stays text, since reading a call out of an answer would run what the model
only talked about.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Collection
from dataclasses import replace
from enum import Enum

from jarvis_tui.core.calls.tool_args import arguments_or_none
from jarvis_tui.core.providers.base import (
    ChatDelta,
    ChatDone,
    ChatEvent,
    ChatToolCall,
    Completion,
)
from jarvis_tui.core.providers.toolcalls import finish_with_calls, with_ids

TAG_OPEN, TAG_CLOSE = "<tool_call>", "</tool_call>"
FENCE = "```"
# A fence's language as the model writes it around a call; any other is code, never a call.
FENCE_LANGUAGES = ("", "json", "tool_call")
CALL_KEYS = ("name", "arguments")


class _Verdict(Enum):
    MAYBE = "could still become calls"
    TEXT = "cannot be calls"


MAYBE, TEXT = _Verdict.MAYBE, _Verdict.TEXT
Calls = list[tuple[str, str]]  # (name, arguments as JSON text)
_decoder = json.JSONDecoder()


def read_calls(text: str, offered: Collection[str]) -> Calls | None:
    """The calls, when the whole of `text` is calls of `offered` tools; else None."""
    found = _scan(text, offered, final=True)
    return found if isinstance(found, list) else None


def could_be_calls(text: str, offered: Collection[str]) -> bool:
    """Whether `text`, the start of a reply, may still turn out to be calls."""
    return _scan(text, offered, final=False) is not TEXT


def _scan(text: str, offered: Collection[str], final: bool) -> Calls | _Verdict:
    calls: Calls = []
    pos = 0
    while True:
        pos = _skip_space(text, pos, commas=bool(calls))
        if pos == len(text):
            if calls:
                return calls if final else MAYBE
            return TEXT if final else MAYBE
        rest = text[pos:]
        closer: str | None = None
        if rest.startswith(TAG_OPEN):
            pos, closer = pos + len(TAG_OPEN), TAG_CLOSE
        elif rest.startswith(FENCE):
            end = text.find("\n", pos)
            language = (text[pos + len(FENCE):] if end < 0 else text[pos + len(FENCE):end])
            language = language.strip().lower()
            if end < 0:
                partial = any(lang.startswith(language) for lang in FENCE_LANGUAGES)
                return MAYBE if partial and not final else TEXT
            if language not in FENCE_LANGUAGES:
                return TEXT
            pos, closer = end + 1, FENCE
        elif not final and (TAG_OPEN.startswith(rest) or FENCE.startswith(rest)):
            return MAYBE
        elif rest[0] not in "{[":
            return TEXT
        found = _block(text, pos, offered, final, closer)
        if isinstance(found, _Verdict):
            return found
        pos, more = found
        calls += more


def _block(text: str, pos: int, offered: Collection[str], final: bool,
           closer: str | None) -> tuple[int, Calls] | _Verdict:
    """The JSON values from `pos` up to `closer` (or, bare, the one value there)."""
    calls: Calls = []
    while True:
        pos = _skip_space(text, pos, commas=bool(calls))
        if pos == len(text):
            # A closing tag or fence the reply ended without still closes it.
            return (pos, calls) if final and calls else (TEXT if final else MAYBE)
        if closer is not None and text.startswith(closer, pos):
            return (pos + len(closer), calls) if calls else TEXT
        if closer is not None and not final and closer.startswith(text[pos:]):
            return MAYBE if calls else TEXT
        if text[pos] not in "{[":
            return TEXT
        try:
            value, pos = _decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return TEXT if final else _plausible(text[pos:], offered)
        except (ValueError, RecursionError):  # JSON Python will not read: 5,000 digits, or
            return TEXT  # nesting past its stack; a reply of such text is shown as text
        items = value if isinstance(value, list) else [value]
        read = [_as_call(item, offered) for item in items]
        if not read or None in read:
            return TEXT
        calls += [call for call in read if call is not None]
        if closer is None:
            return pos, calls


def _as_call(value: object, offered: Collection[str]) -> tuple[str, str] | None:
    if not isinstance(value, dict) or not set(value) <= set(CALL_KEYS):
        return None
    name = value.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    args = value.get("arguments", {})
    if isinstance(args, str):
        # The template shows earlier calls' arguments as a JSON string, and the model copies it.
        args = arguments_or_none(args)
    if not isinstance(args, dict):
        return None
    return name, json.dumps(args, ensure_ascii=False)


def _plausible(start: str, offered: Collection[str]) -> _Verdict:
    """Whether an unfinished JSON value may still be a call: its first key must be one a call
    has, and a name must be (the start of) an offered one. So an answer that is JSON of its own
    is shown as soon as its first key or name says so, not held back to the end."""
    pos = _skip_space(start, 1)
    if start[0] == "[":
        if pos == len(start):
            return MAYBE
        return _plausible(start[pos:], offered) if start[pos] == "{" else TEXT
    if pos == len(start):
        return MAYBE
    if start[pos] != '"':
        return TEXT
    key, pos = _string(start, pos + 1)
    if pos < 0:
        return MAYBE if any(k.startswith(key) for k in CALL_KEYS) else TEXT
    if key not in CALL_KEYS:
        return TEXT
    if key != "name":
        return MAYBE  # the arguments first: only the whole object can tell
    pos = _skip_space(start, pos)
    if pos == len(start):
        return MAYBE
    if start[pos] != ":":
        return TEXT
    pos = _skip_space(start, pos + 1)
    if pos == len(start):
        return MAYBE
    if start[pos] != '"':
        return TEXT
    name, pos = _string(start, pos + 1)
    if pos < 0:
        return MAYBE if any(n.startswith(name) for n in offered) else TEXT
    return MAYBE if name in offered else TEXT


def _string(text: str, pos: int) -> tuple[str, int]:
    """The plain string from `pos` to its closing quote and the place after it; (what there
    is, -1) if it is not closed yet. Tool names and call keys have no escapes, so one that has
    ends the string there (it then matches no name)."""
    end = text.find('"', pos)
    inner = text[pos:] if end < 0 else text[pos:end]
    if "\\" in inner:
        return inner[:inner.index("\\")] + "\\", len(text)
    return inner, (-1 if end < 0 else end + 1)


def _skip_space(text: str, pos: int, commas: bool = False) -> int:
    while pos < len(text) and (text[pos].isspace() or (commas and text[pos] == ",")):
        pos += 1
    return pos


class TextCalls:
    """One reply's stream, its text held back while it may still be calls of `offered` tools:
    shown as it is once it cannot be, turned into call events if it is at the end."""

    def __init__(self, offered: Collection[str]) -> None:
        self.offered = frozenset(offered)
        self.written: list[str] = []  # every piece of text the model wrote, shown or not
        self._held: list[str] = []
        self._holding = True

    async def events(self, source: AsyncIterator[ChatEvent]) -> AsyncIterator[ChatEvent]:
        after: list[ChatEvent] = []  # calls and usage that came while the text was held
        async for event in source:
            if not self._holding:
                if isinstance(event, ChatDelta):
                    self.written.append(event.text)
                yield event
            elif isinstance(event, ChatDelta):
                self.written.append(event.text)
                self._held.append(event.text)
                if not could_be_calls("".join(self._held), self.offered):
                    self._holding = False
                    yield ChatDelta("".join(self._held))
                    self._held.clear()
                    for held in after:
                        yield held
                    after.clear()
            elif isinstance(event, ChatDone):
                for out in self._settle(after, event):
                    yield out
                return
            else:
                after.append(event)
        for out in after:  # a source that ended without ChatDone: what it sent, as it was
            yield out

    def _settle(self, after: list[ChatEvent], done: ChatDone) -> list[ChatEvent]:
        text = "".join(self._held)
        self._holding = False
        # Calls the server itself read from the reply are the reply's calls; its text is text.
        found = None if any(isinstance(e, ChatToolCall) for e in after) else read_calls(
            text, self.offered)
        if found is None:
            return [*([ChatDelta(text)] if text else []), *after, done]
        calls = with_ids([("", name, args) for name, args in found])
        return [*calls, *after, ChatDone(finish_with_calls(done.finish_reason, calls))]


def completion_calls(whole: Completion, offered: Collection[str]) -> Completion:
    """An unstreamed reply whose text is wholly calls of `offered` tools, as those calls."""
    if whole.tool_calls or not offered:
        return whole
    found = read_calls(whole.text, offered)
    if found is None:
        return whole
    calls = with_ids([("", name, args) for name, args in found])
    return replace(whole, text="", tool_calls=tuple(calls),
                   finish_reason=finish_with_calls(whole.finish_reason, calls))
