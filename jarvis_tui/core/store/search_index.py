"""A full-text index over every stored message, for Chinese as well as English.

SQLite's FTS5 splits text at spaces and punctuation, which Chinese does not have: a sentence
would be one "word". So each message is indexed as *terms* made here: Latin words and numbers
lower-cased, and every CJK run as its single characters plus its overlapping pairs (上下文 →
上 下 文 上下 下文). A query is made of terms the same way; BM25 ranks a message higher the more
(and the rarer) terms it shares, so pairs make exact phrases win and single characters still
find "猫" in "我的猫叫咪咪" for "猫的名字". English words are stemmed (Porter), so "named"
answers "name".

SQL triggers keep the index in step with the messages table in the same transaction, calling
`jt_terms`, which every connection registers (`install`). The index is created, and filled from
the messages, whenever it is missing or damaged: it holds nothing the messages do not.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

TERMS_FUNCTION = "jt_terms"
TABLE = "message_index"
MISSING = "missing"  # what `problem` says of a store without the index

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{CJK}]+|[^\W_{CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{CJK}]")
# Characters and words that say nothing about which earlier turn a question is about: as
# single characters they match half the conversation and only slow the search down.
CJK_STOP = frozenset("的了是我你他她它们吗呢吧啊么什这那在和也都就要会着个一不有还")
STOPWORDS = frozenset("""
a an and are as at be but by can could did do does for from had has have how i if in into is it
its me my of on or our please remember said say tell than that the their them then there these
they this to told us was we were what when where which who why will with would you your
""".split())

_SCHEMA = (
    f"""CREATE VIRTUAL TABLE {TABLE} USING fts5(
        terms, conversation_id UNINDEXED,
        tokenize = 'porter unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_insert AFTER INSERT ON messages BEGIN
        INSERT INTO {TABLE} (rowid, terms, conversation_id)
        VALUES (new.id, {TERMS_FUNCTION}(new.content), new.conversation_id);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_update AFTER UPDATE OF content ON messages BEGIN
        UPDATE {TABLE} SET terms = {TERMS_FUNCTION}(new.content) WHERE rowid = new.id;
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON messages BEGIN
        DELETE FROM {TABLE} WHERE rowid = old.id;
    END""",
)


INDEXED_EDGE = 128 * 1024  # characters indexed at each end of a longer message


def terms(text: str | None) -> str:
    """The indexable terms of `text`, space-separated. Of a very long message (a tool that
    returned a 4 MB log), its start and end: indexing all of it runs inside the write, on the
    event loop, for seconds, and recall finds a turn by what it says up front."""
    text = text or ""
    if len(text) > 2 * INDEXED_EDGE:
        text = f"{text[:INDEXED_EDGE]}\n{text[-INDEXED_EDGE:]}"
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if _IS_CJK.match(token):
            out.extend(token)
            out.extend(token[i:i + 2] for i in range(len(token) - 1))
        else:
            out.append(token.lower())
    return " ".join(out)


def is_cjk(term: str) -> bool:
    """Whether `term` is CJK (the index's terms are all CJK or all not)."""
    return bool(_IS_CJK.match(term))


def query_terms(text: str) -> list[str]:
    """The distinct terms of a question worth searching for, in order."""
    seen: dict[str, None] = {}
    for term in terms(text).split():
        if term in STOPWORDS or term in CJK_STOP:
            continue
        if len(term) > 1 or _IS_CJK.match(term) or term.isdigit():
            seen.setdefault(term, None)
    return list(seen)


def install(db: sqlite3.Connection) -> None:
    """Register the terms function on this connection (the triggers call it)."""
    db.create_function(TERMS_FUNCTION, 1, terms, deterministic=True)


def missing(db: sqlite3.Connection) -> bool:
    names = {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE name IN (?, ?, ?, ?)",
        (TABLE, f"{TABLE}_insert", f"{TABLE}_update", f"{TABLE}_delete"))}
    return len(names) < 4


def damage(error: BaseException) -> str | None:
    """What `error` says of garbage in the index's own records, or None when it is not that.
    FTS5 says CORRUPT_VTAB; a garbage length can also make it ask for more memory than exists,
    which SQLite reports as out of memory (MemoryError)."""
    if isinstance(error, MemoryError):
        return "SQLite ran out of memory reading it"
    name = getattr(error, "sqlite_errorname", None) or ""
    return str(error) if name.startswith("SQLITE_CORRUPT_VTAB") else None


def problem(db: sqlite3.Connection) -> str | None:
    """Why the index must be built: "missing", or what reading it met (a damaged index); None
    when it reads. The probe looks one term up, which reads the index's configuration, its
    structure record and a leaf, so it costs well under a millisecond at any size."""
    if missing(db):
        return MISSING
    try:
        db.execute(f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH '\"probe\"' LIMIT 1").fetchall()
    except (sqlite3.DatabaseError, MemoryError) as e:
        # A wrong file format is SQLITE_ERROR, not CORRUPT_VTAB; the probe's query is fixed, so
        # any such error is the index's. Locks and I/O are not damage: the caller reports those.
        name = getattr(e, "sqlite_errorname", None) or ""
        found = damage(e) or (str(e) if name in ("SQLITE_CORRUPT", "SQLITE_ERROR") else None)
        if found is None:
            raise
        return found
    return None


def build(db: sqlite3.Connection) -> None:
    """Create the index and its triggers and fill it from the messages (inside a write)."""
    shadows = _empty_shadow_tables()
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone():
        # DROP TABLE has to open an FTS5 table first, which fails when its records are
        # garbage: its shadow tables are made those of a new, empty index so that it opens.
        for name, (sql, rows) in shadows.items():
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
            db.execute(sql)
            if rows:
                db.executemany(f'INSERT INTO "{name}" VALUES ({", ".join("?" * len(rows[0]))})',
                               rows)
    db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    for name in shadows:  # leftovers of an index whose table is gone
        db.execute(f'DROP TABLE IF EXISTS "{name}"')
    for statement in _SCHEMA:
        db.execute(statement)
    db.execute(f"INSERT INTO {TABLE} (rowid, terms, conversation_id) "
               f"SELECT id, {TERMS_FUNCTION}(content), conversation_id FROM messages")


def _empty_shadow_tables() -> dict[str, tuple[str, list[tuple]]]:
    """The shadow tables of a new, empty index, as SQLite itself makes them: name -> (CREATE
    statement, rows). Made in memory, so they always match the SQLite that reads them."""
    fresh = sqlite3.connect(":memory:")
    try:
        fresh.execute(_SCHEMA[0])
        tables = fresh.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND "
                               "name != ?", (TABLE,)).fetchall()
        return {name: (sql, fresh.execute(f'SELECT * FROM "{name}"').fetchall())
                for name, sql in tables}
    finally:
        fresh.close()


# The messages any reader of the index may find: what a request could send (not failed, not
# taken out by the user with x or /forget). It is in every query, not left to the callers: a
# turn the user took out must never come back through recall, search or the model's tool, and
# excluded messages counted as matches would also crowd out, or make look common, the words of
# the turns the user kept.
_SENDABLE = "messages.status != 'failed' AND messages.excluded = 0"


@dataclass(frozen=True)
class Hit:
    message_id: int
    score: float  # BM25: lower is better


def search(db: sqlite3.Connection, conversation_id: int, text: str, *, limit: int = 10,
           covered_only: bool = False) -> list[Hit]:
    """Messages of one conversation that share terms with `text`, best first, never a failed or
    excluded one; `covered_only` keeps to those a summary covers that are not pinned back into
    the window (what recall may bring back). Filtered in the same query, so the best of them
    are found however many others match."""
    wanted = query_terms(text)
    if not wanted:
        return []
    # Every term quoted: the user's words are never FTS5 syntax.
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
    query = (f"SELECT {TABLE}.rowid, bm25({TABLE}) FROM {TABLE} "
             f"JOIN messages ON messages.id = {TABLE}.rowid "
             f"WHERE {TABLE} MATCH ? AND {TABLE}.conversation_id = ? AND {_SENDABLE}")
    if covered_only:
        query += " AND messages.summary_id IS NOT NULL AND messages.pinned = 0"
    rows = db.execute(query + f" ORDER BY bm25({TABLE}) LIMIT ?",
                      (match, conversation_id, limit))
    return [Hit(int(rowid), float(score)) for rowid, score in rows]


def postings(db: sqlite3.Connection, conversation_id: int, words: list[str],
             cap: int) -> dict[str, list[int] | None]:
    """For each term, the messages of one conversation that hold it (matched as the index
    matches, stemmed; never a failed or excluded one), or None when more than `cap` do: a term
    that common says nothing about which message is meant, and stopping at the cap keeps the
    cost to what is worth reading."""
    out: dict[str, list[int] | None] = {}
    for term in words:
        # The conversation is read from the messages table, not the index's own copy: that
        # sits after the message's terms in its record, and reading past them took 1.8 times
        # as long on a 40,000-message session. CROSS keeps the index the outer loop: SQLite
        # otherwise chose to run the match once per message of the session (seconds).
        rows = db.execute(
            f"SELECT {TABLE}.rowid FROM {TABLE} CROSS JOIN messages "
            f"ON messages.id = {TABLE}.rowid WHERE {TABLE} MATCH ? "
            f"AND messages.conversation_id = ? AND {_SENDABLE} LIMIT ?",
            ('"' + term.replace('"', '""') + '"', conversation_id, cap + 1))
        ids = [rowid for (rowid,) in rows]
        out[term] = ids if len(ids) <= cap else None
    return out


@dataclass(frozen=True)
class SessionHit:
    message_id: int
    conversation_id: int
    score: float  # BM25: lower is better


def search_sessions(db: sqlite3.Connection, text: str, *, limit: int = 10,
                    beside: int | None = None) -> list[SessionHit]:
    """Messages of every session (but `beside`, the one asking) that share terms with `text`,
    best first, each with its session."""
    wanted = query_terms(text)
    if not wanted:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
    rows = db.execute(
        f"SELECT {TABLE}.rowid, messages.conversation_id, bm25({TABLE}) FROM {TABLE} "
        f"JOIN messages ON messages.id = {TABLE}.rowid WHERE {TABLE} MATCH ? "
        f"AND messages.conversation_id IS NOT ? AND {_SENDABLE} "
        f"ORDER BY bm25({TABLE}) LIMIT ?", (match, beside, limit))
    return [SessionHit(int(mid), int(cid), float(score)) for mid, cid, score in rows]


def postings_beyond(db: sqlite3.Connection, conversation_id: int, words: list[str],
                    cap: int) -> dict[str, dict[int, int] | None]:
    """For each term, the messages of the *other* sessions that hold it (message id -> its
    session), or None when more than `cap` do (as `postings`, for recall across sessions)."""
    out: dict[str, dict[int, int] | None] = {}
    for term in words:
        rows = db.execute(
            f"SELECT {TABLE}.rowid, messages.conversation_id FROM {TABLE} CROSS JOIN messages "
            f"ON messages.id = {TABLE}.rowid WHERE {TABLE} MATCH ? "
            f"AND messages.conversation_id != ? AND {_SENDABLE} LIMIT ?",
            ('"' + term.replace('"', '""') + '"', conversation_id, cap + 1))
        found = dict(rows.fetchall())
        out[term] = found if len(found) <= cap else None
    return out


def sendable_beyond(db: sqlite3.Connection, conversation_id: int) -> int:
    """How many messages the other sessions have that recall could bring back."""
    return db.execute(f"SELECT count(*) FROM messages WHERE conversation_id != ? AND "
                      f"{_SENDABLE}", (conversation_id,)).fetchone()[0]
