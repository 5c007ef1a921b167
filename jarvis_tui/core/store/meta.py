"""What a session learned about its server (its context limit, a calibration factor), as one
JSON object per conversation. A stored object that cannot be read is kept, not dropped: the engine
writes here after every reply, and the text may be all that is left of those settings.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from jarvis_tui.core.store.db import Db, dump_json, load_json, storable
from jarvis_tui.core.store.records import StoreError, Unreadable

# Where set_meta keeps a conversation's stored meta text that was not a JSON object.
UNREADABLE_META = "unreadable_meta"


class Meta(Db):
    def _meta(self, db: sqlite3.Connection, conv_id: int
              ) -> tuple[dict[str, Any], Unreadable | None]:
        row = db.execute(
            "SELECT meta FROM conversations WHERE id = ?", (conv_id,)
        ).fetchone() if storable(conv_id) else None
        if row is None:
            raise StoreError(f"{self.path}: conversation {conv_id} does not exist.")
        meta, problem = load_json(row[0] or "{}", dict)
        if problem:
            return {}, Unreadable(conv_id, None, "meta", problem, row[0])
        return meta, None

    def get_meta(self, conv_id: int, key: str, default: Any = None) -> Any:
        with self._guard("read"):
            meta, unreadable = self._meta(self._db, conv_id)
        self._report([unreadable] if unreadable else [])
        return meta.get(key, default)

    def set_meta(self, conv_id: int, key: str, value: Any, *,
                 wait: float | None = None) -> None:
        with self._write("save settings of a conversation to", wait=wait) as db:
            meta, unreadable = self._meta(db, conv_id)
            if unreadable:
                # Not refused: the engine saves what it learns after every reply, and a round
                # must not fail over a field the user never sees. Not dropped either: the text
                # may be all that is left of those settings, so it moves under a key of its own.
                meta[UNREADABLE_META] = unreadable.stored_text
            meta[key] = value
            db.execute(
                "UPDATE conversations SET meta = ? WHERE id = ?", (dump_json(meta), conv_id)
            )
        if unreadable:
            self._notice(f"session {conv_id}: meta could not be read; its stored text is now "
                         f"kept in it under {UNREADABLE_META!r}")
