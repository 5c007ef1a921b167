"""Which tool a provider's refusal points at, and leaving it out of later requests."""

from __future__ import annotations

from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.providers.errors import ToolsRefused
from jarvis_tui.core.tools.refused import RefusedTools, culprit

GOOD = ToolSpec("echo", "", {"type": "object", "properties": {"text": {"type": "string"}}},
                "a", "echo")
BAD = ToolSpec("a_read", "", {"type": "object", "properties": {"q": {"type": "nonsense"}}},
               "a", "read")
ALSO_BAD = ToolSpec("b_read", "", {"type": "object", "properties": {"q": {"type": "nonsense"}}},
                    "b", "read")


def refused(**where: object) -> ToolsRefused:
    return ToolsRefused("refused", status=400, **where)  # type: ignore[arg-type]


def test_by_name_by_place_and_by_the_quoted_schema() -> None:
    assert culprit(refused(tool="a_read"), [GOOD, BAD]) is BAD
    assert culprit(refused(index=1), [GOOD, BAD]) is BAD
    assert culprit(refused(schema={"type": "nonsense"}), [GOOD, BAD]) is BAD


def test_a_quoted_schema_two_tools_share_points_at_neither() -> None:
    assert culprit(refused(schema={"type": "nonsense"}), [GOOD, BAD, ALSO_BAD]) is None
    assert culprit(refused(index=7), [GOOD, BAD]) is None


def test_a_left_out_tool_comes_back_when_its_server_describes_it_anew() -> None:
    tools = RefusedTools()
    assert tools.leave_out(refused(index=1), [GOOD, BAD]) is BAD
    assert tools.offered([GOOD, BAD, ALSO_BAD]) == [GOOD, ALSO_BAD]  # another server's stays
    fixed = ToolSpec("a_read", "", {"type": "object", "properties": {"q": {"type": "string"}}},
                     "a", "read")
    assert tools.offered([GOOD, fixed]) == [GOOD, fixed]
    assert tools.leave_out(refused(tool="nowhere"), [GOOD]) is None
