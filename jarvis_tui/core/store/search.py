"""Full-text search over a session's messages, through the index in search_index.py. The index
holds nothing the messages do not, so a damaged one is rebuilt from them and asked again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from jarvis_tui.core.store import search_index
from jarvis_tui.core.store.db import Db, storable

_T = TypeVar("_T")
POSTINGS_KEPT = 512  # terms' postings kept between the reads of one question


class Search(Db):
    def search(self, conv_id: int, text: str, *, limit: int = 10,
               covered_only: bool = False) -> list[search_index.Hit]:
        """Messages of `conv_id` that share words (or CJK characters and pairs) with `text`,
        best first, failed and excluded ones left out; `covered_only`: only those a summary
        covers and nothing pinned back. A damaged index is rebuilt (the user is told) and
        asked again."""
        if not storable(conv_id):
            return []
        return self._ask_index(lambda db: search_index.search(
            db, conv_id, text, limit=limit, covered_only=covered_only))

    def postings(self, conv_id: int, words: list[str], *,
                 cap: int) -> dict[str, list[int] | None]:
        """For each of `words` (terms as the index makes them), the ids of the messages of
        `conv_id` that hold it (failed and excluded ones left out), or None when more than
        `cap` do (see search_index.postings).
        Read-only; a damaged index is rebuilt (the user is told) and asked again, as in
        search."""
        if not storable(conv_id):
            return {}
        # A question reads the same terms two or three times (the evidence rule, the ranker's
        # word shares): kept while the file is as it was, by this connection and any other.
        with self._guard("read"):
            state = (self._db.total_changes,
                     self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._postings_state != state or len(self._postings_kept) > POSTINGS_KEPT:
            self._postings_state, self._postings_kept = state, {}
        kept = self._postings_kept
        todo = list(dict.fromkeys(w for w in words if (conv_id, w, cap) not in kept))
        if todo:
            found = self._ask_index(lambda db: search_index.postings(db, conv_id, todo, cap))
            kept.update({(conv_id, w, cap): ids for w, ids in found.items()})
        return {w: None if (ids := kept[conv_id, w, cap]) is None else list(ids) for w in words}

    def search_sessions(self, text: str, *, limit: int = 10,
                        beside: int | None = None) -> list[search_index.SessionHit]:
        """Messages of every session but `beside` that share words with `text`, best first,
        failed and excluded ones left out (see search_index.search_sessions)."""
        return self._ask_index(lambda db: search_index.search_sessions(
            db, text, limit=limit, beside=beside))

    def postings_beyond(self, conv_id: int, words: list[str], *,
                        cap: int) -> dict[str, dict[int, int] | None]:
        """As postings, over the sessions other than `conv_id`: message id -> its session."""
        return self._ask_index(lambda db: search_index.postings_beyond(db, conv_id, words, cap))

    def sendable_beyond(self, conv_id: int) -> int:
        """Messages of the other sessions that recall may bring back."""
        with self._guard("read"):
            return search_index.sendable_beyond(self._db, conv_id)

    def _ask_index(self, ask: Callable[[sqlite3.Connection], _T]) -> _T:
        # A read can meet damage the probe at open did not (it reads only part of the index):
        # the index holds nothing the messages do not, so it is rebuilt and asked once more,
        # rather than failing a search the user can do nothing about.
        with self._guard("search"):
            try:
                return ask(self._db)
            except (sqlite3.DatabaseError, MemoryError) as e:
                damage = search_index.damage(e)
                if damage is None:
                    raise
            self._rebuild_index()
            self._notice(self._rebuilt(damage))
            return ask(self._db)
