"""The built-in tool `search_history` (core/tools/history_search.py does the searching): offered
beside the MCP tools once a summary covers turns, in all three wire protocols.

It only reads this session, so it never asks for approval and no --allow-tool rule applies to
it; an MCP tool of the same name is offered as SERVER_search_history instead, so a server can
never stand in for it. It is offered only while a summary exists: its definition and the note
under the summary's header then change with the summary only, never from turn to turn (the
provider's prefix cache holds everything before the new turn). A server or model without tools
refuses a request that offers it; it is then left out, and the session remembers.
"""

from __future__ import annotations

from collections.abc import Sequence

from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.providers.errors import ProviderError, RequestError, ToolsRefused
from jarvis_tui.core.tools.builtin import Builtin, with_builtins
from jarvis_tui.core.tools.history_search import (
    DEFAULT_LIMIT,
    HISTORY_TOOL,
    MAX_LIMIT,
    HistorySearch,
)
from jarvis_tui.core.tools.results import definitions_text, tool_definitions
from jarvis_tui.core.window.tokens import TokenCounter

# Session meta: the models whose server refused the tool, so a later run (every `ask` is one)
# neither asks with it again nor has its first compaction's request refused for it.
SEARCH_REFUSED_KEY = "search_history_refused"

HISTORY_SPEC = ToolSpec(
    name=HISTORY_TOOL,
    description=(
        "Search this conversation's earlier turns that were folded into the summary, in any "
        "language, by their words and by what they mean. Returns whole turns (user, assistant "
        "and tool messages), each message with its id and date. Use it for a detail the "
        "summary lost: a name, number, path, command or quote, or what was said about a "
        "topic; with all_sessions, for one said in the user's other sessions."),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "the words, name or topic to look for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                      "description": f"the most turns to return (default {DEFAULT_LIMIT})"},
            "all_sessions": {"type": "boolean",
                             "description": "also search the user's other sessions, each turn "
                                            "labelled with its session's title and date "
                                            "(default false)"},
        },
        "required": ["query"],
    },
    tool=HISTORY_TOOL,
)

# Under the summary's header while the tool is offered: the model learns the folded turns are
# still there, and how to get them.
SUMMARY_NOTE = (f"(The turns folded into it are still stored: the {HISTORY_TOOL} tool finds "
                "them by their words or their meaning, in any language, when a detail is "
                "needed.)")

def is_history_search(name: str) -> bool:
    """Whether a call of `name` is this tool: MCP tools of that name are offered renamed."""
    return name == HISTORY_TOOL


def with_history_search(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """`specs` (the servers' tools) with this one after them, any of theirs named like it
    renamed."""
    return with_builtins(specs, [HISTORY_SPEC])


def history_builtin(search: HistorySearch) -> Builtin:
    return Builtin(HISTORY_SPEC, search.run)


def definition_overflow(counter: TokenCounter, system_prompt: str, reserve: int,
                        specs: Sequence[ToolSpec]) -> int:
    """Tokens over the system reserve that adding this tool's definition to `specs` costs: the
    gauge counts the system prompt and the definitions as one, past the reserve."""
    system = counter.text(system_prompt)
    now = counter.text(definitions_text(tool_definitions(specs))) if specs else 0
    then = counter.text(definitions_text(tool_definitions(with_history_search(specs))))
    return max(0, system + then - reserve) - max(0, system + now - reserve)


def refused_alone(err: ProviderError, offered: Sequence[ToolSpec],
                  builtins: Sequence[ToolSpec]) -> ToolsRefused | None:
    """A request that offered built-in tools and nothing else, refused as a bad request (a
    4xx that is no overflow nor a tool's schema): a server or model without tools ("does not
    support tools"). Read as a refusal of the first of them, so the round goes again without
    it and it is not offered again; the conversation worked without tools before, and must
    after."""
    if type(err) is not RequestError or not 400 <= (err.status or 0) < 500:
        return None
    if not offered or any(spec not in builtins for spec in offered):
        return None
    return ToolsRefused(err.message, status=err.status, body=err.body, tool=offered[0].name)


def refusing_models(value: object) -> list[str]:
    """The models a session's meta says refused this tool (SEARCH_REFUSED_KEY)."""
    return [m for m in value if isinstance(m, str)] if isinstance(value, list) else []


def query_of(call: ToolCall) -> str | None:
    """The query a call asked for, or None when its arguments hold none (for showing it)."""
    try:
        query = call.parsed().get("query")
    except ValueError:
        return None
    return query if isinstance(query, str) and query.strip() else None


def shown_query(call: ToolCall, limit: int = 60) -> str:
    """The query as one line, quoted, for the conversation and `ask`: the arguments as written
    when they hold no query."""
    query = query_of(call)
    text = " ".join((query if query is not None else call.arguments or "{}").split())
    text = text if len(text) <= limit else text[:limit - 1] + "…"
    return f"'{text}'" if query is not None else text
