"""The user's memory: short entries every session's requests carry, suggestions waiting for the
user's yes, and those the user dismissed (kept, so they are never suggested again).

Not per conversation, unlike every other part: an entry names the session and message it came
from, and outlives both. Whether a text may be stored at all (a secret, a whole file) is decided
above the store (core/memory/guard.py); here only what would make the row wrong is refused.
Another jarvis-tui may change the memory at any time: `memory_stamp` tells a reader cheaply
whether it did.

Every write of a text removes the characters that show nothing (core/safety/textsafe.py):
whatever path a text comes by (the guard says so to the user where it was typed; a
compaction's suggestions come straight here), no entry holds words the user cannot see.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jarvis_tui.core.safety.textsafe import without_invisible
from jarvis_tui.core.store.db import Db, storable
from jarvis_tui.core.store.records import (
    MEMORY_KINDS,
    MEMORY_ORIGINS,
    MEMORY_STATES,
    MemoryEntry,
    MemorySource,
    StoreError,
)

_SELECT = ("SELECT id, text, kind, state, pinned, conversation_id, message_id, created_at, "
           "updated_at FROM memories ")
_ORDER = "ORDER BY pinned DESC, created_at DESC, id DESC"
# What an export row holds: where an entry came from (a session, a message) is this machine's
# and means nothing on another, so it is left out.
EXPORT_FIELDS = ("text", "kind", "state", "pinned", "created_at", "updated_at")


class MemoryEntries(Db):
    def add_memory(self, text: str, *, kind: str = "fact", state: str = "active",
                   conversation_id: int | None = None,
                   message_id: int | None = None, origin: str | None = None) -> MemoryEntry:
        """Store one entry; `conversation_id` and `message_id` say where it was said, `origin`
        how it came (one of MEMORY_ORIGINS)."""
        _check_origin(self, origin)
        text = _visible_only(text)
        self._check_memory(text, kind, state)
        with self._write("save a memory entry to") as db:
            if conversation_id is not None:
                self._require_conversation(db, conversation_id)
            if message_id is not None and (not storable(message_id) or db.execute(
                    "SELECT 1 FROM messages WHERE id = ? AND (? IS NULL OR conversation_id = ?)",
                    (message_id, conversation_id, conversation_id)).fetchone() is None):
                where = f" in conversation {conversation_id}" if conversation_id else ""
                raise StoreError(f"{self.path}: message {message_id} does not exist{where}; "
                                 "the memory entry was not saved.")
            now = self._memory_time(db)
            cur = db.execute(
                "INSERT INTO memories (text, kind, state, pinned, conversation_id, message_id, "
                "created_at, updated_at, origin) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)",
                (text, kind, state, conversation_id, message_id, now, now, origin))
            return self._memory(db, cur.lastrowid or 0)

    def add_suggestions(self, conversation_id: int,
                        found: Iterable[tuple[str, str, int | None]]) -> list[MemoryEntry]:
        """Store (kind, text, message id) as suggestions of `conversation_id`, unless the same
        text (case and spacing aside) is stored already in any state: a dismissed suggestion
        never comes back, an accepted one is not offered twice. The entries added."""
        added = []
        with self._write("save memory suggestions to") as db:
            self._require_conversation(db, conversation_id)
            have = {same_text(text) for (text,) in db.execute("SELECT text FROM memories")}
            for kind, text, message_id in found:
                text = _visible_only(text)
                if isinstance(text, str) and not text.strip():
                    continue  # nothing the user could see: nothing to suggest
                self._check_memory(text, kind, None)
                if same_text(text) in have:
                    continue
                have.add(same_text(text))
                if message_id is not None and db.execute(
                        "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?",
                        (message_id, conversation_id)).fetchone() is None:
                    message_id = None
                if message_id is not None and _excluded(db, message_id):
                    continue  # taken out (/forget) since the compaction read it: withdrawn
                now = self._memory_time(db)
                cur = db.execute(
                    "INSERT INTO memories (text, kind, state, pinned, conversation_id, "
                    "message_id, created_at, updated_at, origin) "
                    "VALUES (?, ?, 'suggested', 0, ?, ?, ?, ?, 'suggested')",
                    (text, kind, conversation_id, message_id, now, now))
                added.append(self._memory(db, cur.lastrowid or 0))
        return added

    def memories(self, states: Sequence[str] = ("active",)) -> list[MemoryEntry]:
        """The entries in `states`, pinned first, then newest first."""
        for state in states:
            _check_state(self, state)
        if not states:
            return []
        marks = ", ".join("?" * len(states))
        with self._guard("read the memory of"):
            rows = self._db.execute(f"{_SELECT}WHERE state IN ({marks}) {_ORDER}",
                                    tuple(states)).fetchall()
        return [_entry(row) for row in rows]

    def memory_entry(self, entry_id: int) -> MemoryEntry | None:
        """One entry, in any state; None when there is no such entry."""
        if not storable(entry_id):
            return None
        with self._guard("read the memory of"):
            row = self._db.execute(f"{_SELECT}WHERE id = ?", (entry_id,)).fetchone()
        return _entry(row) if row else None

    def update_memory(self, entry_id: int, *, text: str | None = None,
                      pinned: bool | None = None, state: str | None = None,
                      kind: str | None = None) -> MemoryEntry:
        """Change what is given of one entry; the others stay as they are."""
        text = _visible_only(text)
        self._check_memory(text, kind, state)
        changes: dict[str, object] = {}
        if text is not None:
            changes["text"] = text
        if pinned is not None:
            changes["pinned"] = int(bool(pinned))
        if state is not None:
            changes["state"] = state
        if kind is not None:
            changes["kind"] = kind
        with self._write("change a memory entry in") as db:
            self._require_memory(db, entry_id)
            changes["updated_at"] = self._memory_time(db)
            sets = ", ".join(f"{column} = ?" for column in changes)
            db.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*changes.values(), entry_id))
            return self._memory(db, entry_id)

    def delete_memory(self, entry_id: int) -> None:
        with self._write("delete a memory entry from") as db:
            self._require_memory(db, entry_id)
            db.execute("DELETE FROM memories WHERE id = ?", (entry_id,))

    def memory_stamp(self) -> tuple[int, float]:
        """(active entries, the latest change to any entry): it differs whenever what the
        requests carry may have changed, whichever process changed it. Each change moves the
        time forward (see _memory_time) and a deletion lowers the count, so equal stamps mean
        the same active entries."""
        with self._guard("read the memory of"):
            count, latest = self._db.execute(
                "SELECT (SELECT count(*) FROM memories WHERE state = 'active'), "
                "(SELECT max(updated_at) FROM memories)").fetchone()
        return count, latest or 0.0

    def export_memory(self) -> list[dict[str, Any]]:
        """Every entry, in every state (a dismissed one keeps its suggestion from coming back
        on the other machine), as JSON-ready rows for import_memory; oldest first."""
        with self._guard("export the memory of"):
            rows = self._db.execute(f"{_SELECT}ORDER BY created_at, id").fetchall()
        return [{field: getattr(entry, field) for field in EXPORT_FIELDS}
                for entry in map(_entry, rows)]

    def import_memory(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add the rows of an export (only "text" is needed); a text already stored, in any
        state, or given twice, is skipped, by the rule `memory add` uses (same_text). All or
        nothing: a row that is not an entry stops the import, naming it. How many entries were
        added.

        Linear, and brief under the write lock: the stored texts and the newest change are
        read once before it is taken, and the rows go in with one statement, so another
        jarvis-tui saving a message waits for the inserts alone."""
        wanted = _import_rows(rows)
        with self._guard("read the memory of"):
            stored = self._db.execute("SELECT text, updated_at FROM memories").fetchall()
        have = {same_text(text) for text, _ in stored}
        seen = max((updated for _, updated in stored), default=0.0)
        fresh = {}  # same_text: the row, in the file's order
        for row in wanted:
            if (key := same_text(row[0])) not in have:
                have.add(key)
                fresh[key] = row
        if not fresh:
            return 0
        with self._write("import memory entries into") as db:
            # Each change moves updated_at past every other (_memory_time), so what another
            # jarvis-tui stored since the read above is exactly what is newer than it.
            for (text,) in db.execute("SELECT text FROM memories WHERE updated_at > ?",
                                      (seen,)):
                fresh.pop(same_text(text), None)
            now = self._memory_time(db)
            db.executemany(
                "INSERT INTO memories (text, kind, state, pinned, created_at, updated_at, "
                "origin) VALUES (?, ?, ?, ?, ?, ?, 'import')",
                [(text, kind, state, int(pinned), now if when is None else when, now)
                 for text, kind, state, pinned, when in fresh.values()])
        return len(fresh)

    def memory_sources(self) -> dict[int, MemorySource]:
        """How each entry came and whether the message it came from is now taken out of the
        requests (/forget), by entry id: what F6 says of where an entry came from."""
        with self._guard("read the memory of"):
            rows = self._db.execute(
                "SELECT e.id, e.origin, coalesce(m.excluded, 0), m.role FROM memories e "
                "LEFT JOIN messages m ON m.id = e.message_id").fetchall()
        return {entry_id: MemorySource(origin if origin in MEMORY_ORIGINS else None,
                                       bool(excluded), role)
                for entry_id, origin, excluded, role in rows}

    # -- helpers ----------------------------------------------------------------------------

    def _check_memory(self, text: str | None, kind: str | None, state: str | None) -> None:
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise StoreError(f"{self.path}: a memory entry needs some text; nothing was saved.")
        if kind is not None and kind not in MEMORY_KINDS:
            raise StoreError(f"{self.path}: a memory entry's kind is one of "
                             f"{', '.join(MEMORY_KINDS)}, not {kind!r}; nothing was saved.")
        if state is not None:
            _check_state(self, state)

    def _require_memory(self, db: sqlite3.Connection, entry_id: int) -> None:
        if not storable(entry_id) or db.execute(
                "SELECT 1 FROM memories WHERE id = ?", (entry_id,)).fetchone() is None:
            raise StoreError(f"{self.path}: memory entry {entry_id} does not exist (deleted, "
                             "perhaps in another window).")

    def _memory(self, db: sqlite3.Connection, entry_id: int) -> MemoryEntry:
        return _entry(db.execute(f"{_SELECT}WHERE id = ?", (entry_id,)).fetchone())

    def _memory_time(self, db: sqlite3.Connection) -> float:
        """Now, but later than any entry's last change, so each change moves memory_stamp
        whatever the clock's resolution (or another machine's clock, over a shared disk)."""
        newest = db.execute("SELECT max(updated_at) FROM memories").fetchone()[0] or 0.0
        return max(self._now(), newest + 1e-6)


def same_text(text: str) -> str:
    """What two texts that say the same thing share: case, spacing, the closing stop and
    characters that show nothing aside ("Answer in Chinese." and "answer in  chinese")."""
    return " ".join(without_invisible(text).casefold().split()).rstrip(".。!！;；")


def _visible_only(text: str | None) -> str | None:
    """`text` without the characters that show nothing; anything else as given, for
    _check_memory to refuse."""
    return without_invisible(text) if isinstance(text, str) else text


def _import_rows(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, bool,
                                                                  float | None]]:
    """The rows of an export as (text, kind, state, pinned, created_at or None), each text
    without what shows nothing, or StoreError naming the first row that is not an entry."""
    wanted = []
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise StoreError(f"memory import: row {n} is not an object; nothing was imported.")
        text, kind = row.get("text"), row.get("kind", "fact")
        state, pinned = row.get("state", "active"), row.get("pinned", False)
        created = row.get("created_at")
        if isinstance(text, str):
            text = without_invisible(text).strip()
        problem = (
            "has no text" if not isinstance(text, str) or not text
            else f"has kind {kind!r}, not one of {', '.join(MEMORY_KINDS)}"
            if kind not in MEMORY_KINDS
            else f"has state {state!r}, not one of {', '.join(MEMORY_STATES)}"
            if state not in MEMORY_STATES
            else "has a pinned that is not true or false" if not isinstance(pinned, bool)
            else None)
        if problem:
            raise StoreError(f"memory import: row {n} {problem}; nothing was imported.")
        when = float(created) if isinstance(created, int | float) and not isinstance(
            created, bool) and 0 <= created < 1e11 else None
        wanted.append((text, kind, state, pinned, when))
    return wanted


def _check_origin(db: Db, origin: str | None) -> None:
    if origin is not None and origin not in MEMORY_ORIGINS:
        raise StoreError(f"{db.path}: a memory entry's origin is one of "
                         f"{', '.join(MEMORY_ORIGINS)}, not {origin!r}.")


def _excluded(db: sqlite3.Connection, message_id: int) -> bool:
    row = db.execute("SELECT excluded FROM messages WHERE id = ?", (message_id,)).fetchone()
    return bool(row and row[0])


def _check_state(db: Db, state: str) -> None:
    if state not in MEMORY_STATES:
        raise StoreError(f"{db.path}: a memory entry's state is one of "
                         f"{', '.join(MEMORY_STATES)}, not {state!r}.")


def _entry(row: tuple) -> MemoryEntry:
    entry_id, text, kind, state, pinned, conv, message, created, updated = row
    return MemoryEntry(entry_id, text, kind, state, bool(pinned), conv, message, created, updated)
