"""search_history's "limit", whatever a model writes for it: a whole number from 1 up is read
(more than the most gets the most), a number quoted as text in the digits 0-9 too; anything
else gets the one line every bad limit gets, never a Python error (issue 39, item 8)."""

from __future__ import annotations

import json

import pytest

from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.recall.turns import search_covered
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HISTORY_TOOL, HistorySearch, _limit
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter

LINE = 'search_history was not run: "limit" must be a whole number from 1 to 10, not '


@pytest.fixture
def search(tmp_path):
    with Store(tmp_path / "s.db") as store:
        conv = store.create_conversation(model="m").id
        history = History([])
        yield HistorySearch(lambda query, limit: search_covered(store, conv, history, query,
                                                                limit),
                            TokenCounter("m", exact=False), 4000)


def run(search: HistorySearch, arguments: str) -> tuple[str, bool]:
    result = search.run(ToolCall("c1", HISTORY_TOOL, arguments))
    return result.text, result.is_error


@pytest.mark.parametrize(("limit", "said"), [
    ("²", "a string"),  # str.isdigit() says yes, int() says no
    ("٣", "a string"),  # int() reads it as 3: not what JSON writes for a number
    ("３", "a string"),
    ("9" * 5000, "a string"),  # over Python's 4,300 digits: int() refuses
    ("1e3", "a string"), ("-2", "a string"), ("", "a string"), ("many", "a string"),
    (2.5, "2.5"), (True, "a boolean"), (False, "a boolean"), (-3, "-3"), (0, "0"),
    (10**30, "a number"), (2**63, "a number"), (1e300, "1e+300"), ([3], "a list"),
    ({"n": 3}, "an object"),
])
def test_a_bad_limit_gets_the_one_line(search, limit, said):
    text, error = run(search, json.dumps({"query": "port", "limit": limit}))
    assert (text, error) == (LINE + said, True)


def test_a_limit_of_5000_digits_as_a_json_number_is_a_line_too(search):
    text, error = run(search, '{"query": "port", "limit": ' + "9" * 5000 + "}")
    assert error and text == ("search_history was not run: a number in the arguments has "
                              "over 4,300 digits: write numbers of a few digits")
    text, error = run(search, '{"query": "port", "limit": ' + "[" * 100_000 + "}")
    assert error and text == ("search_history was not run: the arguments are nested too deep "
                              "(thousands of brackets)")


@pytest.mark.parametrize(("limit", "read"), [
    (None, 3), (1, 1), (3, 3), ("4", 4), (" 7 ", 7), (7.0, 7), (10, 10), (99, 10),
    (2**63 - 1, 10), ("9223372036854775807", 10)])
def test_a_good_limit_is_read(search, limit, read):
    text, error = run(search, json.dumps({"query": "port", "limit": limit}))
    assert not error and text.startswith("Nothing in the earlier turns"), text
    assert _limit(limit) == read
