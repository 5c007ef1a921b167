"""Text from a model, a paste or a server's error body, made safe to print to a terminal.

An ESC sequence in a reply could move the cursor, retitle the window (OSC 0) or write the
clipboard (OSC 52); printing it raw would let the model drive the user's terminal. Terminals
also accept the 8-bit C1 forms (U+009B is CSI, U+009D is OSC, U+009C is ST), so those count too.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls; ESC starts every sequence.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# The pieces of a sequence, shared by the whole-text and the streaming patterns.
_OSC = r"(?:\x1b\]|\x9d)"
_OSC_BODY = r"[^\x07\x1b\x9c\x9d]*"
_OSC_END = r"(?:\x07|\x1b\\|\x9c)"
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*"  # parameters and intermediates; a final byte ends it
_STRING = r"(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])"  # DCS, SOS, PM, APC: a string until ST
_STRING_BODY = r"[^\x1b\x9c]*"
_STRING_END = r"(?:\x1b\\|\x9c)"
# ESC + intermediates + final (nF: ESC ( B), or ESC + one final (ESC 7, ESC M, ESC c). The
# introducers [ ] P X ^ _ are left out so a sequence cut short is never taken for a finished one.
_SHORT = r"\x1b(?:[ -/]+[0-~]|[0-OQ-WYZ\\`-~])"

# Whole escape sequences first, so their parameters do not remain as visible junk. A string
# sequence that never ends is dropped to the end of its line only, so the rest of a reply stays.
_SEQUENCE = re.compile(
    f"{_OSC}(?:{_OSC_BODY}{_OSC_END}|[^\\x07\\x1b\\x9c\\x9d\\n]*)"
    f"|{_CSI}[@-~]"
    f"|{_STRING}(?:{_STRING_BODY}{_STRING_END}|[^\\x1b\\x9c\\n]*)"
    f"|{_SHORT}"
)
_HAS_SEQUENCE = re.compile(r"[\x1b\x90\x98\x9b\x9d\x9e\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with escape sequences and control characters removed (newlines and tabs kept)."""
    if _HAS_SEQUENCE.search(text):
        text = _SEQUENCE.sub("", text)
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", text)


# A sequence with its terminator, and the start of one that the next chunk may finish.
_COMPLETE = re.compile(
    f"{_OSC}{_OSC_BODY}{_OSC_END}|{_CSI}[@-~]|{_STRING}{_STRING_BODY}{_STRING_END}|{_SHORT}"
)
_UNFINISHED = re.compile(
    f"(?:\\x1b[ -/]*|{_OSC}{_OSC_BODY}\\x1b?|{_CSI}|{_STRING}{_STRING_BODY}\\x1b?)\\Z"
)
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
        while found := _HAS_SEQUENCE.search(text, pos):
            i = found.start()
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


# -- characters that show nothing ----------------------------------------------------------------

# Every Unicode format character (category Cf), and the line and paragraph separators. They show
# nothing themselves but change what is around them: U+202E reverses the text after it, so a
# terminal that applies bidi shows "rm -rf ~" as "~ fr- mr" and a border after it moves; U+200B
# makes two names that look the same differ; tag characters (U+E0020-E007F) are text a model
# reads and a user never sees. tests/core/safety/test_textsafe_visible.py checks this against
# unicodedata.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]")


def visible(text: str) -> str:
    """`terminal_safe`, with each character that shows nothing written out as <U+202E>: for
    what a model or a tool server names, describes or passes to a tool, which the user reads to
    decide whether to let it run, so nothing in it may be hidden or reordered."""
    text = terminal_safe(text)
    if not _INVISIBLE.search(text):
        return text
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def without_invisible(text: str) -> str:
    """`text` with every character that shows nothing removed: for text that is kept and sent
    again (a memory entry), where what the user never saw must not stay, and writing it out as
    visible() does would put "<U+200B>" in what is kept."""
    return _INVISIBLE.sub("", text)


def json_escaped(json_text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with each character that shows nothing
    written as its \\u escape (a surrogate pair past U+FFFF): the same JSON to a reader, and
    nothing hidden from someone reading it in a terminal."""
    def escape(m: re.Match[str]) -> str:
        units = m.group().encode("utf-16-be")
        return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}"
                       for i in range(0, len(units), 2))
    return _INVISIBLE.sub(escape, json_text)


def invisible_count(text: str) -> int:
    """How many characters of `text` show nothing (the ones without_invisible removes)."""
    return len(_INVISIBLE.findall(text))


def tag_spelling(text: str) -> str:
    """What the tag characters in `text` spell: U+E0020-U+E007E mirror ASCII 0x20-0x7E, so a
    model reads them as the words they copy ("ASCII smuggling") while a terminal shows nothing.
    The cancel tag and the language tag spell nothing."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if "\U000e0020" <= c <= "\U000e007e")


# -- text that is not valid Unicode --------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """`text` as valid Unicode: surrogate halves that pair up are joined into their character
    (JSON's "\\ud83d\\ude00" is 😀), lone ones become U+FFFD. Such text cannot be encoded as
    UTF-8, so it could be neither stored nor printed."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """`valid_unicode` for a reply that arrives in pieces: servers that stream per UTF-16 unit
    send an emoji as two events, a high surrogate in one and the low one in the next, so a high
    half at the end of a piece is held until the next piece completes it."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        text, self._held = self._held + text, ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return valid_unicode(text)

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return valid_unicode(rest)
