"""The engine's messages, and what the next request is built from, kept up to date as they change.

Every keystroke asks for the gauge and every request for a window. Rebuilding "the messages no
summary covers" and summing their tokens on each call would make a 5,000-message session slower
to type in than a new one; here a new message is added in place, and only a compaction, a pin
or a withdrawn message rebuilds the lists.
"""

from __future__ import annotations

from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.tree import Tree, path_to
from jarvis_tui.core.window.tokens import TokenCounter


def in_request(msg: Message) -> bool:
    """Sent with the next request (window permitting): not covered by a summary unless pinned
    back, not a message whose round failed, and not one the user excluded."""
    return (not msg.covered or msg.pinned) and msg.status != FAILED and not msg.excluded


class History:
    def __init__(self, messages: list[Message], head: int | None = None) -> None:
        self.stored = messages  # every message of the session, on every branch, oldest first
        self.all = path_to(messages, head)  # the branch shown, oldest first (the engine's list)
        self.active: list[Message] = []  # in_request ones; read-only for callers
        self.pinned: list[int] = []  # positions in `active` of pinned messages, ascending
        self._index: dict[int, int] = {}  # message id -> position in `all`
        self._sum_key: tuple[float, bool] | None = None
        self._sum_len = 0  # how many of `active` `_sum` covers
        self._sum = 0
        self.version = 0  # bumped by every change: what callers keep of `all` is stale after
        self.changed()

    def reload(self, messages: list[Message], head: int | None = None) -> None:
        """The session as read again (another process added to it); this object stays the one
        everything holds."""
        self.stored = messages
        self.all = path_to(messages, head)
        self.changed()

    def show(self, head: int) -> None:
        """Make the branch ending at `head` the one shown and sent."""
        self.all = path_to(self.stored, head)
        self.changed()

    def tree(self) -> Tree:
        return Tree(self.stored)

    def append(self, msg: Message) -> None:
        self.stored.append(msg)
        self.all.append(msg)
        self.version += 1
        if msg.id is not None:
            self._index[msg.id] = len(self.all) - 1
        if in_request(msg):
            if msg.pinned:
                self.pinned.append(len(self.active))
            self.active.append(msg)

    def changed(self) -> None:
        """A message was covered, pinned, unpinned or withdrawn: rebuild (one pass)."""
        self.version += 1
        self.active = [m for m in self.all if in_request(m)]
        self.pinned = [i for i, m in enumerate(self.active) if m.pinned]
        self._index = {m.id: i for i, m in enumerate(self.all) if m.id is not None}
        self._sum_key, self._sum_len, self._sum = None, 0, 0

    def position(self, message_id: int) -> int | None:
        """Where the stored message `message_id` is in `all`, or None if not in this session."""
        return self._index.get(message_id)

    def tokens(self, counter: TokenCounter) -> int:
        """Calibrated tokens of `active`. Summed once and then extended: only messages added
        since the last call are counted, and the newest one always afresh (it may be the reply
        still streaming in). A new calibration factor sums once more."""
        key = (counter.factor, counter.source == "exact")
        if key != self._sum_key or self._sum_len > len(self.active):
            self._sum_key, self._sum_len, self._sum = key, 0, 0
        settled = len(self.active) - 1
        if self._sum_len < settled:
            self._sum += sum(counter.message(m) for m in self.active[self._sum_len:settled])
            self._sum_len = settled
        return self._sum + (counter.message(self.active[-1]) if self.active else 0)
