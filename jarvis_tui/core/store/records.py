"""What the store hands out: its one-line errors and the rows it reads back."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.core.safety.redact import redact_title


class StoreError(Exception):
    """A one-line, user-facing problem with the session database."""


class StoreLocked(StoreError):
    """Another program held the write lock for longer than we waited: worth waiting more."""


@dataclass
class SessionInfo:
    """One session as the session list shows it. Its title shows no credential, however it was
    stored: a store from before titles were made without them still holds the token a first
    message started with, and every list, label and export reads titles here."""
    id: int
    title: str
    created_at: float
    updated_at: float
    model: str
    message_count: int

    def __post_init__(self) -> None:
        self.title = redact_title(self.title)


@dataclass
class Summary:
    id: int
    conversation_id: int
    content: str
    first_message_id: int | None
    last_message_id: int | None
    covered_count: int
    kind: str
    focus: str | None
    model: str
    created_at: float
    replaces_id: int | None


@dataclass(frozen=True)
class UsageRow:
    """One request's token counts as its server reported them (None: it did not say)."""
    id: int
    conversation_id: int
    message_id: int | None  # the reply a chat request brought
    summary_id: int | None  # the summary a summary request made
    kind: str  # "chat" | "summary"
    model: str
    prompt_tokens: int  # the whole prompt, the cached part included
    cached_tokens: int | None
    cache_write_tokens: int | None
    completion_tokens: int
    freed_tokens: int | None  # a compaction's: what it took off the request
    created_at: float


@dataclass(frozen=True)
class UsageTotal:
    """A session's requests of one kind and model, summed (see costs.tally)."""
    kind: str
    model: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None  # over the requests that reported it; None when none did
    cache_write_tokens: int | None
    reported_requests: int  # requests that said how much of their prompt was cached
    reported_prompt_tokens: int  # the prompt tokens of those requests
    freed_tokens: int | None


# What a memory entry is, and where it stands: "active" entries go into every request,
# "suggested" ones wait for the user's yes (a compaction found them), "dismissed" ones were
# refused and are kept so they are never suggested again.
MEMORY_KINDS = ("fact", "preference", "instruction", "person", "decision")
MEMORY_STATES = ("active", "suggested", "dismissed")
# How an entry came: a compaction found it in what the user typed; /remember or F6's A; M on a
# message; `jarvis-tui memory add`; `jarvis-tui memory import`.
MEMORY_ORIGINS = ("suggested", "remember", "message", "cli", "import")


@dataclass(frozen=True)
class MemoryEntry:
    """One thing the user wants every session to know, and where it came from."""
    id: int
    text: str
    kind: str  # one of MEMORY_KINDS
    state: str  # one of MEMORY_STATES
    pinned: bool  # sent first, before newer entries
    conversation_id: int | None  # the session it was said in (None: typed, imported, deleted)
    message_id: int | None  # the message it was taken from
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class MemorySource:
    """Where a memory entry came from, as F6 says it."""
    origin: str | None  # one of MEMORY_ORIGINS; None: stored before origins were kept
    excluded: bool  # the message it was taken from is out of the requests (/forget)
    role: str | None  # that message's role ("user", "assistant", ...); None: no message


@dataclass(frozen=True)
class Unreadable:
    """A stored JSON field that could not be read back: it reads as empty, is reported, and its
    stored text is never overwritten."""
    conversation_id: int
    message_id: int | None  # None: the conversation's own meta
    field: str
    problem: str  # "is not valid JSON", "is not a JSON list", ...
    stored_text: str

    def __str__(self) -> str:
        if self.message_id is None:
            return (f"session {self.conversation_id}: {self.field} {self.problem}; read as "
                    "empty (the stored text is kept)")
        return (f"session {self.conversation_id}, message {self.message_id}: {self.field} "
                f"{self.problem}; left out (the stored text is kept)")
