"""The embeddings table (schema.py, migration 7): what each message means, as one vector per
message and model, for recall by meaning (core/embed/meaning.py). Stored as float16 bytes:
half the room of float32, and the ranking it gives is the same to the third decimal.

Only what recall may read is indexed: the user's and the assistant's text, never a failed or
excluded message, nor an empty one (a reply that was all tool calls).
"""

from __future__ import annotations

from collections.abc import Iterable

from jarvis_tui.core.store.db import Db

_INDEXABLE = ("m.role IN ('user', 'assistant') AND m.status != 'failed' AND m.excluded = 0 "
              "AND m.content != ''")


class Vectors(Db):
    def unembedded(self, model: str, conv_id: int | None = None, *,
                   limit: int = 256) -> list[tuple[int, str]]:
        """Messages (of `conv_id`, or of every session) with no vector of `model` yet, newest
        first: (id, text). Newest first: the session open now is what recall reads next."""
        where = "" if conv_id is None else "AND m.conversation_id = :conv "
        with self._guard("read"):
            rows = self._db.execute(
                f"SELECT m.id, m.content FROM messages m WHERE {_INDEXABLE} {where}"
                "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.message_id = m.id "
                "AND e.model = :model) ORDER BY m.id DESC LIMIT :limit",
                {"model": model, "conv": conv_id, "limit": limit})
            return [(int(mid), text) for mid, text in rows]

    def put_vectors(self, model: str, vectors: Iterable[tuple[int, bytes]]) -> None:
        """Stores each message's vector; one deleted meanwhile is skipped."""
        with self._write("index the meaning of messages in") as db:
            db.executemany(
                "INSERT OR REPLACE INTO embeddings (message_id, model, vector) "
                "SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?1)",
                [(mid, model, blob) for mid, blob in vectors])

    def vector_rows(self, model: str, after: int = 0) -> list[tuple[int, int, bytes]]:
        """(message id, its session, vector) of `model` for messages past id `after`."""
        with self._guard("read"):
            return self._db.execute(
                "SELECT e.message_id, m.conversation_id, e.vector FROM embeddings e "
                "JOIN messages m ON m.id = e.message_id WHERE e.model = ? AND e.message_id > ? "
                "ORDER BY e.message_id", (model, after)).fetchall()

    def vector_count(self, model: str) -> int:
        with self._guard("read"):
            return int(self._db.execute(
                "SELECT count(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0])
