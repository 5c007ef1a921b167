"""What the engine does to the shape of a session rather than its end: show another branch,
flip between a reply's alternatives, take a turn out of the requests, fork a new session.

The engine holds one as `branches`; it shares the engine's history, store and request front
(where the summary in force lives). A round that starts a branch (a regenerated reply, an
edited question) is the engine's own, in engine.py.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from jarvis_tui.core.messages import ROOT, Message, turn_span
from jarvis_tui.core.store.messages import make_title
from jarvis_tui.core.store.records import StoreError

if TYPE_CHECKING:
    from jarvis_tui.core.engine.front import RequestFront
    from jarvis_tui.core.store.records import SessionInfo
    from jarvis_tui.core.store.store import Store
    from jarvis_tui.core.window.calibration import Calibration
    from jarvis_tui.core.window.history import History

NO_REGENERATE = "there is no question to answer again yet"
COVERED_REGENERATE = ("the last question is folded into the summary; fork the session from it "
                      "to answer it again")
EXCLUDED_REGENERATE = ("that question is excluded from requests; bring it back (/forget undo) to "
                       "have it answered again")
NOT_SHOWN = "that question is not on the branch shown any more"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class Branches:
    """The branch shown, and the moves between branches. `conversation` is read at each use:
    the session it belongs to is renamed in place."""

    def __init__(self, store: Store, conversation: Callable[[], SessionInfo], history: History,
                 front: RequestFront, calibration: Calibration):
        self._store = store
        self._conversation = conversation
        self._history = history
        self._front = front
        self._calibration = calibration
        # The newest summary id of the session this process has seen (on any branch): a
        # stamp that differs from it means another process compacted.
        self.newest_summary = 0
        self.load_summary()

    @property
    def head_id(self) -> int:
        """The id of the last message shown (ROOT: none)."""
        shown = self._history.all
        return shown[-1].id or ROOT if shown else ROOT

    def load_summary(self) -> None:
        """The summary in force on the branch shown (see Store.summary_on)."""
        ids = {m.id for m in self._history.all if m.id is not None}
        conversation_id = self._conversation().id
        self._front.summary = self._store.summary_on(conversation_id, ids)
        newest = self._store.summaries(conversation_id)
        self.newest_summary = newest[-1].id if newest else 0

    def changed(self) -> None:
        """Another branch is shown: its summary, and a request of a shape the server's count
        of the last one says nothing about."""
        self.load_summary()
        self._calibration.forget_anchor()

    def last_question(self) -> Message | None:
        """The newest stored user message shown: what /retry answers again (one whose round
        failed is asked again)."""
        return next((m for m in reversed(self._history.all)
                     if m.role == "user" and m.id is not None), None)

    def asks_anew(self, question: Message) -> bool:
        """Whether answering `question` again asks it anew, as a new version of the question:
        it has no reply on the branch shown and later turns follow it (its round failed, and
        the user went on). A reply added to it would hide those turns on a branch no version
        leads to; as a second version of the question, `<` on it leads back to them."""
        shown = self._history.all
        at = next((i for i, m in enumerate(shown) if m is question), None)
        return at is not None and at + 1 < len(shown) and shown[at + 1].role == "user"

    def show_branch(self, message_id: int) -> None:
        """Show the branch ending at `message_id` (stored, so the next start shows it too)."""
        if message_id != ROOT:
            with contextlib.suppress(StoreError):  # shown now in any case; stored when it can
                self._store.set_head(self._conversation().id, message_id)
        self._history.show(message_id)
        self.changed()

    def alternatives(self, msg: Message) -> tuple[int, int]:
        """(which, of how many): `msg` among the other replies to its question, or the other
        versions of its question; (1, 1) when it has none."""
        others = self._history.tree().alternatives(msg)
        return next((i + 1 for i, m in enumerate(others) if m is msg), 1), len(others)

    def versions(self, messages: list[Message]) -> dict[int, tuple[int, int]]:
        """alternatives() of each of `messages`, by id() of the message, with one tree."""
        tree = self._history.tree()
        out = {}
        for msg in messages:
            others = tree.alternatives(msg)
            if len(others) > 1:
                out[id(msg)] = (next((i + 1 for i, m in enumerate(others) if m is msg), 1),
                                len(others))
        return out

    def switch_alternative(self, msg: Message, step: int) -> Message | None:
        """Show the alternative `step` places from `msg` (-1 the one before, 1 the one after),
        continued as it was left; the alternative shown, or None when there is none there."""
        tree = self._history.tree()
        others = tree.alternatives(msg)
        at = next((i for i, m in enumerate(others) if m is msg), None)
        if at is None or not 0 <= at + step < len(others):
            return None
        chosen = others[at + step]
        tip = tree.tip(chosen)
        if tip.id is None:
            return None
        self.show_branch(tip.id)
        return chosen

    def turn_of(self, msg: Message) -> list[Message]:
        """The turn holding `msg` on the branch shown: its question and everything answering it."""
        shown = self._history.all
        index = next((i for i, m in enumerate(shown) if m is msg), None)
        if index is None:
            return []
        start, stop = turn_span(shown, index)
        return shown[start:stop]

    def set_excluded(self, messages: list[Message], excluded: bool) -> None:
        """Take messages out of every later request (or put them back); they stay stored and
        exported, marked. A turn is taken whole: half a turn would leave an orphan."""
        changed = [m for m in messages if m.excluded != excluded]
        for msg in changed:
            msg.excluded = excluded
        try:
            for msg in changed:
                self._store.update_message(msg)
        except StoreError:
            for msg in changed:
                msg.excluded = not excluded
            raise
        self._history.changed()
        self._calibration.forget_anchor()

    def fork(self, msg: Message) -> SessionInfo:
        """A new session holding the branch shown up to and including `msg`. Its summary is
        this one when `msg` comes after every turn the summary covers; a fork from inside the
        summary starts with none, and its own is made from its own turns when it needs one."""
        shown = self._history.all
        index = next((i for i, m in enumerate(shown) if m is msg), None)
        if index is None or msg.id is None:
            raise ValueError("that message is not on the branch shown")
        branch = [m for m in shown[:index + 1] if m.id is not None]
        later_covered = any(m.covered for m in shown[index + 1:])
        summary = None if later_covered else self._front.summary
        conversation = self._conversation()
        title = fork_title(conversation.title, msg.content)
        return self._store.fork(conversation.id, branch, title, summary,
                                model=self._front.settings.model)


def fork_title(title: str, text: str) -> str:
    """Says where the fork came from: the old title and the first words of the message, in
    the punctuation of the language they are written in."""
    words = make_title(text or "…")
    if len(words) > 24:
        words = words[:23] + "…"
    old = title or make_title(text)
    if _CJK.search(old + words):
        return f"{old}（分支自「{words}」）"
    return f"{old} (fork from “{words}”)"
