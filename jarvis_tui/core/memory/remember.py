"""Putting a text in the memory, the one way the app (ChatSession.remember) and the command line
(`jarvis-tui memory add`) both do it: through the guard, and onto the entry already there when
the same text (case and spacing aside) is stored in any state."""

from __future__ import annotations

from collections.abc import Iterable

from jarvis_tui.core.memory.guard import check
from jarvis_tui.core.memory.suggest import durable
from jarvis_tui.core.store.memory import MemoryEntries, same_text
from jarvis_tui.core.store.records import MemoryEntry


def remember(store: MemoryEntries, text: str, known_secrets: Iterable[str] = (), *,
             conversation_id: int | None = None,
             message_id: int | None = None, origin: str | None = None) -> MemoryEntry:
    """`text` as an active entry: a new one (said in `conversation_id`, taken from
    `message_id`, come by `origin`: see MEMORY_ORIGINS), or the entry that says the same, now
    active and worded as `text`. Raises MemoryRefused (one line: a secret, too long, empty)
    or StoreError."""
    text = check(text, known_secrets)
    for entry in store.memories(("active", "suggested", "dismissed")):
        if same_text(entry.text) == same_text(text):
            if entry.state != "active" or entry.text != text:
                entry = store.update_memory(entry.id, text=text, state="active")
            return entry
    kind = next((kind for kind, _ in durable([text])), "fact")
    return store.add_memory(text, kind=kind, conversation_id=conversation_id,
                            message_id=message_id, origin=origin)
