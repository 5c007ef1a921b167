"""The system message, told apart where it is put together: the configured prompt, the user's
memory, the summary under its header and the details ledger. The fitter counts it once
(`SystemCount`) and returns the count with the request; the gauge, the plan, a compaction's
prefix and the inspector read that one account instead of counting or splitting the message
again (a prompt that quotes the ledger's header would split wrongly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from jarvis_tui.core.next_request import LEDGER, MEMORY, SUMMARY, SYSTEM
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD, TokenCounter

SUMMARY_HEADER = (
    "Summary of the earlier part of this conversation (older turns were compacted into it; "
    "the most recent turns follow verbatim):"
)


def system_text(system_prompt: str, summary: str | None, note: str = "") -> str:
    """The system message: the prompt, then the summary. One message, because strict chat
    templates (Gemma, Mistral) reject a second system message or one in the middle. `note`:
    a line under the header (how to search what the summary folded in)."""
    if not summary:
        return system_prompt
    header = f"{SUMMARY_HEADER}\n{note}" if note else SUMMARY_HEADER
    return f"{system_prompt}\n\n{header}\n{summary}".strip()


@dataclass(frozen=True)
class SystemMessage:
    prompt: str = ""  # the configured prompt
    memory: str = ""  # the user's memory, as sent
    summary_head: str = ""  # the summary before its details ledger
    ledger: str = ""  # the ledger, from its header on ("": none)
    note: str = ""  # the line under the summary's header

    @property
    def front(self) -> str:
        """The prompt, then the memory: what every request starts with, summary or none."""
        prompt, memory = self.prompt, self.memory
        return f"{prompt}\n\n{memory}" if prompt and memory else prompt or memory

    @property
    def summary(self) -> str:
        """The summary as stored: its head, then the ledger after a blank line."""
        return f"{self.summary_head}\n\n{self.ledger}" if self.ledger else self.summary_head

    @cached_property
    def text(self) -> str:
        return system_text(self.front, self.summary, self.note)

    def with_summary(self, summary: str, note: str | None = None) -> SystemMessage:
        """This message with another summary (one a compaction proposes), told apart as one
        piece: what it adds is counted whole."""
        return replace(self, summary_head=summary, ledger="",
                       note=self.note if note is None else note)

    def parts(self) -> list[tuple[str, str]]:
        """(kind, text) in the order sent, next_request's kinds; joined by blank lines they are
        `text`, byte for byte."""
        pieces = [(SYSTEM, self.prompt), (MEMORY, self.memory)]
        summary = self.summary
        if summary:
            header = f"{SUMMARY_HEADER}\n{self.note}" if self.note else SUMMARY_HEADER
            pieces += [(SUMMARY, f"{header}\n{self.summary_head}"), (LEDGER, self.ledger)]
        pieces = [(kind, text) for kind, text in pieces if text]
        if summary:  # system_text strips the whole message when a summary is in it
            while pieces and not pieces[0][1].lstrip():
                pieces.pop(0)
            if pieces:
                pieces[0] = (pieces[0][0], pieces[0][1].lstrip())
                pieces[-1] = (pieces[-1][0], pieces[-1][1].rstrip())
        return pieces


@dataclass(frozen=True)
class SystemCount:
    """A system message counted once, by one counter."""

    message: SystemMessage
    counter: TokenCounter
    front: int  # tokens of the prompt and memory as one text
    summary: int  # what the summary adds: its header, note and ledger included

    @property
    def tokens(self) -> int:
        """The whole message's text (with no summary, the front)."""
        return self.front + self.summary

    def by(self, counter: TokenCounter) -> SystemCount:
        """This count as `counter` makes it: itself when it is the counter that made it (a
        retry's surcharged counter counts again)."""
        return self if counter is self.counter else count_system(self.message, counter)

    def parts(self) -> list[tuple[str, str, int]]:
        """parts() of the message, each with its own tokens; the first prompt piece carries
        the message's framing."""
        return [(kind, text, self.counter.text(text) + (MESSAGE_OVERHEAD if kind == SYSTEM
                                                        else 0))
                for kind, text in self.message.parts()]


def count_system(message: SystemMessage, counter: TokenCounter) -> SystemCount:
    front = counter.text(message.front)
    summary = counter.text(message.text) - front if message.summary else 0
    return SystemCount(message, counter, front, summary)
