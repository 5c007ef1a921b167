"""Whether a text may be a memory entry: every request of every session carries memory, so an
entry is short, plain text, and never a secret (the scrubber's rules, and the secrets the app
was given, decide what one looks like)."""

from __future__ import annotations

from collections.abc import Iterable

from jarvis_tui.core.known_secrets import Scrubber
from jarvis_tui.core.redact import secret_in
from jarvis_tui.core.textsafe import terminal_safe

MAX_CHARS = 1000  # an entry is a fact or a preference, not a document


class MemoryRefused(Exception):
    """A text that cannot be a memory entry; its str() is the one line that says why."""


def refusal(text: str, known_secrets: Iterable[str] = ()) -> str | None:
    """One line saying why `text` cannot be stored as a memory entry, or None when it can.
    `known_secrets`: the app's own (the API key), refused whatever their shape."""
    stripped = text.strip()
    if not stripped:
        return "a memory entry needs some text"
    if len(stripped) > MAX_CHARS:
        return (f"memory entries are short: this one is {len(stripped):,} characters, the most "
                f"is {MAX_CHARS:,}; keep the fact or preference itself")
    if terminal_safe(stripped) != stripped:
        return "a memory entry is plain text: this one holds terminal control characters"
    scrub = Scrubber(known_secrets)
    if scrub(stripped) != stripped:
        return "a memory never holds a secret: this holds the API key jarvis-tui was given"
    if (what := secret_in(stripped)) is not None:
        return f"a memory never holds a secret: this looks like {what}"
    return None


def check(text: str, known_secrets: Iterable[str] = ()) -> str:
    """`text` as an entry is stored (trimmed), or MemoryRefused saying why it cannot be."""
    if (why := refusal(text, known_secrets)) is not None:
        raise MemoryRefused(why)
    return text.strip()
