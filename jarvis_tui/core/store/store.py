"""SQLite session store: conversations, every message ever sent, the summaries over them, and the
user's memory, which every conversation shares.

Compaction never deletes anything: a summarised message only gets `summary_id` set to the summary
that first covered it, so the full history stays on disk and can be exported. API keys have no
column here on purpose; the store must never hold a secret.

`Store` is its parts put together, each in a file of its own over the database in db.py; only
the export, which reads every part, is written here.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from jarvis_tui.core.costs import tally
from jarvis_tui.core.store.attachments import Attachments
from jarvis_tui.core.store.conversations import Conversations
from jarvis_tui.core.store.memory import MemoryEntries
from jarvis_tui.core.store.messages import Messages
from jarvis_tui.core.store.meta import Meta
from jarvis_tui.core.store.records import StoreError, UsageRow
from jarvis_tui.core.store.search import Search
from jarvis_tui.core.store.summaries import Summaries
from jarvis_tui.core.store.usage import Usage
from jarvis_tui.core.store.vectors import Vectors
from jarvis_tui.core.tree import path_to


class Store(Attachments, Conversations, Messages, Search, Summaries, Usage, Meta, MemoryEntries,
            Vectors):
    def export(self, conv_id: int) -> dict[str, Any]:
        """The whole conversation as JSON-ready data, covered messages included. A stored field
        that cannot be read is left out of its place and listed under "problems" with its stored
        text, so the export of everything else still works and nothing is lost."""
        with self._guard("export"):
            conv = self.get_conversation(conv_id)
            if conv is None:
                raise StoreError(f"{self.path}: conversation {conv_id} does not exist.")
            meta, bad_meta = self._meta(self._db, conv_id)
            seqs = dict(
                self._db.execute(
                    "SELECT id, seq FROM messages WHERE conversation_id = ?", (conv_id,)
                ).fetchall()
            )
            msgs, unreadable = self._messages(conv_id)
            head = self._head(self._db, conv_id)
            sums = self.summaries(conv_id)
            used = self.usage_rows(conv_id)
            per_model = self.usage_totals(conv_id)
            memory = self.memories(("active",))
        totals = tally(per_model, {})
        unreadable = [bad_meta, *unreadable] if bad_meta else unreadable
        self._report(unreadable)
        by_message: dict[int, list[dict[str, Any]]] = {}
        by_summary: dict[int, list[dict[str, Any]]] = {}
        for row in used:
            counts = _usage_fields(row)
            if row.message_id is not None:
                by_message.setdefault(row.message_id, []).append(counts)
            if row.summary_id is not None:
                by_summary.setdefault(row.summary_id, []).append(counts)
        shown = {id(m) for m in path_to(msgs, head)}
        return {
            "conversation": {**asdict(conv), "meta": meta, "head_id": head or None},
            "messages": [
                {
                    "id": m.id, "seq": seqs[m.id], "role": m.role, "content": m.content,
                    "status": m.status, "pinned": m.pinned, "excluded": m.excluded,
                    "parent_id": m.parent_id or None, "on_branch_shown": id(m) in shown,
                    "covered": m.covered, "summary_id": m.summary_id, "tool_calls": m.tool_calls,
                    "tool_call_id": m.tool_call_id, "name": m.name, "created_at": m.created_at,
                    "usage": by_message.get(m.id or 0, []),
                    # [start, end) spans of content the user pasted rather than typed
                    "pasted": [list(span) for span in m.pasted],
                    # The files it carries, as they were when sent (their text is in content)
                    "attachments": [asdict(a) for a in m.attachments],
                }
                for m in msgs
            ],
            "summaries": [{**asdict(s), "usage": by_summary.get(s.id, [])} for s in sums],
            # What every request of the session carried besides its messages, and where each
            # entry was said (a session and message of this store; None when typed or imported).
            "memory": [{k: v for k, v in asdict(e).items() if k != "state"} for e in memory],
            # Token counts only: prices are the config's, and may have changed since.
            "usage": {
                "chat_requests": totals.chat_requests,
                "summary_requests": totals.summary_requests,
                "prompt_tokens": totals.prompt_tokens,
                "cached_tokens": totals.cached_tokens,
                "cache_write_tokens": totals.cache_write_tokens,
                "completion_tokens": totals.completion_tokens,
                "freed_tokens": totals.freed_tokens,
                "cached_reported_requests": totals.reported_requests,
                "by_model": [asdict(t) for t in per_model],
            },
            "problems": [
                {"message_id": u.message_id, "field": u.field, "problem": str(u),
                 "stored_text": u.stored_text}
                for u in unreadable
            ],
        }


def _usage_fields(row: UsageRow) -> dict[str, Any]:
    """A usage row as exported beside its message or summary (its ids are where it sits)."""
    return {"kind": row.kind, "model": row.model, "prompt_tokens": row.prompt_tokens,
            "cached_tokens": row.cached_tokens, "cache_write_tokens": row.cache_write_tokens,
            "completion_tokens": row.completion_tokens, "freed_tokens": row.freed_tokens,
            "created_at": row.created_at}
