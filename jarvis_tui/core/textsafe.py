"""Text from a model, a paste or a server's error body, made safe to print to a terminal.

An ESC sequence in a reply could move the cursor, retitle the window (OSC 0) or write the
clipboard (OSC 52); printing it raw would let the model drive the user's terminal.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls; ESC starts every sequence.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Whole escape sequences first, so their parameters do not remain as visible junk.
_SEQUENCE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL/ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]"  # two-byte sequences
)


def terminal_safe(text: str) -> str:
    """`text` with escape sequences and control characters removed (newlines and tabs kept)."""
    if "\x1b" in text:
        text = _SEQUENCE.sub("", text)
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", text)

# A sequence with its terminator, and the start of one that the next chunk may finish.
_COMPLETE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[@-Z\\-_]"
)
_UNFINISHED = re.compile(r"\x1b(?:\][^\x07\x1b]*|\[[0-?]*[ -/]*|[PX^_][^\x1b]*)?\Z")
MAX_HELD = 1024  # a "sequence" longer than this is junk, not worth holding back


class SafeStream:
    """`terminal_safe` for a reply that arrives in chunks.

    Servers split text anywhere, so an escape sequence can straddle two chunks; cleaning each
    chunk alone would strip the ESC and print the rest ("]0;pwned"). An unfinished sequence at
    the end of a chunk is held back until the next chunk completes (or disproves) it.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = ""
        pos = 0
        while (i := text.find("\x1b", pos)) != -1:
            done = _COMPLETE.match(text, i)
            if done:
                pos = done.end()
                continue
            if len(text) - i < MAX_HELD and _UNFINISHED.match(text, i):
                self._held = text[i:]
                text = text[:i]
                break
            pos = i + 1
        return terminal_safe(text)

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return terminal_safe(rest)
