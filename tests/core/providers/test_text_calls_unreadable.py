"""The local model's calls written as text, when they hold JSON Python will not read (a number
of 5,000 digits, nesting 100,000 deep): the reply is text, never an error out of the stream."""

from __future__ import annotations

import json

import pytest

from jarvis_tui.core.providers.text_calls import could_be_calls, read_calls

HUGE = "9" * 5000
UNREADABLE = [
    '{"name": "search_history", "arguments": {"query": "port", "limit": ' + HUGE + "}}",
    json.dumps({"name": "search_history",
                "arguments": '{"query": "port", "limit": ' + HUGE + "}"}),
    '{"name": "search_history", "arguments": ' + "[" * 100_000,
]


@pytest.mark.parametrize("text", UNREADABLE, ids=["number", "number in text", "nested"])
def test_unreadable_calls_are_text(text):
    assert read_calls(text, ["search_history"]) is None
    assert could_be_calls(text, ["search_history"]) is False  # while streaming too
