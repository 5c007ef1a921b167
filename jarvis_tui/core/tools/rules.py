"""Allow rules: which (server, tool) pairs run without asking.

Every rule and every "always" answer names the server as well as the tool: two servers may offer
tools of the same name (`read` of a notes server and `read` of a file server), and consent to one
is no consent to the other. A rule is a pair; "*" stands for any tool of a server, or any server.

`--allow-tool` names a rule as SERVER.TOOL, SERVER.* or *; a bare TOOL (or the name the model
is told, SERVER_TOOL where two servers share a tool) is taken only when it points at exactly one
server's tool, else it is refused with the names that would say which.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jarvis_tui.core.calls.specs import ToolSpec

ANY = "*"
Rule = tuple[str, str]  # (server, tool); ANY in either place


def key_of(spec: ToolSpec) -> Rule:
    """The pair a rule about this tool names: where it really lives."""
    return (spec.server, spec.tool or spec.name)


def allow_flag(spec: ToolSpec) -> str:
    """How `--allow-tool` names this tool alone."""
    server, tool = key_of(spec)
    return f"{server}.{tool}" if server else tool


def matches(rules: Iterable[Rule], spec: ToolSpec) -> bool:
    server, tool = key_of(spec)
    wanted = {(server, tool), (server, ANY), (ANY, ANY)}
    return any(rule in wanted for rule in rules)


class AmbiguousName(ValueError):
    """A bare name that more than one server's tool answers to."""


@dataclass(frozen=True)
class Resolved:
    rules: set[Rule]
    unknown: list[str]  # names no running server offers (a typo, or a server that failed)


def resolve(names: Iterable[str], specs: Iterable[ToolSpec]) -> Resolved:
    """The rules `--allow-tool NAME...` gives, against the tools offered now; raises
    AmbiguousName (one line saying how to name one server's tool) for a bare name offered by
    several servers."""
    specs = list(specs)
    rules: set[Rule] = set()
    unknown: list[str] = []
    for name in names:
        if name == ANY:
            rules.add((ANY, ANY))
            continue
        if name.endswith("." + ANY):  # server names may hold dots themselves (docs.search)
            rules.add((name[:-2], ANY))  # a server that failed to start offers nothing
            continue
        exact = [s for s in specs if s.server and f"{s.server}.{s.tool}" == name]
        hits = exact or [s for s in specs if s.name == name] or [
            s for s in specs if s.tool == name]
        where = sorted({key_of(s) for s in hits})
        if len(where) > 1:
            flags = " or ".join(f"--allow-tool {allow_flag(s)}" for s in
                                sorted(hits, key=key_of))
            raise AmbiguousName(
                f"--allow-tool {name}: the servers {', '.join(srv for srv, _ in where)} each "
                f"offer a tool named {name}; allow one server's with {flags}")
        if where:
            rules.add(where[0])
        else:
            unknown.append(name)
    return Resolved(rules, unknown)
