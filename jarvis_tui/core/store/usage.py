"""What each request cost, as the server counted it, kept per session so its cost can be shown
and exported. The counts come from a server, so they are clamped, never refused: a reply must
not be lost over a misbehaving server's number.
"""

from __future__ import annotations

from typing import Literal, overload

from jarvis_tui.core.store.db import Db, storable
from jarvis_tui.core.store.records import StoreError, UsageRow, UsageTotal

USAGE_KINDS = ("chat", "summary")
# One request's token count is at most this (far past any real one), so a session's sums stay
# inside SQLite's integers however many requests a misbehaving server inflates.
MAX_COUNT = 10**12


class Usage(Db):
    _USAGE_SELECT = (
        "SELECT id, conversation_id, message_id, summary_id, kind, model, prompt_tokens, "
        "cached_tokens, cache_write_tokens, completion_tokens, freed_tokens, created_at "
        "FROM usage "
    )

    def add_usage(self, conversation_id: int, *, kind: str, model: str, prompt_tokens: int,
                  completion_tokens: int, cached_tokens: int | None = None,
                  cache_write_tokens: int | None = None, message_id: int | None = None,
                  summary_id: int | None = None, freed_tokens: int | None = None,
                  wait: float | None = None) -> UsageRow:
        """Keep what one request cost. kind "chat": `message_id` is the reply it brought;
        kind "summary": `summary_id` is the summary, and the calls of one compaction share it,
        `freed_tokens` (what the compaction took off the request) given on one of them.
        `wait` as for add_message. Counts are the server's: one below 0 or above MAX_COUNT (a
        misbehaving server) is stored as the nearest it may be, not refused."""
        if kind not in USAGE_KINDS:
            raise ValueError(f"unknown usage kind {kind!r}")
        prompt = _count("prompt_tokens", prompt_tokens, required=True)
        completion = _count("completion_tokens", completion_tokens, required=True)
        cached = _count("cached_tokens", cached_tokens)
        written = _count("cache_write_tokens", cache_write_tokens)
        freed = _count("freed_tokens", freed_tokens)
        now = self._now()
        with self._write("save token usage to", wait=wait) as db:
            self._require_conversation(db, conversation_id)
            for table, row_id in (("messages", message_id), ("summaries", summary_id)):
                if row_id is not None and (not storable(row_id) or db.execute(
                        f"SELECT 1 FROM {table} WHERE id = ? AND conversation_id = ?",
                        (row_id, conversation_id)).fetchone() is None):
                    what = "message" if table == "messages" else "summary"
                    raise StoreError(f"{self.path}: {what} {row_id} is not in conversation "
                                     f"{conversation_id}; the usage was not saved.")
            cur = db.execute(
                "INSERT INTO usage (conversation_id, message_id, summary_id, kind, model, "
                "prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, "
                "freed_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, message_id, summary_id, kind, model, prompt, cached, written,
                 completion, freed, now))
        return UsageRow(cur.lastrowid or 0, conversation_id, message_id, summary_id, kind, model,
                        prompt, cached, written, completion, freed, now)

    def usage_rows(self, conv_id: int) -> list[UsageRow]:
        """Every request's counts of `conv_id`, oldest first."""
        if not storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(self._USAGE_SELECT + "WHERE conversation_id = ? ORDER BY id",
                                    (conv_id,)).fetchall()
        return [UsageRow(*row) for row in rows]

    def latest_usage(self, conv_id: int, kind: str = "chat") -> UsageRow | None:
        """The newest request of `kind` in `conv_id` that has counts, or None."""
        if not storable(conv_id):
            return None
        with self._guard("read"):
            row = self._db.execute(
                self._USAGE_SELECT + "WHERE conversation_id = ? AND kind = ? ORDER BY id DESC "
                "LIMIT 1", (conv_id, kind)).fetchone()
        return UsageRow(*row) if row else None

    def usage_totals(self, conv_id: int) -> list[UsageTotal]:
        """The session's requests summed per kind and model (each model has its own price)."""
        if not storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT kind, model, count(*), sum(prompt_tokens), sum(completion_tokens), "
                "sum(cached_tokens), sum(cache_write_tokens), count(cached_tokens), "
                "coalesce(sum(CASE WHEN cached_tokens IS NOT NULL THEN prompt_tokens END), 0), "
                "sum(freed_tokens) FROM usage WHERE conversation_id = ? "
                "GROUP BY kind, model ORDER BY min(id)", (conv_id,)).fetchall()
        return [UsageTotal(*row) for row in rows]

    def last_compaction_usage(self, conv_id: int) -> list[UsageRow]:
        """The summary requests of the newest compaction that has any (an edit of its summary
        made none, so it still shows what the compaction before it cost)."""
        if not storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(
                self._USAGE_SELECT + "WHERE conversation_id = ? AND kind = 'summary' AND "
                "summary_id = (SELECT max(summary_id) FROM usage WHERE conversation_id = ? AND "
                "kind = 'summary') ORDER BY id", (conv_id, conv_id)).fetchall()
        return [UsageRow(*row) for row in rows]


@overload
def _count(name: str, value: object, *, required: Literal[True]) -> int: ...
@overload
def _count(name: str, value: object, *, required: bool = False) -> int | None: ...
def _count(name: str, value: object, *, required: bool = False) -> int | None:
    """A token count for a column: None (the server did not say) stays None where allowed;
    below zero or above MAX_COUNT (a misbehaving server) becomes the nearest it may be."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    return min(max(value, 0), MAX_COUNT)
