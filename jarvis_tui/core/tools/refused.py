"""Tools a provider refused to be told of, left out of later requests.

One tool whose schema the provider will not take (an MCP server's mistake) makes every request
that offers it a 400, so the whole conversation would stop while its server is up. The refusal
points at the tool by name, by place or by quoting its schema; that tool is left out and the
request goes again. It is keyed by its server, its name there and its schema, so the same tool
described anew (the server fixed, restarted) is offered again.
"""

from __future__ import annotations

import json

from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.providers.errors import ToolsRefused


class RefusedTools:
    def __init__(self) -> None:
        self._keys: set[tuple[str, str, str]] = set()

    def offered(self, specs: list[ToolSpec]) -> list[ToolSpec]:
        """`specs` without those refused before."""
        return [s for s in specs if _key(s) not in self._keys] if self._keys else specs

    def leave_out(self, err: ToolsRefused, sent: list[ToolSpec]) -> ToolSpec | None:
        """The tool of `sent` (in the order the request listed them) that `err` points at, now
        left out; None when it points at none of them (then nothing changes)."""
        spec = culprit(err, sent)
        if spec is None or _key(spec) in self._keys:
            return None  # refused again without it: leaving out more would only guess
        self._keys.add(_key(spec))
        return spec


def culprit(err: ToolsRefused, sent: list[ToolSpec]) -> ToolSpec | None:
    if err.tool is not None:
        for spec in sent:
            if err.tool in (spec.name, spec.tool):
                return spec
    if err.index is not None and 0 <= err.index < len(sent):
        return sent[err.index]
    if err.schema is not None:
        found = [s for s in sent if _holds(s.parameters, err.schema)]
        if len(found) == 1:  # a schema part two tools share names neither for sure
            return found[0]
    return None


def _holds(schema: object, part: object) -> bool:
    """Whether `part` is `schema` or a value anywhere inside it."""
    if schema == part:
        return True
    if isinstance(schema, dict):
        return any(_holds(v, part) for v in schema.values())
    if isinstance(schema, list):
        return any(_holds(v, part) for v in schema)
    return False


def _key(spec: ToolSpec) -> tuple[str, str, str]:
    return spec.server, spec.tool or spec.name, json.dumps(spec.parameters, sort_keys=True)
