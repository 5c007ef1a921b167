"""What the prompt walks with Up and Down: the messages the user sent, newest first."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jarvis_tui.core.messages import Message

HISTORY_LIMIT = 500  # entries a walk can reach; further back, /recall finds old turns


@dataclass(frozen=True)
class HistoryEntry:
    text: str
    # The stored message, when it is one of the open session's: only those can be edited and
    # resent from the prompt. None for the list across sessions.
    message_id: int | None = None
    # What of `text` was pasted (core/pasted.py): sent again, it is still pasted.
    pasted: tuple[tuple[int, int], ...] = ()


def entries_of(messages: Iterable[Message], limit: int = HISTORY_LIMIT) -> list[HistoryEntry]:
    """The user messages with text among `messages` (oldest first), newest first; one sent
    again right after itself is listed once, with the newest one's id, so the first entry is
    always the last message sent."""
    out: list[HistoryEntry] = []
    for message in reversed(list(messages)):
        if len(out) >= limit:
            break
        if message.role != "user" or not message.content.strip():
            continue
        if not out or out[-1].text != message.content:
            out.append(HistoryEntry(message.content, message.id, message.pasted))
    return out
