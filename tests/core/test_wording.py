"""The words a user reads for a failed tool call and a refused request (issue 25, item 20), each
produced by the code that makes them: a real MCP server, the real tool loop and engine against
the fake server over loopback, and the notice the CLI and the app print for the event."""

from __future__ import annotations

import sys

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.engine.tool_round import ToolPolicy, run_calls
from jarvis_tui.core.settings.mcp import McpServerConfig
from jarvis_tui.core.tools.mcp_client import McpHub
from jarvis_tui.core.tools.rules import ANY
from jarvis_tui.texts.notices import describe
from tests.engine_helpers import make_engine, send
from tests.fakeserver import overflow_answer
from tests.mcp_servers import ROOT


async def failed_line(hub: McpHub, call: ToolCall) -> str | None:
    """The notice for `call` run by the real tool loop, allowed, through `hub`."""
    stored = []

    async def save(message):
        stored.append(message)
        return message

    finished = [e async for e in run_calls(
        [call], box=hub, policy=ToolPolicy({(ANY, ANY)}), approve=None, timeout=lambda spec: 30.0,
        save=save, save_now=stored.append) if isinstance(e, ev.ToolFinished)]
    return describe(finished[0])


@pytest.fixture
async def refusing() -> McpHub:
    server = McpServerConfig(name="refusing", transport="stdio", command=sys.executable,
                             args=("-m", "tests.mcp_servers.refusing"), cwd=str(ROOT))
    async with McpHub([server]) as hub:
        await hub.start()
        yield hub


async def test_a_refused_call_says_failed_once_and_on_one_line(refusing: McpHub) -> None:
    # The server's JSON-RPC error ("the disk is full\n(try again later)") is the reason; the
    # notice names the call and says it failed, once.
    line = await failed_line(refusing, ToolCall("c1", "store", '{"text": "notes"}'))
    assert line == "✗ store failed: the disk is full (try again later)"


async def test_arguments_with_a_control_character_say_where_without_at_at(
        refusing: McpHub) -> None:
    line = await failed_line(refusing, ToolCall("c2", "store", '{"text": "a\x01b"}'))
    assert line == ("✗ store failed: the arguments for store could not be read: the arguments "
                    "are not valid JSON (Invalid control character at character 11)")


async def test_each_trim_after_an_overflow_names_the_smaller_window_it_retries_with(
        make_fake_server, tmp_path) -> None:
    """A server that refuses every request as too long: nothing is left to compact, so each
    retry is smaller, and each notice says the size of that retry (it said the same number
    three times)."""
    fake = make_fake_server(limit=100_000)
    engine = make_engine(fake, tmp_path, context_window=8192, max_retries=0)
    for _ in range(4):
        status, body = overflow_answer("openai", 4096, 5000, 512)
        fake.faults.append(("status", status, {}, body))
    events = await send(engine, "hello " * 50)
    said = [describe(e) for e in events if isinstance(e, ev.Trimmed)]
    sizes = [e.budget for e in events if isinstance(e, ev.Trimmed)]
    assert len(said) == 3 and len(set(said)) == 3, said
    assert sizes == sorted(sizes, reverse=True)
    assert said[0] == ("✂ Nothing left to compact; retrying with a smaller window "
                       f"({sizes[0]} tokens)")
    assert isinstance(events[-1], ev.Failed)
    # The last line says "does not fit" once, then the server's own words: it said
    # "…even after compacting: The request does not fit the model's context window (400): …".
    error = events[-1].error
    assert error.count("does not fit") == 1, error
    assert error.startswith("the conversation does not fit the model's context window even "
                            "after compacting; the server said: ")
    assert error.endswith("(400)"), error


@pytest.mark.parametrize(("event", "one", "many"), [
    (lambda n: ev.MemorySuggested(n), "💡 1 thing you said looks worth remembering: F6 (Memory) "
     "to review it;", "💡 3 things you said look worth remembering: F6 (Memory) to review them;"),
    (lambda n: ev.SessionChanged(n), "added 1 message to", "added 3 messages to"),
    (lambda n: ev.Recalled(n, 40, tuple(range(n))), "Recalled 1 earlier turn from",
     "Recalled 3 earlier turns from"),
    (lambda n: ev.ToolOutputsPruned(n, 500), "1 older tool output sent", "3 older tool outputs"),
])
def test_a_count_of_one_reads_in_the_singular(event, one, many):
    """'1 thing(s) you said look…' read as a form, not a sentence (issue 39, item 14)."""
    assert one in describe(event(1), "en")
    assert many in describe(event(3), "en")
    assert "(s)" not in describe(event(1), "en") + describe(event(3), "en")
