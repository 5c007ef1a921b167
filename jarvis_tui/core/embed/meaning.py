"""Recall by meaning: each stored message's vector (core/store/vectors.py), made by the embedder
(core/embed/model.py), and the cosine of a question's vector with them.

Messages are embedded after they are stored, a batch at a time, off the path that sends (the
engine's worker), and a session opened from an older store is indexed as recall first needs it
(`index`). The vectors are read from the file once and kept in memory, topped up with what was
added since: ranking 10,000 turns is one matrix product, a few milliseconds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence, Set
from dataclasses import dataclass

from jarvis_tui.core.embed.model import Embedder, Interrupted, Unavailable, bundled
from jarvis_tui.core.embed.numpy_later import np
from jarvis_tui.core.embed.remote import RemoteEmbedder
from jarvis_tui.core.store.store import Store

QUERIES_KEPT = 64  # the gauge asks again as the user types: the same text is embedded once
TEXTS_KEPT = 4096  # memory entries' vectors (recall/alike.py): every check reads them all
INDEX_AT_SEARCH = 256  # messages embedded before a search at most (the worker does the rest)
TABLES_KEPT = 8  # this session's turns, the other sessions' nearest: a few shapes at a time
PAUSE = 60.0  # seconds an interrupted embedder (network, HTTP 429 or 5xx) is not asked
INTERRUPTIONS = 3  # in a row: then it is off for the session, as any other failure


class Meaning:
    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self.unavailable: str | None = None  # why there is no model (said once by the engine)
        # Made by the first _refresh: no numpy before a vector is needed (numpy_later.py).
        self._ids: np.ndarray = None
        self._convs: np.ndarray = None
        self._matrix: np.ndarray = None
        self._row: dict[int, int] = {}
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._texts: OrderedDict[str, np.ndarray] = OrderedDict()
        # The engine embeds in a thread while the gauge ranks on the event loop.
        self._lock = threading.RLock()
        self._stale = False
        self._paused_until = 0.0  # an interrupted embedder is left alone until then
        self._interruptions = 0  # in a row
        self._tables: dict[Hashable, _TurnTable] = {}  # the turns ranked lately, by their ids

    @property
    def ready(self) -> bool:
        return self.unavailable is None

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        if not self.ready or time.monotonic() < self._paused_until:
            return None
        try:
            found = self.embedder.embed(texts)
            self._interruptions = 0
            return found
        except Interrupted as e:
            # Each try can wait for the network (a send waits for the question's vector):
            # not again for a while, and off after a few in a row.
            self._interruptions += 1
            if self._interruptions < INTERRUPTIONS:
                self._paused_until = time.monotonic() + PAUSE
                if self._interruptions == 1:
                    self.store.tell(f"recall by meaning is paused: {e}; earlier turns are "
                                    f"found by their words alone until it answers (tried "
                                    f"again in {PAUSE:.0f} s)")
                return None
            self.unavailable = f"{e} ({INTERRUPTIONS} times in a row)"
        except Unavailable as e:
            self.unavailable = str(e)
        except (OSError, ValueError, MemoryError) as e:  # a damaged package or file
            self.unavailable = f"the embedding model could not be loaded ({e})"
        self.store.tell(f"recall by meaning is off: {self.unavailable}; earlier turns are "
                        "found by their words alone")
        return None

    def index(self, conv_id: int | None = None, limit: int = 256) -> int:
        """Embeds and stores up to `limit` messages that have no vector yet (of `conv_id`, or
        of every session): how many."""
        if not self.ready:
            return 0
        todo = self.store.unembedded(self.embedder.name, conv_id, limit=limit)
        if not todo:
            return 0
        vectors = self._embed([text for _, text in todo])
        if vectors is None:
            return 0
        rows = [(mid, vec.astype(np.float16)) for (mid, _), vec in zip(todo, vectors, strict=True)]
        self.store.put_vectors(self.embedder.name, [(mid, vec.tobytes()) for mid, vec in rows])
        with self._lock:  # made again after an edit: the count alone would not show it
            self._stale = self._stale or any(mid in self._row for mid, _ in rows)
        return len(todo)

    def query(self, text: str) -> np.ndarray | None:
        with self._lock:
            return self._query(text)

    def _query(self, text: str) -> np.ndarray | None:
        vec = self._queries.get(text)
        if vec is None:
            found = self._embed([text])
            if found is None:
                return None
            vec = self._queries[text] = found[0]
            while len(self._queries) > QUERIES_KEPT:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return vec

    def embedded(self, texts: Sequence[str]) -> np.ndarray | None:
        """The vectors of `texts`, stored nowhere (a memory entry is no message), a row each;
        None without the model."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._texts))
            if todo:
                found = self._embed(todo)
                if found is None:
                    return None
                self._texts.update(zip(todo, found, strict=True))
            if not texts:
                return None
            out = np.stack([self._texts[t] for t in texts])
            for text in texts:
                self._texts.move_to_end(text)
            while len(self._texts) > TEXTS_KEPT:
                self._texts.popitem(last=False)
            return out

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The vector of each of `ids` that has one."""
        with self._lock:
            self._refresh()
            return {mid: self._matrix[r].copy() for mid in ids
                    if (r := self._row.get(mid)) is not None}

    def turn_cosines(self, vec: np.ndarray, turns: Sequence[Sequence[int]], *,
                     key: Hashable | None = None,
                     without: Set[int] = frozenset()) -> TurnCosines:
        """Of a question's vector `vec`, the cosine with each message of `turns` (message ids
        per turn), and with each turn as a whole (its messages' vectors summed). A message of
        `without`, or one with no vector yet, has none. One product with every vector, then
        sums per turn over a table of the turns kept between calls (`key`: what names these
        turns, when the caller knows; else their ids): a 10,000-turn session is not walked in
        Python per question."""
        with self._lock:
            self._refresh()
            ident = (key if key is not None else tuple(tuple(ids) for ids in turns),
                     frozenset(without))
            table = self._table(ident, turns, without)
            every = self._matrix @ vec if len(self._ids) else np.zeros(0, dtype=np.float32)
            member = (np.where(table.has, every[table.rows.clip(0)], np.nan) if len(every)
                      else np.full(len(table.rows), np.nan))
        whole = np.full(len(turns), np.nan)
        if len(table.starts):
            sums = np.add.reduceat(np.where(table.has, member, 0.0), table.starts) / table.norms
            whole[table.filled] = np.where(table.any, sums, np.nan)
        return TurnCosines(table, member, whole)

    def _table(self, ident: Hashable, turns: Sequence[Sequence[int]],
               without: Set[int]) -> _TurnTable:
        # Vectors added since it was made change nothing of a table none of whose messages
        # wanted one (each question adds its own): it is made again only then.
        table = self._tables.get(ident)
        if table is None or (table.missing and table.vectors != len(self._ids)):
            if len(self._tables) >= TABLES_KEPT:
                self._tables.clear()
            table = self._tables[ident] = _TurnTable(turns, self._row, self._matrix, without)
        return table

    def similarities(self, text: str, ids: Iterable[int]) -> dict[int, float]:
        """The cosine of `text` with each of `ids` that has a vector."""
        vec = self.query(text)
        if vec is None:
            return {}
        with self._lock:
            self._refresh()
            rows = [(mid, r) for mid in ids if (r := self._row.get(mid)) is not None]
            if not rows:
                return {}
            sims = self._matrix[[r for _, r in rows]] @ vec
        return {mid: float(s) for (mid, _), s in zip(rows, sims, strict=True)}

    def nearest_beyond(self, text: str, conv_id: int | None,
                       limit: int) -> list[tuple[int, int, float]]:
        """The `limit` messages of the other sessions nearest `text`: (id, session, cosine)."""
        return self.nearest(text, limit, beside=conv_id)

    def nearest(self, text: str, limit: int, *, within: int | None = None,
                beside: int | None = None) -> list[tuple[int, int, float]]:
        """The `limit` messages nearest `text` (of session `within` only, or of every session
        but `beside`), nearest first: (id, session, cosine)."""
        vec = self.query(text)
        if vec is None:
            return []
        with self._lock:
            self._refresh()
            if not len(self._ids):
                return []
            sims = self._matrix @ vec
            if within is not None:
                sims = np.where(self._convs == within, sims, -2.0)
            if beside is not None:
                sims = np.where(self._convs == beside, -2.0, sims)
            ids, convs = self._ids, self._convs
        top = np.argsort(-sims)[:limit]
        return [(int(ids[i]), int(convs[i]), float(sims[i])) for i in top if sims[i] > -2.0]

    def _refresh(self) -> None:
        if self._ids is None:
            self._ids, self._convs = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            self._matrix = np.zeros((0, 0), dtype=np.float32)
        model = self.embedder.name
        after = int(self._ids[-1]) if len(self._ids) else 0
        new = self.store.vector_rows(model, after)
        if self._stale or len(self._ids) + len(new) != self.store.vector_count(model):
            self._stale = False
            self._tables.clear()
            new, self._ids = self.store.vector_rows(model), self._ids[:0]  # deleted, re-made
            self._convs, self._matrix = self._convs[:0], self._matrix[:0]
        if not new:
            return
        matrix = np.stack([np.frombuffer(blob, dtype=np.float16) for _, _, blob in new])
        ids = np.array([mid for mid, _, _ in new], dtype=np.int64)
        convs = np.array([conv for _, conv, _ in new], dtype=np.int64)
        if len(self._ids):
            self._matrix = np.concatenate([self._matrix, matrix.astype(np.float32)])
            self._ids, self._convs = np.concatenate([self._ids, ids]), np.concatenate(
                [self._convs, convs])
        else:
            self._matrix, self._ids, self._convs = matrix.astype(np.float32), ids, convs
        self._row = {int(mid): i for i, mid in enumerate(self._ids)}


def chosen(base_url: str, embedding_model: str, api_key: str = "") -> Embedder:
    """The provider's endpoint when the user named a model for it, else the bundled model."""
    if embedding_model:
        return RemoteEmbedder(base_url, embedding_model, api_key)
    return bundled()


def for_command(store: Store, on: bool) -> Meaning | None:
    """For a command that has no engine (`search`, `memory add`): the bundled model's, while
    `on` (the setting recall_by_meaning), else None; the model is loaded when first used."""
    return Meaning(store, bundled()) if on else None


class _TurnTable:
    """Turns (message ids each, in order) as flat arrays: each message's row among the
    vectors (has: whether it has one), where each non-empty turn's run starts, and each turn's
    summed vector's length."""

    def __init__(self, turns: Sequence[Sequence[int]], row_of: dict[int, int],
                 matrix: np.ndarray, without: Set[int]) -> None:
        lengths = np.fromiter((len(ids) for ids in turns), dtype=np.int64, count=len(turns))
        flat = [m for ids in turns for m in ids]
        self.position = {m: i for i, m in enumerate(flat)}
        self.rows = np.fromiter((-1 if m in without else row_of.get(m, -1) for m in flat),
                                dtype=np.int64, count=len(flat))
        self.has = self.rows >= 0
        self.vectors = len(matrix)
        self.missing = sum(1 for m in flat if m not in without) - int(self.has.sum())
        self.filled = lengths > 0
        self.starts = (np.cumsum(lengths) - lengths)[self.filled]
        self.any = (np.logical_or.reduceat(self.has, self.starts) if len(self.starts)
                    else np.zeros(0, dtype=bool))
        norms = np.zeros(len(self.starts))
        if len(self.starts) and len(matrix):
            vectors = matrix[self.rows.clip(0)]
            vectors[~self.has] = 0.0  # a copy, float32 as it was: no second one in float64
            summed = np.add.reduceat(vectors, self.starts, axis=0)
            norms = np.linalg.norm(summed, axis=1)
        norms[norms == 0] = 1.0
        self.norms = norms


@dataclass(frozen=True)
class TurnCosines:
    """A question's cosines with turns' messages (flat, NaN: no vector; `table.position` maps
    a message id to its place) and with each turn as a whole (NaN: none of it has one)."""

    table: _TurnTable
    member: np.ndarray
    whole: np.ndarray
