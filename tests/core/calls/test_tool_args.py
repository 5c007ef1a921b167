"""Tool arguments read by the one rule (core/calls/tool_args.py): JSON Python will not read (nesting
100,000 deep, a number of 5,000 digits) is a ValueError saying why, never a RecursionError or
json's advice about sys.set_int_max_str_digits, for every reader that shows or resends a call."""

from __future__ import annotations

import json

import pytest

from jarvis_tui.core.calls.tool_args import Unreadable, arguments_or_none, loads, read_arguments
from jarvis_tui.core.messages import call_commands
from jarvis_tui.core.providers.anthropic import to_anthropic
from jarvis_tui.core.providers.ollama import to_ollama_messages

DEEP = '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}"
DIGITS = '{"limit": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(("text", "why"), [
    (DEEP, "the arguments are nested too deep (thousands of brackets)"),
    (DIGITS, "a number in the arguments has over 4,300 digits: write numbers of a few digits"),
], ids=["nested", "digits"])
def test_json_python_will_not_read_says_why(text, why):
    with pytest.raises(Unreadable) as err:
        loads(text)
    assert str(err.value) == why
    with pytest.raises(ValueError) as err:
        read_arguments(text)
    assert str(err.value) == why
    assert arguments_or_none(text) is None


def test_garbled_and_other_json_as_before():
    with pytest.raises(json.JSONDecodeError):
        loads("{nope")  # not Unreadable: a stream reader drops a garbled line
    assert read_arguments("  ") == {} and arguments_or_none("") == {}
    with pytest.raises(ValueError, match="must be a JSON object"):
        read_arguments("[1, 2]")
    assert arguments_or_none("[1, 2]") is None and arguments_or_none(None) is None
    assert arguments_or_none({"a": 1}) == {"a": 1}


def _history(arguments: str) -> list[dict]:
    return [{"role": "user", "content": "find it"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "search_history", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Error: unreadable"},
            {"role": "user", "content": "again?"}]


def test_an_unreadable_call_is_resent_by_every_protocol():
    """Anthropic's tool_use wants an object: {} (the result told the model why); Ollama keeps
    the text; the details ledger gives the call's name alone."""
    for arguments in (DEEP, DIGITS):
        turns = _history(arguments)
        _, sent = to_anthropic(turns, tool_blocks=True)
        uses = [b for m in sent if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_use"]
        assert [u["input"] for u in uses] == [{}]
        calls = [c for m in to_ollama_messages(turns) for c in m.get("tool_calls") or []]
        assert [c["function"]["arguments"] for c in calls] == [{"arguments": arguments}]
        assert call_commands(turns[1]["tool_calls"]) == ["search_history"]
