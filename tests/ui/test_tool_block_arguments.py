"""A tool call's arguments as the tool block shows them: JSON that Python will not read (a
number of 5,000 digits, nesting 100,000 deep) is shown as written, never an error that would
take the app down."""

from __future__ import annotations

import pytest

from jarvis_tui.ui.widgets.tool_block import one_line, pretty

UNREADABLE = ['{"query": "port", "limit": ' + "9" * 5000 + "}", "[" * 100_000]


@pytest.mark.parametrize("arguments", UNREADABLE, ids=["5000 digits", "nested"])
def test_unreadable_json_is_shown_as_written(arguments):
    assert pretty(arguments) == arguments
    line = one_line(arguments)
    assert line.endswith("…") and arguments.startswith(line[:-1])
