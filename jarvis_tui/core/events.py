"""What the engine tells its caller while it works: plain dataclasses, no UI types.

The TUI wraps each in a Textual message; the CLI prints them. Both see the same stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.core.budget import BudgetUsage
from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.costs import CompactionCost
from jarvis_tui.core.messages import Message


@dataclass(frozen=True)
class WindowFitted:
    usage: BudgetUsage
    sent_messages: int
    dropped_messages: int
    truncated_messages: int


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    estimated_prompt_tokens: int
    cached_tokens: int | None = None  # of prompt_tokens, served from the provider's cache
    cache_write_tokens: int | None = None  # of prompt_tokens, written to it (Anthropic)


@dataclass(frozen=True)
class CompactionStarted:
    reason: str  # "threshold", "overflow" or "manual"
    messages: int  # how many messages are being folded into the summary


@dataclass(frozen=True)
class CompactionFinished:
    summary_id: int
    covered_messages: int  # newly covered by this compaction
    tokens_before: int
    tokens_after: int
    reason: str
    # What the summary requests cost: prompt and reply tokens over all its calls (the server's
    # counts where it gave them, else our estimate), and how many calls it took.
    cost_prompt_tokens: int = 0
    cost_completion_tokens: int = 0
    calls: int = 0
    cached_prefix: bool = False  # the summary request reused the chat request's prefix
    covered_ids: tuple[int, ...] = ()  # the messages it folded in, whose views now dim


@dataclass(frozen=True)
class CompactionProposed:
    """A summary is ready and nothing is stored yet: the caller shows it and then commits or
    discards it (Engine.commit_compaction / discard_compaction)."""

    proposal: CompactionProposal


@dataclass(frozen=True)
class CompactionFailed:
    error: str
    reason: str


@dataclass(frozen=True)
class CompactionHeld:
    """Automatic compaction stopped so it cannot loop. `why`: "stalled" (the last one freed
    only `freed` tokens) or "repeated" (it came back to the range it just folded): the rest of
    this turn sends the plain window; "small" (what it would fold in, `freed` tokens, could
    free too little to try): the same, with no request made; "paused" (`failures` summaries
    failed in a row): until /compact or a change of settings."""

    why: str
    freed: int = 0
    failures: int = 0


@dataclass(frozen=True)
class Retrying:
    reason: str
    attempt: int
    delay_s: float


@dataclass(frozen=True)
class ContextLimitLearned:
    tokens: int
    previous: int
    # A limit that looks wrong (tiny, or far below the configured window): used for this
    # session, kept for later ones only once a server says it again.
    suspect: bool = False


@dataclass(frozen=True)
class SessionBusy:
    """Another jarvis-tui is answering in this session; the round waits for it."""

    pid: int | None


@dataclass(frozen=True)
class SessionChanged:
    """Another jarvis-tui added to this session since it was loaded; it was read again."""

    added: int


@dataclass(frozen=True)
class SaveDelayed:
    """The session database is locked by another program; the reply is kept in memory and
    saved once the lock frees."""

    error: str


@dataclass(frozen=True)
class WindowDetected:
    """The server said how large its context window is (setting 0 = detect)."""

    tokens: int


@dataclass(frozen=True)
class ContextTruncated:
    """The server cut the request itself instead of refusing it (Ollama): it read fewer prompt
    tokens than were sent. The reply stands; the conversation is compacted so it fits next time."""

    sent_tokens: int
    read_tokens: int


@dataclass(frozen=True)
class Trimmed:
    """Nothing was left to compact, so the next attempt sends a smaller window."""

    budget: int


@dataclass(frozen=True)
class Finished:
    message: Message
    finish_reason: str | None = None  # "length": the reply hit max_tokens (the response reserve)


@dataclass(frozen=True)
class Recalled:
    """Turns a summary covers, or turns of other sessions the new message points back to,
    were put into the request because the new message is about them (message ids)."""

    turns: int
    tokens: int
    message_ids: tuple[int, ...]
    # One "[title, date]" per turn brought from another session (the last of `turns`).
    sessions: tuple[str, ...] = ()


@dataclass(frozen=True)
class MessagesChanged:
    """Stored messages whose state changed (`what`: "pinned" or "unpinned"), so their views
    are redrawn by id."""

    message_ids: tuple[int, ...]
    what: str


@dataclass(frozen=True)
class ToolCallsMade:
    """The model's reply asks for tools. `message` is stored (its text, maybe empty, and its
    `tool_calls`) and ends this step of the round: the next Delta begins a new reply."""

    message: Message


@dataclass(frozen=True)
class ToolApproval:
    """The round waits for the user to allow or refuse `call` (the engine's `approve`
    callback is asked right after this event)."""

    call: ToolCall
    spec: ToolSpec | None


@dataclass(frozen=True)
class ToolStarted:
    call: ToolCall
    spec: ToolSpec | None


@dataclass(frozen=True)
class ToolFinished:
    """A call ended; `result` is its stored tool message (what goes back to the model).
    `outcome`: "ok", "error" (the tool failed), "denied" (the user or the allowlist refused),
    "unknown" (no such tool), "bad_arguments", "cancelled" (Esc)."""

    call: ToolCall
    result: Message
    outcome: str
    seconds: float = 0.0


@dataclass(frozen=True)
class ToolStepLimit:
    """The model asked for tools `steps` times in a row for one message: it is asked to answer
    with what it has, without tools."""

    steps: int


@dataclass(frozen=True)
class ToolOutputsPruned:
    """Older tool results were replaced in the request by one-line stubs (the stored results
    stay whole): `count` results, `freed` tokens. Done before any summary is made."""

    count: int
    freed: int
    message_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class ToolLeftOut:
    """The provider refused the definition of tool `name` (of `server`): the request goes
    again without it, and it is not offered while its server describes it the same way.
    `why` is the provider's own words."""

    name: str
    server: str
    why: str


@dataclass(frozen=True)
class MemorySuggested:
    """A compaction found `count` things the user said that look worth remembering; they wait
    as suggestions for the user's yes (nothing entered the memory)."""

    count: int


@dataclass(frozen=True)
class Failed:
    error: str
    message: Message | None = None  # the partial reply, if any text arrived
    saved: bool = True  # False: `message` could not be stored (a full disk); only this has it


Event = (
    WindowFitted | Delta | Usage | CompactionStarted | CompactionFinished | CompactionProposed
    | CompactionFailed
    | CompactionHeld | Retrying | ContextLimitLearned | WindowDetected | ContextTruncated
    | Trimmed | Recalled
    | SessionBusy | SessionChanged | SaveDelayed | MessagesChanged | Finished | Failed
    | ToolCallsMade | ToolApproval | ToolStarted | ToolFinished | ToolStepLimit
    | ToolOutputsPruned | ToolLeftOut | MemorySuggested
)


def compaction_cost_of(event: CompactionFinished, model: str) -> CompactionCost:
    """What a compaction that just finished says it cost (its counts, before any store)."""
    return CompactionCost(event.calls, event.cost_prompt_tokens, event.cost_completion_tokens,
                          None, None, max(0, event.tokens_before - event.tokens_after), model)
