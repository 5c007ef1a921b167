"""What requests sent in place of a message's stored content, so later requests send the same
bytes: each one then starts with the one before, and the provider's prompt cache serves all but
the new turn.

A message is sent otherwise when it was cut to fit, or when a user message carried turns recall
brought back (those are placed in the newest user message, never the system message).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.turns import RECALL_HEADERS
from jarvis_tui.core.window.fit import with_recalled


class SentTexts:
    def __init__(self) -> None:
        self.texts: dict[int, str] = {}  # message id -> the text sent instead of its content
        self._carried: dict[int, frozenset[int]] = {}  # user message id -> the ids it recalled

    def carried_by_others(self, user: Message | None) -> frozenset[int]:
        """Turns an earlier message still in the request carries: they are there already."""
        return frozenset().union(*(ids for mid, ids in self._carried.items()
                                   if user is None or mid != user.id))

    def carry(self, user: Message, block: str, ids: Iterable[int]) -> None:
        """`user` is sent with these recalled turns in front of it (or, with no block, as it
        is)."""
        if user.id is None:
            return
        if block:
            self.texts[user.id] = with_recalled(block, user.content)
            self._carried[user.id] = frozenset(ids)
        else:
            self.drop(user)

    def drop(self, message: Message) -> None:
        if message.id is not None:
            self.texts.pop(message.id, None)
            self._carried.pop(message.id, None)

    def record(self, sent: Mapping[int, str]) -> None:
        """What an answered request sent cut to fit."""
        self.texts.update(sent)

    def cut(self, message: Message) -> bool:
        """Sent cut to fit: its stored content is not all in what was sent."""
        return message.content not in self.texts.get(message.id or 0, message.content)

    def compacted(self, kept: Iterable[Message]) -> None:
        """The front changed anyway: recalled turns a kept message carried are let go (they
        would fill the window for good); a message cut to fit is still sent cut."""
        self.texts = {m.id: text for m in kept
                      if m.id is not None and (text := self.texts.get(m.id)) is not None
                      and not text.startswith(RECALL_HEADERS)}
        self._carried.clear()

    def clear(self) -> None:
        self.texts.clear()
        self._carried.clear()
