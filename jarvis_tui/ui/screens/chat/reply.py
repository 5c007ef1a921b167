"""The reply on its way, from the question sent to the round's end, as one small state object
the chat screen's parts receive, and the compaction the screen runs or shows.

Which part changes what: the round's handlers (screen.py) start and end a reply and give it its
view when the first text comes; a regenerate (branches.py) marks what it asks again; a tool
step (tools.py) starts the next step's view. Every other part only reads it. How a failed
round ends is decided in one place (`failure_ending`), from the reply and what the worker says.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.messages import Message
from jarvis_tui.texts.chat_texts import BRANCH_TEXTS, CHAT_TEXTS, TOOL_TEXTS
from jarvis_tui.texts.notices import describe
from jarvis_tui.ui import posted
from jarvis_tui.ui.widgets.message_view import MessageView


@dataclass
class Reply:
    question: Message | None = None  # the user message whose reply is on its way
    view: MessageView | None = None  # that reply (this tool step's), once its first text came
    regenerating: Message | None = None  # the question answered again, for a regenerate
    retry_note: str = ""  # BRANCH_TEXTS' key of what the regenerate leaves if it fails
    tool_round: bool = False  # this round ran tools (its stop is not "nothing happened")
    # The session's last counts when the round began: the same ones at its end mean the
    # server counted nothing this time.
    usage_before: object = None

    @property
    def on_its_way(self) -> bool:
        return self.question is not None

    def start(self, question: Message, usage_before: object) -> None:
        self.question, self.view, self.usage_before = question, None, usage_before

    def again(self, question: Message, note: str) -> None:
        """The round under way answers `question` again; `note` if it fails."""
        self.regenerating, self.retry_note = question, note

    def tool_step(self) -> None:
        """The reply asked for tools: the next Delta begins the next step's reply."""
        self.view, self.tool_round = None, True

    def end(self) -> None:
        self.question = self.view = self.regenerating = None
        self.retry_note, self.tool_round = "", False


@dataclass
class CompactionWork:
    running: bool = False  # a compaction (automatic or /compact) is on its way
    # The /compact summary the user is reading, or has accepted and is being stored.
    proposal: CompactionProposal | None = None


@dataclass(frozen=True)
class Ending:
    """How a failed round ends on screen: the reply kept (partial), the lines said, whether
    the user's text goes back into the prompt, and whether the branch shown is drawn again."""

    partial: Message | None
    notes: tuple[tuple[str, str], ...] = ()
    restore: bool = False
    show_branch: bool = False


def failure_ending(failed: posted.ReplyFailed, reply: Reply, lang: str) -> Ending:
    """The one place a failed round's end is chosen: stopped with text, stopped in a tool
    round, a regenerate that brought nothing, a reply the store could not take, stopped
    before any text, or an error (the question goes back into the prompt)."""
    error = describe(ev.Failed(failed.error), lang) or failed.error
    if failed.stopped and failed.partial is not None:
        return Ending(failed.partial, ((CHAT_TEXTS(lang, "stopped_partial"), "warning"),))
    if failed.stopped and reply.tool_round:
        # The calls and results are stored: the message is not sent again, nothing to restore.
        return Ending(failed.partial, ((TOOL_TEXTS(lang, "stopped_tools"), "warning"),))
    if reply.regenerating is not None and failed.partial is None:
        # The question keeps the reply it had, or the turns after it (the engine shows that
        # branch again).
        said = ((error, "error"),) if failed.error else ()
        note = ((BRANCH_TEXTS(lang, reply.retry_note), "info"),) if reply.retry_note else ()
        return Ending(None, said + note, show_branch=True)
    if not failed.saved:
        # Asked and answered: only the store failed. The reply stays on screen to copy.
        return Ending(failed.partial, ((error, "error"), (CHAT_TEXTS(lang, "unsaved"), "warning")))
    if failed.stopped:
        return Ending(None, ((CHAT_TEXTS(lang, "stopped_empty"), "warning"),), restore=True)
    return Ending(failed.partial, ((error, "error"), (CHAT_TEXTS(lang, "restored"), "info")),
                  restore=True)
