"""The one door the interface and the command line use into a session (import-linter holds
them to it): ChatSession (chat.py) and its facades by what the caller does, the memory
(memory.py), compaction and the summary (compaction.py) and the session's shape (branches.py),
with the names of the store's they need."""

from jarvis_tui.core.session.chat import (
    LATEST,
    ChatSession,
    MemoryEntry,
    MemoryRefused,
    MemorySection,
    MemorySource,
    ProviderFactory,
    SessionInfo,
    Store,
    StoreError,
    Summary,
    ToolsOffered,
    default_db_path,
    to_json,
    to_markdown,
)

__all__ = [
    "LATEST", "ChatSession", "MemoryEntry", "MemoryRefused", "MemorySection", "MemorySource",
    "ProviderFactory", "SessionInfo", "Store", "StoreError", "Summary", "ToolsOffered",
    "default_db_path", "to_json", "to_markdown",
]
