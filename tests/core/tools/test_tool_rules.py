"""Allow rules keyed by (server, tool): what `--allow-tool` names, and what a rule lets run."""

from __future__ import annotations

import pytest

from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.engine.tool_round import ToolPolicy
from jarvis_tui.core.tools.rules import AmbiguousName, allow_flag, matches, resolve

A_READ = ToolSpec("a_read", "", {}, "a", "read")
B_READ = ToolSpec("b_read", "", {}, "b", "read")
B_LIST = ToolSpec("list", "", {}, "b", "list")
SPECS = [A_READ, B_READ, B_LIST, ToolSpec("find", "", {}, "docs.search", "find")]


@pytest.mark.parametrize("names, rules", [
    (["a.read"], {("a", "read")}),
    (["a_read"], {("a", "read")}),  # the name the model is told is one server's tool
    (["list"], {("b", "list")}),  # a bare name one server offers
    (["b.*"], {("b", "*")}),
    (["*"], {("*", "*")}),
    (["docs.search.*"], {("docs.search", "*")}),  # a server name with a dot
    (["docs.search.find"], {("docs.search", "find")}),
])
def test_each_form_names_its_rule(names, rules):
    assert resolve(names, SPECS).rules == rules


def test_a_bare_name_two_servers_offer_is_refused_saying_how_to_name_one():
    with pytest.raises(AmbiguousName) as err:
        resolve(["read"], SPECS)
    line = str(err.value)
    assert "\n" not in line
    assert "--allow-tool a.read" in line and "--allow-tool b.read" in line


def test_a_name_no_server_offers_is_reported_not_allowed():
    resolved = resolve(["reed", "c.read"], SPECS)
    assert resolved.rules == set() and resolved.unknown == ["reed", "c.read"]


def test_a_rule_for_one_servers_tool_matches_no_other():
    rules = {("a", "read")}
    assert matches(rules, A_READ) and not matches(rules, B_READ)
    assert matches({("b", "*")}, B_READ) and not matches({("b", "*")}, A_READ)
    assert matches({("*", "*")}, A_READ)


def test_the_policy_keeps_always_per_server():
    policy = ToolPolicy(always={("a", "read")})
    assert policy.allows(A_READ, None) and not policy.allows(B_READ, None)


def test_the_flag_named_in_a_refusal_is_the_one_servers_form():
    assert allow_flag(B_READ) == "b.read"
    assert allow_flag(ToolSpec("t", "", {})) == "t"  # a box with no servers
