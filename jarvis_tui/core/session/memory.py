"""The memory, as a session's caller sees it: what every session is told. Shared by every
session of the store; each change is read into this session's next request (and any other
jarvis-tui's next round: the store's stamp tells them)."""

from __future__ import annotations

from jarvis_tui.core.memory.guard import check, invisible_note
from jarvis_tui.core.memory.remember import remember
from jarvis_tui.core.memory.section import MemorySection
from jarvis_tui.core.messages import Message
from jarvis_tui.core.session.part import Part
from jarvis_tui.core.store.records import MemoryEntry, MemorySource, StoreError


class SessionMemory(Part):
    def entries(self, include_suggested: bool = True) -> list[MemoryEntry]:
        """The memory, pinned first, then newest first; with the suggestions waiting for the
        user's yes (state "suggested") among them unless `include_suggested` is false. Raises
        StoreError."""
        return self._store.memories(("active", "suggested") if include_suggested
                                   else ("active",))

    def remember(self, text: str, message: Message | None = None) -> MemoryEntry:
        """Put `text` in the memory (from `message`, when it was taken from one), from the next
        request on. A text already there in any state is that entry, now in memory, and so is
        one that says the same in other words or the other language while recall_by_meaning
        is on. Raises MemoryRefused (one line: a secret, too long, empty) or StoreError."""
        entry = remember(self._store, text, self._secrets(), conversation_id=self.id,
                         message_id=message.id if message is not None else None,
                         origin="remember" if message is None else "message",
                         alike=self._engine.front.alike())
        self._engine.front.refresh_memory()
        return entry

    def sources(self) -> dict[int, MemorySource]:
        """How each memory entry came, and whether its message is now taken out of the
        requests, by entry id (F6 says so). Raises StoreError."""
        return self._store.memory_sources()

    def edit(self, entry_id: int, text: str) -> MemoryEntry:
        """Raises MemoryRefused, as remember does, or StoreError (no such entry)."""
        entry = self._store.update_memory(entry_id, text=check(text, self._secrets()))
        self._engine.front.refresh_memory()
        return entry

    def note(self, text: str, language: str) -> str | None:
        """The one line saying what storing `text` in the memory removes (characters that show
        nothing, and what tag characters among them spelled), or None when nothing."""
        return invisible_note(text, language, self._secrets())

    def pin(self, entry_id: int, pinned: bool) -> MemoryEntry:
        """A pinned entry is sent before newer ones, so the budget leaves it out last."""
        entry = self._store.update_memory(entry_id, pinned=pinned)
        self._engine.front.refresh_memory()
        return entry

    def delete(self, entry_id: int) -> None:
        self._store.delete_memory(entry_id)
        self._engine.front.refresh_memory()

    def accept(self, entry_id: int) -> MemoryEntry:
        """The user's yes: the suggestion enters the memory. Raises MemoryRefused (its text is
        checked as a typed one is) or StoreError."""
        entry = self._store.memory_entry(entry_id)
        if entry is None:
            raise StoreError(f"memory entry {entry_id} does not exist (deleted, perhaps in "
                             "another window).")
        text = check(entry.text, self._secrets())  # one stored by an older version: cleaned too
        if entry.state != "active" or text != entry.text:
            entry = self._store.update_memory(entry_id, text=text, state="active")
            self._engine.front.refresh_memory()
        return entry

    def dismiss(self, entry_id: int) -> None:
        """The user's no: kept as dismissed, so the same text is never suggested again."""
        entry = self._store.memory_entry(entry_id)
        if entry is None:
            raise StoreError(f"memory entry {entry_id} does not exist (deleted, perhaps in "
                             "another window).")
        if entry.state == "active":
            raise StoreError(f"memory entry {entry_id} is in the memory, not a suggestion; "
                             "delete it to forget it.")
        self._store.update_memory(entry_id, state="dismissed")

    def sent(self) -> MemorySection:
        """What the next request carries of the memory: the entries sent, those left out for
        its budget (ids, in the order they rank), and its tokens. Read again first if the
        memory changed, here or in another jarvis-tui."""
        self._engine.front.refresh_memory()
        return self._engine.front.memory_sent()

    def budget(self) -> int:
        """The memory section's room in the next request, in tokens (0: memory off)."""
        return self._engine.front.memory_budget()
