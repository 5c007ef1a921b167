"""Sessions as the session list sees them: made, found, listed, renamed, marked as used, and
the lock that keeps one round at a time on each. What is in a session lives in messages.py.
"""

from __future__ import annotations

from jarvis_tui.core.store.db import Db, storable
from jarvis_tui.core.store.lock import SessionLock
from jarvis_tui.core.store.records import SessionInfo


class Conversations(Db):
    _CONV_SELECT = (
        "SELECT c.id, c.title, c.created_at, c.updated_at, c.model, "
        "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c "
    )

    def create_conversation(self, title: str = "", model: str = "") -> SessionInfo:
        with self._write("create a conversation in") as db:
            newest = db.execute("SELECT max(updated_at) FROM conversations").fetchone()[0] or 0.0
            now = max(self._now(), newest + 1e-6)
            cur = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, model) "
                "VALUES (?, ?, ?, ?)",
                (title, now, now, model),
            )
        return SessionInfo(cur.lastrowid or 0, title, now, now, model, 0)

    def get_conversation(self, conv_id: int) -> SessionInfo | None:
        if not storable(conv_id):
            return None
        with self._guard("read"):
            row = self._db.execute(self._CONV_SELECT + "WHERE c.id = ?", (conv_id,)).fetchone()
        return SessionInfo(*row) if row else None

    def latest_conversation(self) -> SessionInfo | None:
        found = self.list_conversations(limit=1)
        return found[0] if found else None

    def list_conversations(self, limit: int | None = None) -> list[SessionInfo]:
        with self._guard("read"):
            rows = self._db.execute(
                self._CONV_SELECT + "ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def touch(self, conv_id: int) -> None:
        """Mark a conversation as the most recently used (resuming it counts as using it)."""
        with self._write("update a conversation in") as db:
            self._require_conversation(db, conv_id)
            self._touch(db, conv_id)

    def set_title(self, conv_id: int, title: str) -> None:
        with self._write("rename a conversation in") as db:
            self._require_conversation(db, conv_id)
            db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conv_id))

    def session_lock(self, conv_id: int) -> SessionLock:
        """The lock that keeps one round at a time on a session, across processes."""
        return SessionLock(self.path, conv_id)
