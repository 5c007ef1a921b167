"""The fenced code blocks of a message, found as the Markdown widget finds them.

markdown-it-py is the parser Textual's Markdown widget uses, so a block copied is a block the
user saw as one: a fence inside a list or a quote counts, a ``` inside a ~~~ fence does not. A
streamed reply cut off inside a fence still has that block (CommonMark runs an unclosed fence
to the end of the text), which is what the screen shows too.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt

PREVIEW_CHARS = 48

_parser = MarkdownIt("commonmark")


@dataclass(frozen=True)
class CodeBlock:
    lang: str  # the info string's first word ("python"), "" when the fence names none
    text: str  # the code, without the newline that ends its last line

    @property
    def lines(self) -> int:
        return self.text.count("\n") + 1 if self.text else 0

    def preview(self, chars: int = PREVIEW_CHARS) -> str:
        """The first line that has something on it, shortened to `chars`."""
        first = next((line.strip() for line in self.text.splitlines() if line.strip()), "")
        return first if len(first) <= chars else first[:chars - 1] + "…"


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced blocks of `markdown` that hold something, in order."""
    out = []
    for token in _parser.parse(markdown):
        if token.type == "fence" and token.content.strip():
            words = token.info.split()
            text = token.content[:-1] if token.content.endswith("\n") else token.content
            out.append(CodeBlock(words[0] if words else "", text))
    return out
