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
the messages, whenever it is missing.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

TERMS_FUNCTION = "jt_terms"
TABLE = "message_index"

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
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


def terms(text: str | None) -> str:
    """The indexable terms of `text`, space-separated."""
    out: list[str] = []
    for token in _TOKEN.findall(text or ""):
        if _IS_CJK.match(token):
            out.extend(token)
            out.extend(token[i:i + 2] for i in range(len(token) - 1))
        else:
            out.append(token.lower())
    return " ".join(out)


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


def build(db: sqlite3.Connection) -> None:
    """Create the index and its triggers and fill it from the messages (inside a write)."""
    db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    for statement in _SCHEMA:
        db.execute(statement)
    db.execute(f"INSERT INTO {TABLE} (rowid, terms, conversation_id) "
               f"SELECT id, {TERMS_FUNCTION}(content), conversation_id FROM messages")


@dataclass(frozen=True)
class Hit:
    message_id: int
    score: float  # BM25: lower is better


def search(db: sqlite3.Connection, conversation_id: int, text: str, *, limit: int = 10,
           covered_only: bool = False) -> list[Hit]:
    """Messages of one conversation that share terms with `text`, best first; `covered_only`
    keeps to those a summary covers that are not pinned back into the window (what recall
    may bring back), filtered in the same query so the best of them are found however many
    others match."""
    wanted = query_terms(text)
    if not wanted:
        return []
    # Every term quoted: the user's words are never FTS5 syntax.
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in wanted)
    query = (f"SELECT {TABLE}.rowid, bm25({TABLE}) FROM {TABLE} "
             f"JOIN messages ON messages.id = {TABLE}.rowid "
             f"WHERE {TABLE} MATCH ? AND {TABLE}.conversation_id = ?")
    if covered_only:
        query += (" AND messages.summary_id IS NOT NULL AND messages.pinned = 0"
                  " AND messages.status != 'failed'")
    rows = db.execute(query + f" ORDER BY bm25({TABLE}) LIMIT ?",
                      (match, conversation_id, limit))
    return [Hit(int(rowid), float(score)) for rowid, score in rows]
