"""The attachments table (schema.py, issue 42): the files each message carries, written with
the message in one transaction, read with the messages, copied by a fork. A body (the whole
text of a file sent as a part or a digest, an image's bytes) is read only when asked for."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from jarvis_tui.core.messages import Attached
from jarvis_tui.core.store.db import Db

_COLUMNS = ("path, kind, sha256, size, mtime, span_start, span_end, how, first_line, "
            "last_line, media_type, width, height")


def write_attachments(db: sqlite3.Connection, message_id: int,
                      attached: Sequence[Attached]) -> None:
    db.executemany(
        f"INSERT INTO attachments (message_id, position, {_COLUMNS}, body) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(message_id, i, a.path, a.kind, a.sha256, a.size, a.mtime, a.start, a.end, a.how,
          a.first, a.last, a.media_type, a.width, a.height, a.body)
         for i, a in enumerate(attached)])


def copy_attachments(db: sqlite3.Connection, old_id: int, new_id: int) -> None:
    db.execute(f"INSERT INTO attachments (message_id, position, {_COLUMNS}, body) "
               f"SELECT ?, position, {_COLUMNS}, body FROM attachments WHERE message_id = ?",
               (new_id, old_id))


def load_attachments(db: sqlite3.Connection, conv_id: int) -> dict[int, tuple[Attached, ...]]:
    """message id -> its attachments in order, for every message of `conv_id` that has any."""
    out: dict[int, list[Attached]] = {}
    for mid, *row in db.execute(
            f"SELECT a.message_id, {', '.join('a.' + c.strip() for c in _COLUMNS.split(','))}, "
            "CASE WHEN a.kind = 'image' THEN a.body END "
            "FROM attachments a JOIN messages m ON m.id = a.message_id "
            "WHERE m.conversation_id = ? ORDER BY a.message_id, a.position", (conv_id,)):
        # An image's bytes come with it: every request sends them again (a file's text is in
        # the message; a digest's body is read only when the model asks).
        *record, body = row
        out.setdefault(mid, []).append(Attached(*record, body=bytes(body) if body else None))
    return {mid: tuple(found) for mid, found in out.items()}


class Attachments(Db):
    def attachment_body(self, message_id: int, position: int) -> bytes | None:
        """What the message's `position`th attachment's block does not hold; None: it holds
        it all (or there is no such attachment)."""
        with self._guard("read"):
            row = self._db.execute("SELECT body FROM attachments WHERE message_id = ? AND "
                                   "position = ?", (message_id, position)).fetchone()
        return bytes(row[0]) if row and row[0] is not None else None

    def last_sent(self, conv_id: int, path: str) -> Attached | None:
        """The newest attachment of `path` in `conv_id`: a resend compares its digest."""
        with self._guard("read"):
            row = self._db.execute(
                f"SELECT {', '.join('a.' + c.strip() for c in _COLUMNS.split(','))} "
                "FROM attachments a JOIN messages m ON m.id = a.message_id "
                "WHERE m.conversation_id = ? AND a.path = ? ORDER BY m.seq DESC, a.position "
                "LIMIT 1", (conv_id, path)).fetchone()
        return Attached(*row) if row else None
