"""The details ledger: what a summary left out of the turns it folded in, kept word for word in
a section of its own below the summary, within its own token budget.

The section travels with the summary (the panel shows it, F2 edits it, requests send it), and
the next compaction reads it back: a detail the new summary states leaves the ledger, one it
does not stays. Over budget, the least-mentioned and then the oldest go first; they stay in the
store, where recall finds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from jarvis_tui.core.details import Detail, details_of, extract, omitted
from jarvis_tui.core.messages import Message
from jarvis_tui.core.tokens import TokenCounter

HEADER = "Details kept word for word (paths, numbers, commands, names, decisions):"
CONTEXT_KINDS = ("number", "time")  # shown with the words around them: what they measure
_ENTRY = re.compile(r"^- (\w+): (.*?)(?: — (.*))?$")


def split(summary: str) -> tuple[str, list[Detail]]:
    """The summary's own text, and the ledger's details below it."""
    head, marker, tail = summary.partition("\n\n" + HEADER)
    if not marker:
        return summary, []
    entries = []
    for line in tail.splitlines():
        m = _ENTRY.match(line.strip())
        if m:
            entries.append(Detail(m.group(1), m.group(2), m.group(3) or ""))
    return head, entries


def entry(detail: Detail) -> str:
    text = f"- {detail.kind}: {detail.text}"
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
    for detail in [*kept, *extract(said), *details_of(folded)]:
        key = (detail.kind, detail.text.lower())
        if key not in seen:
            seen.add(key)
            candidates.append(detail)
    left = omitted(candidates, body)
    # A number inside a decision or an error kept whole is said there already.
    return [d for d in left if not any(d is not o and d.text in o.text and len(d.text)
                                       < len(o.text) for o in left)]


def ledger_for(summary: str, previous: str | None, folded: Sequence[Message],
               conversation: Sequence[Message], counter: TokenCounter, budget: int) -> str:
    """`summary` with the ledger of what it leaves out (left_out), within `budget` tokens.
    A budget of 0 keeps no ledger."""
    body, _ = split(summary)  # a summariser that copied the old section: it is rebuilt
    if budget <= 0:
        return body
    left = left_out(body, previous, folded)
    texts = [m.content.lower() for m in conversation]  # once, not once per detail
    mentioned = [sum(d.text.lower() in t for t in texts) for d in left]
    # Each entry with its line break, the header with the blank line above it: the section as
    # join() writes it, so what is sent is what was counted.
    sizes = [counter.text(entry(d) + "\n") for d in left]
    chosen = set(range(len(left)))
    total = sum(sizes) + counter.text("\n\n" + HEADER)
    order = sorted(chosen, key=lambda i: (mentioned[i], i))  # least mentioned, then oldest
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
