"""Putting a text in the memory, the one way the app (ChatSession.memory.remember) and the
command line (`jarvis-tui memory add`) both do it: through the guard, and onto the entry
already there when the same text (case and spacing aside) is stored in any state, or, given
`alike` (recall by meaning, core/recall/alike.py), one that says the same in other words or
the other language."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from jarvis_tui.core.memory.guard import check
from jarvis_tui.core.memory.suggest import durable
from jarvis_tui.core.store.memory import MemoryEntries, same_text
from jarvis_tui.core.store.records import MemoryEntry

# Which of the texts (the index) says what the text says, in other words; None: none does.
Alike = Callable[[str, Sequence[str]], int | None]


def remember(store: MemoryEntries, text: str, known_secrets: Iterable[str] = (), *,
             conversation_id: int | None = None,
             message_id: int | None = None, origin: str | None = None,
             alike: Alike | None = None) -> MemoryEntry:
    """`text` as an active entry: a new one (said in `conversation_id`, taken from
    `message_id`, come by `origin`: see MEMORY_ORIGINS), or the entry that says the same (the
    same text, else by `alike`), now active and worded as `text`. Raises MemoryRefused (one
    line: a secret, too long, empty) or StoreError."""
    text = check(text, known_secrets)
    entries = store.memories(("active", "suggested", "dismissed"))
    same = next((e for e in entries if same_text(e.text) == same_text(text)), None)
    if same is None and alike is not None:
        i = alike(text, [e.text for e in entries])
        same = entries[i] if i is not None else None
    if same is not None:
        if same.state != "active" or same.text != text:
            same = store.update_memory(same.id, text=text, state="active")
        return same
    kind = next((kind for kind, _ in durable([text])), "fact")
    return store.add_memory(text, kind=kind, conversation_id=conversation_id,
                            message_id=message_id, origin=origin)
