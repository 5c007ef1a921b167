"""The details ledger: what a summary left out of the turns it folded in, kept word for word in
a section of its own below the summary, within its own token budget.

The section travels with the summary (the panel shows it, F2 edits it, requests send it), and
the next compaction reads it back: a detail the new summary states leaves the ledger, one it
does not stays. Over budget, the least salient go first (chat taken for a detail, a date line or
a bare number, before a detail from a pasted block or a tool's output, before one the assistant
said, before one the user said in their own words), then the least mentioned, then the oldest;
they stay in the store, where recall finds them. A detail not the user's own is marked with
where it came from, so that the next compaction reads it back with the same rank and the model
knows a log's error from one the user reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from jarvis_tui.core.details.extract import (
    SALIENCE,
    WEAK,
    Detail,
    details_of,
    extract,
    omitted,
    prose_of,
)
from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter

HEADER = "Details kept word for word (paths, numbers, commands, names, decisions):"
CONTEXT_KINDS = ("number", "time")  # shown with the words around them: what they measure
_ENTRY = re.compile(r"^- (\w+)(?: \((\w+)\))?: (.*?)(?: — (.*))?$")
MARKS = {"assistant": "reply", "summary": "summary", "paste": "paste", "tool": "tool"}
SOURCE_OF = {mark: source for source, mark in MARKS.items()}
DIGESTS = ("paste", "tool")  # kinds whose name says where they came from


def split(summary: str) -> tuple[str, list[Detail]]:
    """The summary's own text, and the ledger's details below it."""
    head, marker, tail = summary.partition("\n\n" + HEADER)
    if not marker:
        return summary, []
    entries = []
    for line in tail.splitlines():
        m = _ENTRY.match(line.strip())
        if m:
            kind, mark, text, context = m.groups()
            source = SOURCE_OF.get(mark or "", kind if kind in DIGESTS else "user")
            entries.append(Detail(kind, text, context or "", None, source))
    return head, entries


def entry(detail: Detail) -> str:
    mark = MARKS.get(detail.source) if detail.kind not in DIGESTS else None
    text = f"- {detail.kind}{f' ({mark})' if mark else ''}: {detail.text}"
    if detail.kind in CONTEXT_KINDS and detail.context and detail.context != detail.text:
        text += f" — {detail.context}"
    return text


def join(summary: str, details: Sequence[Detail]) -> str:
    if not details:
        return summary
    return summary.rstrip() + "\n\n" + HEADER + "\n" + "\n".join(entry(d) for d in details)


def left_out(summary: str, previous: str | None, folded: Sequence[Message]) -> list[Detail]:
    """What `summary` does not state of the previous summary's ledger, the details the
    previous summary stated and the details of the turns just folded in, oldest first, each
    once."""
    body, _ = split(summary)
    said, kept = split(previous or "")
    candidates: list[Detail] = []
    seen: set[tuple[str, str]] = set()
    # What the previous summary stated is checked again: a summary of a summary drops details
    # too, and the turns that said them are long gone from what is folded in.
    for detail in [*kept, *extract(said, source="summary"), *details_of(folded)]:
        key = (detail.kind, detail.text.lower())
        if key not in seen:
            seen.add(key)
            candidates.append(detail)
    left = omitted(candidates, body)
    # A number inside a decision or an error kept whole is said there already; not when the
    # whole is less salient (a path the user said, in the digest of a paste named after it).
    return [d for d in left if not any(d is not o and d.text in o.text and len(d.text)
                                       < len(o.text) and o.salience <= d.salience
                                       for o in left)]


def ledger_for(summary: str, previous: str | None, folded: Sequence[Message],
               conversation: Sequence[Message], counter: TokenCounter, budget: int) -> str:
    """`summary` with the ledger of what it leaves out (left_out), within `budget` tokens.
    A budget of 0 keeps no ledger."""
    body, _ = split(summary)  # a summariser that copied the old section: it is rebuilt
    if budget <= 0:
        return body
    left = left_out(body, previous, folded)
    texts = [(m.role, m.content.lower(), m.content) for m in conversation]  # once, not per detail
    mentioned = [0] * len(left)
    salience = [d.salience for d in left]
    for i, d in enumerate(left):
        low = d.text.lower()
        for role, text, content in texts:
            if low in text:
                mentioned[i] += 1
                # Said by the user in their own words somewhere: as salient as that, whatever
                # the copy it was read from (a summary of a summary keeps no source).
                if 0 < salience[i] < WEAK and role in ("user", "assistant") and (
                        low in prose_of(content).lower()):
                    if SALIENCE[role] < salience[i]:
                        salience[i] = SALIENCE[role]
                        left[i] = replace(d, source=role)
    # Each entry with its line break, the header with the blank line above it: the section as
    # join() writes it, so what is sent is what was counted.
    sizes = [counter.text(entry(d) + "\n") for d in left]
    chosen = set(range(len(left)))
    total = sum(sizes) + counter.text("\n\n" + HEADER)
    # Least salient, then least mentioned, then oldest.
    order = sorted(chosen, key=lambda i: (-salience[i], mentioned[i], i))
    for i in order:
        if total <= budget:
            break
        chosen.discard(i)
        total -= sizes[i]
    # The parts' counts add up to the whole's only about as well as the estimator splits text.
    while chosen and counter.text(section(left[i] for i in sorted(chosen))) > budget:
        chosen.discard(next(i for i in order if i in chosen))
    return join(body, [left[i] for i in sorted(chosen)])


def section(details: Iterable[Detail]) -> str:
    """The ledger as it is appended below a summary: what its budget holds."""
    return join("", list(details))
