"""Which parts of a user's message were pasted rather than typed: [start, end) character spans
of its text, kept with the message. Only what the user typed is read for memory suggestions
(core/memory/suggest.py): a pasted document is someone else's words, whatever its shape.

The prompt keeps the spans as the user edits (ui/widgets/prompt_input.py); `ask -` marks all
of standard input. The rules are conservative: text typed inside a pasted span becomes part of
it (an edited paste is still a paste), text typed just before or after it stays typed.
"""

from __future__ import annotations

from collections.abc import Iterable

Spans = tuple[tuple[int, int], ...]
NONE: Spans = ()


def tidy(spans: Iterable[Iterable[int]], length: int) -> Spans:
    """`spans` sorted, cut to a text of `length` characters, empty ones dropped, and those that
    overlap or touch merged into one. Anything that is not a pair of whole numbers is left
    out (a stored field edited by hand)."""
    pairs = []
    for span in spans:
        try:
            start, end = span
        except (TypeError, ValueError):
            continue
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
            continue
        start, end = max(0, start), min(length, end)
        if start < end:
            pairs.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(pairs):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def inserted(spans: Spans, at: int, count: int, *, pasted: bool = False) -> Spans:
    """The spans once `count` characters are put in at `at`: pasted ones become a span; typed
    ones strictly inside a pasted span join it, typed ones at its edge stay typed."""
    out = []
    for start, end in spans:
        if at <= start:
            out.append((start + count, end + count))
        elif at >= end:
            out.append((start, end))
        else:
            out.append((start, end + count))
    if pasted:
        out.append((at, at + count))
    return tidy(out, max((end for _, end in out), default=0))


def deleted(spans: Spans, start: int, stop: int) -> Spans:
    """The spans once the characters [start, stop) are taken out."""
    gone = stop - start

    def moved(x: int) -> int:
        return x if x <= start else start if x <= stop else x - gone

    out = [(moved(a), moved(b)) for a, b in spans]
    return tuple((a, b) for a, b in out if a < b)


def shifted(spans: Spans, by: int) -> Spans:
    """The spans of a text once `by` characters are put before it."""
    return tuple((start + by, end + by) for start, end in spans)


def typed_text(text: str, spans: Spans) -> str:
    """What the user typed of `text`: each pasted span becomes a line break, so the words on
    either side of a paste never join into one sentence."""
    if not spans:
        return text
    parts, at = [], 0
    for start, end in tidy(spans, len(text)):
        parts.append(text[at:start])
        parts.append("\n")
        at = end
    parts.append(text[at:])
    return "".join(parts)
