"""The memory as the model reads it: one section of the system message, after the configured
prompt, within its own token budget.

Pinned entries first, then the newest; the section stops at the first entry that would pass
the budget, so what is sent is always the top of that order and the rest is said to be left out
(the Memory screen shows which). It is built from the entries alone, so the same memory gives
the same bytes, and the provider's prompt cache keeps the front of every request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from jarvis_tui.core.safety.textsafe import without_invisible
from jarvis_tui.core.store.records import MemoryEntry

HEADER = "What the user asked you to remember (from earlier sessions):"


class Counts(Protocol):
    def text(self, text: str) -> int: ...


@dataclass(frozen=True)
class MemorySection:
    """What a request carries of the memory: `text` (empty: no section at all), the ids of
    the entries it holds and of the active ones left out for the budget, in the order they
    are ranked, and its tokens."""

    text: str
    sent: tuple[int, ...]
    left_out: tuple[int, ...]
    tokens: int


EMPTY = MemorySection("", (), (), 0)


def ranked(entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
    """Active entries in the order they are sent: pinned first, then newest first."""
    return sorted((e for e in entries if e.state == "active"),
                  key=lambda e: (not e.pinned, -e.created_at, -e.id))


def memory_section(entries: Iterable[MemoryEntry], counter: Counts,
                   budget_tokens: int) -> MemorySection:
    """The section of `entries` (only active ones count) within `budget_tokens`."""
    order = ranked(entries)
    lines = [HEADER]
    tokens = 0
    for entry in order:
        # One bullet, one line, of what the user can see: an entry stored before the store
        # removed characters that show nothing must not carry words the user never saw.
        line = "- " + " ".join(without_invisible(entry.text).split())
        size = counter.text("\n".join([*lines, line]))
        if size > budget_tokens:
            break
        lines.append(line)
        tokens = size
    sent = len(lines) - 1
    if not sent:
        return MemorySection("", (), tuple(e.id for e in order), 0)
    return MemorySection("\n".join(lines), tuple(e.id for e in order[:sent]),
                         tuple(e.id for e in order[sent:]), tokens)
