"""The summaries compaction writes over a session's older messages. Nothing is deleted: a
covered message only points at the summary that first covered it, and an edited summary is a new
one that replaces the old, which stays.
"""

from __future__ import annotations

from collections.abc import Collection

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.db import Db, storable
from jarvis_tui.core.store.records import StoreError, Summary

SUMMARY_KINDS = ("auto", "manual", "edited")


class Summaries(Db):
    _SUMMARY_SELECT = (
        "SELECT id, conversation_id, content, first_message_id, last_message_id, covered_count, "
        "kind, focus, model, created_at, replaces_id FROM summaries "
    )

    def add_summary(
        self,
        conv_id: int,
        content: str,
        covered: list[Message],
        *,
        kind: str,
        focus: str | None = None,
        model: str = "",
        replaces_id: int | None = None,
    ) -> Summary:
        """Store a summary and mark the messages it newly covers, all in one transaction.

        The range runs from the conversation's earliest covered message (an incremental summary
        folds in the previous one) to the newest covered id; `covered_count` is how many messages
        in that range the summary stands for.
        """
        if kind not in SUMMARY_KINDS:
            raise ValueError(f"unknown summary kind {kind!r}")
        ids = [m.id for m in covered if m.id is not None]
        if len(ids) != len(covered):
            raise ValueError("every covered message must be stored first")
        now = self._now()
        with self._write("save a summary to") as db:
            self._require_conversation(db, conv_id)
            cur = db.execute(
                "INSERT INTO summaries (conversation_id, content, covered_count, kind, focus, "
                "model, created_at, replaces_id) VALUES (?, ?, 0, ?, ?, ?, ?, ?)",
                (conv_id, content, kind, focus, model, now, replaces_id),
            )
            sid = cur.lastrowid
            newly: list[Message] = []
            for msg in covered:
                found = db.execute(
                    "SELECT summary_id FROM messages WHERE id = ? AND conversation_id = ?",
                    (msg.id, conv_id),
                ).fetchone()
                if found is None:
                    raise StoreError(
                        f"{self.path}: message {msg.id} is not in conversation {conv_id}; "
                        "the summary was not saved."
                    )
                if found[0] is None:
                    db.execute("UPDATE messages SET summary_id = ? WHERE id = ?", (sid, msg.id))
                    newly.append(msg)
            first, last = db.execute(
                "SELECT min(id), max(id) FROM messages WHERE conversation_id = ? AND "
                "summary_id IS NOT NULL",
                (conv_id,),
            ).fetchone()
            if ids:
                last = max(ids)
            count = db.execute(
                "SELECT count(*) FROM messages WHERE conversation_id = ? AND "
                "summary_id IS NOT NULL AND id BETWEEN ? AND ?",
                (conv_id, first, last),
            ).fetchone()[0]
            db.execute(
                "UPDATE summaries SET first_message_id = ?, last_message_id = ?, "
                "covered_count = ? WHERE id = ?",
                (first, last, count, sid),
            )
            self._touch(db, conv_id)
        # Only after the commit, so a failed save leaves the in-memory messages untouched too.
        for msg in newly:
            msg.summary_id = sid
        return Summary(
            sid or 0, conv_id, content, first, last, count, kind, focus, model, now, replaces_id
        )

    def edit_summary(self, summary_id: int, content: str) -> Summary:
        """A user's edit is stored as a new summary that replaces the old; the old one stays."""
        now = self._now()
        with self._write("save an edited summary to") as db:
            row = db.execute(self._SUMMARY_SELECT + "WHERE id = ?", (summary_id,)).fetchone() \
                if storable(summary_id) else None
            if row is None:
                raise StoreError(f"{self.path}: summary {summary_id} does not exist.")
            old = Summary(*row)
            cur = db.execute(
                "INSERT INTO summaries (conversation_id, content, first_message_id, "
                "last_message_id, covered_count, kind, focus, model, created_at, replaces_id) "
                "VALUES (?, ?, ?, ?, ?, 'edited', ?, ?, ?, ?)",
                (
                    old.conversation_id, content, old.first_message_id, old.last_message_id,
                    old.covered_count, old.focus, old.model, now, old.id,
                ),
            )
            self._touch(db, old.conversation_id)
        return Summary(
            cur.lastrowid or 0, old.conversation_id, content, old.first_message_id,
            old.last_message_id, old.covered_count, "edited", old.focus, old.model, now, old.id,
        )

    def latest_summary(self, conv_id: int) -> Summary | None:
        if not storable(conv_id):
            return None
        with self._guard("read"):
            row = self._db.execute(
                self._SUMMARY_SELECT + "WHERE conversation_id = ? ORDER BY id DESC LIMIT 1",
                (conv_id,),
            ).fetchone()
        return Summary(*row) if row else None

    def summary_on(self, conv_id: int, branch: Collection[int]) -> Summary | None:
        """The summary in force on a branch (`branch`: the ids of its messages): the newest one
        whose last covered message is on it. One made on another branch after they parted
        folds in turns this branch never had; one made before they parted, or an edit of it,
        holds only turns they share. In a session of one branch, the newest summary."""
        if not storable(conv_id):
            return None
        with self._guard("read"):
            rows = self._db.execute(
                self._SUMMARY_SELECT + "WHERE conversation_id = ? ORDER BY id DESC", (conv_id,)
            ).fetchall()
        return next((Summary(*row) for row in rows if row[4] in branch), None)

    def summaries(self, conv_id: int) -> list[Summary]:
        if not storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(
                self._SUMMARY_SELECT + "WHERE conversation_id = ? ORDER BY id", (conv_id,)
            ).fetchall()
        return [Summary(*row) for row in rows]
