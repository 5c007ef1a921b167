"""A message too large to show whole: its head, a line saying what is not shown and how to see
it, and its tail.

Rendering costs memory by the character: a 10 MB reply as Markdown held 2.5 GB (markdown-it's
tokens, a widget per block, Rich's lines and Textual's strips of every row), and 1.2 GB stayed
after Ctrl+N (issue 25, item 19). Past CUT_AT characters the conversation shows the first
few screens (HEAD, HEAD_LINES) and the last TAIL characters, so what a message costs on screen
has a ceiling whatever its size. The stored message stays whole: the full-text view (V in
message mode, screens/full_text.py) draws only the rows on screen, and /export and F4 take all
of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.texts.i18n import Texts

# Replies up to ~12k tokens are shown whole; past this they are cut. Far above what a model
# writes under a usual max_tokens, so a real reply is rarely cut.
CUT_AT = 50_000
# The start shown of a cut message: a few screens. Lines count too, as Markdown mounts a widget
# per block, and a head of short paragraphs would be thousands of widgets.
HEAD = 10_000
HEAD_LINES = 100
TAIL = 2_000  # characters of the end shown below the line, as plain text (one widget)

HUGE_TEXT_TEXTS = Texts(
    en={"cut": "✂ {hidden} characters ({lines} lines) of {total} not shown here; the last "
               "{tail} below. To read it all: Tab, select this message, V (a view that scrolls "
               "through the whole text); /export writes it to a file, F4 copies it.",
        "streaming": "✂ {hidden} characters not shown while the reply streams; its end "
                     "shows below."},
    zh={"cut": "✂ 共 {total} 个字符，此处未显示其中 {hidden} 个（{lines} 行）；下方显示最后 "
               "{tail} 个。阅读全文：按 Tab 选中这条消息后按 V（可滚动浏览全文）；/export "
               "导出到文件，F4 复制。",
        "streaming": "✂ 回复输出中，有 {hidden} 个字符未显示；结尾显示在下方。"},
)


@dataclass(frozen=True)
class Cut:
    head: str
    tail: str
    total: int  # characters of the whole message
    hidden_lines: int

    @property
    def hidden(self) -> int:
        return self.total - len(self.head) - len(self.tail)


def head_end(text: str) -> int:
    """Where the head ends: after HEAD_LINES lines or HEAD characters, whichever comes first,
    at a line break when one keeps most of it, so the head does not stop mid-line."""
    limit = min(HEAD, len(text))
    pos = 0
    for _ in range(HEAD_LINES):
        newline = text.find("\n", pos, limit)
        if newline < 0:
            break
        pos = newline + 1
    else:
        return pos
    newline = text.rfind("\n", limit // 2, limit)
    return newline + 1 if newline >= 0 and limit < len(text) else limit


def tail_start(text: str) -> int:
    """Where the tail begins: at the start of a line of text within the last TAIL characters
    when there is one in its first half."""
    size = TAIL
    start = max(0, len(text) - size)
    newline = text.find("\n", start, start + size // 2)
    if not start or newline < 0:
        return start
    start = newline + 1
    while start < len(text) - 1 and text[start] == "\n":  # not from a blank line
        start += 1
    return start


def cut(text: str, head: int | None = None) -> Cut | None:
    """Head and tail of a message past CUT_AT characters; None when it is shown whole.
    `head`: how much of it is shown above the line already (a streamed reply's)."""
    if len(text) <= CUT_AT:
        return None
    end = head_end(text) if head is None else min(head, len(text))
    start = max(tail_start(text), end)
    return Cut(text[:end], text[start:], len(text), text.count("\n", end, start))


def marker(lang: str, part: Cut) -> str:
    return HUGE_TEXT_TEXTS(lang, "cut", hidden=f"{part.hidden:,}", lines=f"{part.hidden_lines:,}",
                           total=f"{part.total:,}", tail=f"{len(part.tail):,}")


def streaming_marker(lang: str, hidden: int) -> str:
    return HUGE_TEXT_TEXTS(lang, "streaming", hidden=f"{hidden:,}")
