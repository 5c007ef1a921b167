"""The shape of a session, as its caller sees it: versions of a question or a reply, turns
taken out of the requests, pinned messages, a fork into a new session."""

from __future__ import annotations

from collections.abc import Iterable

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.session.part import Part
from jarvis_tui.core.store.records import SessionInfo


class SessionBranches(Part):
    def asks_anew(self, question: Message) -> bool:
        """Answering `question` again asks it as a new version of itself: it has no reply,
        and the turns after it stay with the version before."""
        return self._engine.branches.asks_anew(question)

    def last_question(self) -> Message | None:
        return self._engine.branches.last_question()

    def alternatives(self, message: Message) -> tuple[int, int]:
        """(which, of how many) versions of this reply or question: the "2/3" beside it."""
        return self._engine.branches.alternatives(message)

    def versions(self, messages: list[Message]) -> dict[int, tuple[int, int]]:
        """alternatives() for many messages at once, by id() of each: one walk of the tree."""
        return self._engine.branches.versions(messages)

    def switch(self, message: Message, step: int) -> Message | None:
        """Show another version (step -1 / 1) and the branch that follows it; None: none."""
        return self._engine.branches.switch_alternative(message, step)

    def editable(self, message: Message) -> str:
        """Whether `message` can be edited and resent here: "ok"; "covered" (a summary stands
        for it: fork the session from it instead); "not_question"; "not_shown"."""
        if message.role != "user" or message.id is None:
            return "not_question"
        if not any(m is message for m in self.messages):
            return "not_shown"
        return "covered" if message.covered else "ok"

    def turn_of(self, message: Message) -> list[Message]:
        return self._engine.branches.turn_of(message)

    def set_excluded(self, messages: list[Message], excluded: bool) -> ev.MessagesChanged:
        """Take a turn out of every later request, or bring it back; raises StoreError. The
        memory suggestions its messages gave, still waiting, are withdrawn with it (the store
        does it, whoever excludes), and stay withdrawn when it is brought back: /remember
        says them again. An accepted entry stays, marked in F6 as from an excluded message."""
        self._engine.branches.set_excluded(messages, excluded)
        return ev.MessagesChanged(tuple(m.id for m in messages if m.id is not None),
                                  "excluded" if excluded else "included")

    def last_turn(self) -> list[Message]:
        """The newest turn with a question: what /forget takes out."""
        question = next((m for m in reversed(self.messages) if m.role == "user"), None)
        return self.turn_of(question) if question is not None else []

    def last_excluded(self) -> list[Message]:
        """The newest excluded turn shown: what /forget undo brings back."""
        out = next((m for m in reversed(self.messages) if m.excluded), None)
        return [m for m in self.turn_of(out) if m.excluded] if out is not None else []

    def fork(self, message: Message) -> SessionInfo:
        """A new stored session holding the branch up to `message`; this one is unchanged.
        Raises StoreError or ValueError."""
        return self._engine.branches.fork(message)

    def set_pinned(self, messages: Iterable[Message], pinned: bool) -> ev.MessagesChanged:
        """Pin (always sent verbatim, never summarised) or unpin; raises StoreError."""
        ids = []
        for message in messages:
            self._engine.set_pinned(message, pinned)
            ids.append(message.id)
        return ev.MessagesChanged(tuple(i for i in ids if i is not None),
                                  "pinned" if pinned else "unpinned")

    def last_pinnable(self) -> Message | None:
        candidates = [m for m in self.messages if m.status != FAILED]
        return candidates[-1] if candidates else None

    def pinned_usage(self) -> tuple[int, int]:
        return self._engine.pinned_usage()
