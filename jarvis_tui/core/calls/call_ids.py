"""Tool-call ids unique in a reply, for replies as they arrive and for replies stored before.

A result names the call it answers by id, and Anthropic refuses a request in which two tool_use
blocks share one (`messages.1.content.2: tool_use ids must be unique`). Servers send `dup`,
`dup` and `` in one reply; a reply stored that way before its ids were made unique would make
every later request of its session a 400, so requests repair it on the way out too.
"""

from __future__ import annotations

from typing import Any


def unique_ids(ids: list[str], prefix: str = "call_") -> list[str]:
    """`ids` with each one unique: a missing one becomes `<prefix><n>`, one an earlier call
    already has becomes `<id>_<n>` (n: its place), never one another call has."""
    taken = {cid for cid in ids if cid}
    seen: set[str] = set()
    out: list[str] = []
    for n, cid in enumerate(ids):
        if not cid or cid in seen:
            base = f"{cid}_" if cid else prefix
            fresh, k = f"{base}{n}", n
            while fresh in taken:
                k += len(ids)
                fresh = f"{base}{k}"
            cid = fresh
            taken.add(cid)
        seen.add(cid)
        out.append(cid)
    return out


def with_unique_call_ids(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages with the calls of each assistant message unique by id, and its
    results renamed with them: the n-th result naming an id answers the n-th call of that id.
    Messages that need nothing are the same objects, so the request's bytes stay those sent
    before (the provider's cache), and nothing stored is changed."""
    out = wire
    for i, msg in enumerate(wire):
        calls = msg.get("tool_calls") if msg.get("role") == "assistant" else None
        if not isinstance(calls, list):
            continue
        ids = [str(c.get("id") or "") if isinstance(c, dict) else "" for c in calls]
        fresh = unique_ids(ids)
        if fresh == ids:
            continue
        if out is wire:
            out = list(wire)
        pending: dict[str, list[str]] = {}
        for old, new in zip(ids, fresh, strict=True):
            pending.setdefault(old, []).append(new)
        out[i] = {**msg, "tool_calls": [{**c, "id": new} if isinstance(c, dict) else c
                                        for c, new in zip(calls, fresh, strict=True)]}
        j = i + 1
        while j < len(wire) and wire[j].get("role") == "tool":
            answers = pending.get(str(wire[j].get("tool_call_id") or ""))
            if answers:
                out[j] = {**wire[j], "tool_call_id": answers.pop(0)}
            j += 1
    return out
