"""Textual messages the workers post to carry engine events to the widgets.

Workers post these; the chat screen handles them and updates its widgets. Each wraps the core
event unchanged, so the UI never re-derives what the engine already decided.
"""

from __future__ import annotations

from textual.message import Message

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import Message as ChatMessage


class EngineMessage(Message):
    """Base: every message knows which session it belongs to, so a late event from a session the
    user already left is dropped instead of drawn into the wrong conversation."""

    def __init__(self, conversation_id: int) -> None:
        super().__init__()
        self.conversation_id = conversation_id


class EngineEvent(EngineMessage):
    """A core event passed on unchanged as `.event`; the subclass names what it is, so handlers
    can say `@on(ReplyFinished)`."""

    def __init__(self, conversation_id: int, event: ev.Event) -> None:
        super().__init__(conversation_id)
        self.event = event


class WindowFitted(EngineEvent):
    event: ev.WindowFitted


class UsageReported(EngineEvent):
    event: ev.Usage


class ReplyFinished(EngineEvent):
    event: ev.Finished


class CompactionStarted(EngineEvent):
    event: ev.CompactionStarted


class CompactionFinished(EngineEvent):
    event: ev.CompactionFinished


class CompactionProposed(EngineEvent):
    event: ev.CompactionProposed


class CompactionFailed(EngineEvent):
    event: ev.CompactionFailed


class CompactionHeld(EngineEvent):
    event: ev.CompactionHeld


class RetryScheduled(EngineEvent):
    event: ev.Retrying


class ContextLimitLearned(EngineEvent):
    event: ev.ContextLimitLearned


class WindowTrimmed(EngineEvent):
    event: ev.Trimmed


class WindowDetected(EngineEvent):
    event: ev.WindowDetected


class ContextTruncated(EngineEvent):
    event: ev.ContextTruncated


class TurnsRecalled(EngineEvent):
    event: ev.Recalled


class SessionBusy(EngineEvent):
    event: ev.SessionBusy


class SessionChanged(EngineEvent):
    event: ev.SessionChanged


class SaveDelayed(EngineEvent):
    event: ev.SaveDelayed


class ToolCallsMade(EngineEvent):
    event: ev.ToolCallsMade


class ToolApproval(EngineEvent):
    event: ev.ToolApproval


class ToolStarted(EngineEvent):
    event: ev.ToolStarted


class ToolFinished(EngineEvent):
    event: ev.ToolFinished


class ToolStepLimit(EngineEvent):
    event: ev.ToolStepLimit


class ToolOutputsPruned(EngineEvent):
    event: ev.ToolOutputsPruned


class ToolLeftOut(EngineEvent):
    event: ev.ToolLeftOut


class MemorySuggested(EngineEvent):
    event: ev.MemorySuggested


class ReplyChunk(EngineMessage):
    def __init__(self, conversation_id: int, text: str) -> None:
        super().__init__(conversation_id)
        self.text = text


class ReplyFailed(EngineMessage):
    """The round ended without a complete reply: an error that survived the retries, an
    unexpected fault, or the user pressing Esc (`stopped`)."""

    def __init__(self, conversation_id: int, error: str, *, user_text: str,
                 partial: ChatMessage | None = None, stopped: bool = False,
                 saved: bool = True, user_pasted: tuple[tuple[int, int], ...] = ()) -> None:
        super().__init__(conversation_id)
        self.error = error
        self.user_text = user_text
        self.user_pasted = user_pasted  # what of user_text was pasted: restored, still pasted
        self.partial = partial
        self.stopped = stopped
        self.saved = saved  # False: `partial` is the whole reply, which the store refused


_WRAPPERS: dict[type, type[EngineEvent]] = {
    ev.WindowFitted: WindowFitted,
    ev.Usage: UsageReported,
    ev.Finished: ReplyFinished,
    ev.CompactionStarted: CompactionStarted,
    ev.CompactionFinished: CompactionFinished,
    ev.CompactionProposed: CompactionProposed,
    ev.CompactionFailed: CompactionFailed,
    ev.CompactionHeld: CompactionHeld,
    ev.Retrying: RetryScheduled,
    ev.ContextLimitLearned: ContextLimitLearned,
    ev.Trimmed: WindowTrimmed,
    ev.WindowDetected: WindowDetected,
    ev.ContextTruncated: ContextTruncated,
    ev.Recalled: TurnsRecalled,
    ev.SessionBusy: SessionBusy,
    ev.SessionChanged: SessionChanged,
    ev.SaveDelayed: SaveDelayed,
    ev.ToolCallsMade: ToolCallsMade,
    ev.ToolApproval: ToolApproval,
    ev.ToolStarted: ToolStarted,
    ev.ToolFinished: ToolFinished,
    ev.ToolStepLimit: ToolStepLimit,
    ev.ToolOutputsPruned: ToolOutputsPruned,
    ev.ToolLeftOut: ToolLeftOut,
    ev.MemorySuggested: MemorySuggested,
}


def wrap(conversation_id: int, event: ev.Event) -> EngineEvent | None:
    """The Textual message for a core event; Delta and Failed carry extra state and are built
    by the worker itself."""
    cls = _WRAPPERS.get(type(event))
    return cls(conversation_id, event) if cls else None
