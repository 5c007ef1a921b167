"""The next request, planned once: what a round sends, and what the "Next request" screen shows.

A round asks `plan_request(..., keep=True)` and sends `plan.fitted.wire` with `plan.defs`; the
preview asks the same function with `keep=False`, which decides the same things (the turns
recall brings, the tool outputs cut to their share, the window's fit) without keeping them.
So the inspector reads the very code that builds the request, not a copy that could drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jarvis_tui.core.budget import Budget, BudgetUsage
from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.next_request import (
    CUT,
    EXCLUDED,
    FOLDED,
    LEFT_OUT,
    MESSAGE,
    PINNED,
    RECALL,
    RECALLED,
    STUBBED,
    TOOLS,
    VERBATIM,
    NextRequest,
    RequestPart,
)
from jarvis_tui.core.recall.turns import Recalled
from jarvis_tui.core.tools.outputs import is_stub
from jarvis_tui.core.tools.results import definitions_text, tool_definitions
from jarvis_tui.core.window.fit import FittedWindow, fit_window, with_recalled
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD


@dataclass
class Plan:
    fitted: FittedWindow
    offered: list[ToolSpec]  # the tools offered, and their definitions as sent
    defs: list[dict[str, Any]]
    recalled: Recalled
    recalled_ids: tuple[int, ...]  # the stored ids of the turns recall brought back
    usage: BudgetUsage  # what the gauge counts, before windowing
    budget: Budget
    basis: RequestBasis  # what it was made of
    cut_now: bool = False  # a tool output was cut for the first time (kept: keep=True)


def plan_request(basis: RequestBasis, user: Message, *, shrink: float = 1.0, gap: int = 0,
                 offer_tools: bool = True, keep: bool = True) -> Plan:
    """The request answering `user`. `keep`: the round's own call; the decisions that must
    hold for later requests (recalled turns carried by `user`, tool outputs cut) are kept in
    the basis's `sent` and `tool_outputs`, so later requests send the same bytes. Otherwise
    `user` may be the text being typed (not stored; empty: nothing typed, the request as it
    stands), and nothing changes."""
    budget = basis.budget
    usage = basis.usage()  # a pass over the history: once per attempt, not twice
    room = int(budget.tokens * shrink) - usage.system_overflow - usage.memory
    # Again on each attempt: an overflow's compaction may have covered more turns.
    # Nothing typed: nothing to recall for (and no search of the index per redraw of marks).
    free = int(budget.tokens * shrink) - usage.used
    recalled = (basis.recall(user.content, shrink, user, max(0, free))
                if keep or user.content else Recalled())
    ids = tuple(m.id for turn in recalled.turns for m in turn if m.id is not None)
    offered = list(basis.specs) if offer_tools else []
    defs = tool_definitions(offered)
    history = active = basis.history.active
    if keep:
        basis.sent.carry(user, recalled.block, ids)
        sent_as = basis.sent.texts
        cut_now = basis.tool_outputs.shape(budget)
    else:
        sent_as = {**basis.sent.texts, **basis.tool_outputs.cuts(budget)[1]}
        if user.id is None and user.content:  # being typed: sent as the round will send it
            history = [*history, Message("user", with_recalled(recalled.block, user.content))]
        elif recalled.block:
            sent_as[user.id] = with_recalled(recalled.block, user.content)
        cut_now = False
    fitted = fit_window(history, budget=max(room, 64), counter=basis.counter.surcharged(gap),
                        system=basis.system,
                        pinned=basis.history.pinned if history is active else None,
                        sent_as=sent_as)
    return Plan(fitted, offered, defs, recalled, ids, usage, budget, basis, cut_now)


def next_request(basis: RequestBasis, pending: str = "") -> NextRequest:
    """The request the next round would send now, were `pending` sent: its parts, with their
    tokens, and each message's state. A round past the threshold compacts first
    (`compacts_first`): the preview cannot know that summary before it is written."""
    user = Message("user", pending)
    plan = plan_request(basis, user, keep=False)
    counter = basis.counter
    fitted = plan.fitted
    parts = _system_parts(fitted)
    block = plan.recalled.block
    sent = {id(m) for m in fitted.sent}
    for msg, wire in zip(fitted.sent, fitted.wire[len(fitted.wire) - len(fitted.sent):],
                         strict=True):
        text = wire.get("content") or ""
        # Counted as the fit counts it: the stored message, or the text sent in its place.
        tokens = (counter.message(msg) if text == msg.content
                  else counter.text(text) + MESSAGE_OVERHEAD)
        if block and msg is fitted.sent[-1] and msg.role == "user" and text.startswith(block):
            recall_tokens = counter.text(block)
            parts.append(RequestPart(RECALL, block, recall_tokens))
            text, tokens = text[len(block):].lstrip("\n"), max(0, tokens - recall_tokens)
        if wire.get("tool_calls"):  # read with the message, under the ids the wire gives them
            text = "\n".join(filter(None, (text, definitions_text(wire["tool_calls"]))))
        parts.append(RequestPart(MESSAGE, text, tokens, msg.role, msg.id,
                                 _state(msg, fitted, sent, set())))
    if plan.defs:
        tools_text = definitions_text(plan.defs)
        parts.append(RequestPart(TOOLS, tools_text, basis.definitions_tokens))
    # As the round weighs it: with the new message in the history (the plan's usage is
    # taken before it is added).
    over = basis.usage(pending).over_threshold if pending else plan.usage.over_threshold
    return NextRequest(parts, fitted.wire, plan.defs, _states(basis, plan, sent),
                       budget=plan.budget.tokens, compacts_first=over)


def request_states(basis: RequestBasis) -> dict[int, str]:
    """Each stored message of the branch shown -> its state in the next request (the marks in
    the conversation): the plan without counting its parts."""
    plan = plan_request(basis, Message("user", ""), keep=False)
    return _states(basis, plan, {id(m) for m in plan.fitted.sent})


def _states(basis: RequestBasis, plan: Plan, sent: set[int]) -> dict[int, str]:
    recalled = set(plan.recalled_ids) | basis.sent.carried_by_others(None)
    return {m.id: _state(m, plan.fitted, sent, recalled)
            for m in basis.history.all if m.id is not None}


def _system_parts(fitted: FittedWindow) -> list[RequestPart]:
    """The system message's parts as the fit counted them."""
    if fitted.system is None or not fitted.wire or fitted.wire[0]["role"] != "system":
        return []
    return [RequestPart(kind, piece, tokens) for kind, piece, tokens in fitted.system.parts()]


def _state(msg: Message, fitted: FittedWindow, sent: set[int], recalled: set[int]) -> str:
    if msg.excluded:
        return EXCLUDED
    if msg.id in recalled:
        return RECALLED
    if msg.covered and not msg.pinned:
        return FOLDED
    if msg.status == FAILED or id(msg) not in sent:
        return LEFT_OUT
    text = fitted.truncations.get(id(msg)) or fitted.sent_as.get(msg.id or 0, msg.content)
    if msg.role == "tool" and is_stub(text):
        return STUBBED
    if msg.content not in text:  # not a recall block in front of it: a head and a tail
        return CUT
    return PINNED if msg.pinned else VERBATIM
