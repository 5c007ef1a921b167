"""A session as a tree: which messages make up the branch shown, and its alternatives.

Every message names the one it follows (`parent_id`). Regenerating a reply adds a second reply
to the same question; editing a question adds a second question after the same reply. Both
start a branch, and the old one stays stored: switching back is choosing another tip. The
branch shown is the path from the top to the session's head; everything the engine sends,
counts, summarises and recalls is that path, so a branch never sees another's turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from jarvis_tui.core.messages import ROOT, Message


def path_to(stored: Sequence[Message], head: int | None) -> list[Message]:
    """The branch ending at `head`, oldest first; ROOT: an empty branch (a question edited at
    the very top, before its new version is stored); None: `stored` is one branch already. A
    head not stored (another process's) falls back to the newest message's branch."""
    if head is None:
        return list(stored)
    if head == ROOT:
        return []
    by_id = {m.id: m for m in stored if m.id is not None}
    msg = by_id.get(head)
    if msg is None:
        msg = stored[-1] if stored else None
    out: list[Message] = []
    seen: set[int] = set()
    while msg is not None and id(msg) not in seen:
        seen.add(id(msg))
        out.append(msg)
        msg = by_id.get(msg.parent_id) if msg.parent_id else None
    out.reverse()
    return out


class Tree:
    """Children by parent, for the alternatives of a message and the tip below it."""

    def __init__(self, stored: Sequence[Message]) -> None:
        self.children: dict[int, list[Message]] = {}
        self._questions: set[int] = set()  # ids of user messages
        for msg in stored:
            if msg.id is not None and msg.role == "user":
                self._questions.add(msg.id)
            if msg.id is not None and msg.parent_id is not None:
                self.children.setdefault(msg.parent_id, []).append(msg)

    def alternatives(self, msg: Message) -> list[Message]:
        """`msg` and the messages of its role that follow what it follows, oldest first: the
        other replies to its question, or the other versions of a question. After a question,
        every message is one: a question that was never answered may be followed by the next
        question, and (as stored before a question like that was asked anew, in engine.py) by
        a reply added to it later; each leads to a branch that must stay reachable."""
        if msg.parent_id is None:
            return [msg]
        siblings = self.children.get(msg.parent_id, [msg])
        if msg.parent_id in self._questions:
            return siblings
        return [m for m in siblings if m.role == msg.role]

    def tip(self, msg: Message) -> Message:
        """The end of the branch below `msg`, following the newest child at each fork: the
        branch as it was last continued."""
        seen = {id(msg)}
        while msg.id in self.children:
            msg = self.children[msg.id][-1]
            if id(msg) in seen:
                break
            seen.add(id(msg))
        return msg
