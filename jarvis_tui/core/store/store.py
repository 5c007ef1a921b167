"""SQLite session store: conversations, every message ever sent, and the summaries over them.

Compaction never deletes anything: a summarised message only gets `summary_id` set to the summary
that first covered it, so the full history stays on disk and can be exported. API keys have no
column here on purpose; the store must never hold a secret.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import platformdirs

from jarvis_tui.core.costs import tally
from jarvis_tui.core.messages import ROOT, Message
from jarvis_tui.core.store import search_index
from jarvis_tui.core.store.lock import SessionLock
from jarvis_tui.core.store.records import (
    SessionInfo,
    StoreError,
    StoreLocked,
    Summary,
    Unreadable,
    UsageRow,
    UsageTotal,
)
from jarvis_tui.core.textsafe import valid_unicode
from jarvis_tui.core.tree import path_to

APP_NAME = "jarvis-tui"
DEFAULT_TIMEOUT = 5.0  # seconds to wait for another process's write lock
TITLE_CHARS = 60
STATUSES = ("complete", "partial", "failed")
SUMMARY_KINDS = ("auto", "manual", "edited")
USAGE_KINDS = ("chat", "summary")
_SQLITE_HEADER = b"SQLite format 3\x00"
MAX_ID = 2**63 - 1  # SQLite's INTEGER range: a larger id names no row (and cannot be bound)
# One request's token count is at most this (far past any real one), so a session's sums stay
# inside SQLite's integers however many requests a misbehaving server inflates.
MAX_COUNT = 10**12
# Where set_meta keeps a conversation's stored meta text that was not a JSON object.
UNREADABLE_META = "unreadable_meta"
_T = TypeVar("_T")

# Index i upgrades a database from user_version i to i + 1. Append, never edit.
_MIGRATIONS: list[str] = [
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE summaries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        content TEXT NOT NULL,
        first_message_id INTEGER,
        last_message_id INTEGER,
        covered_count INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('auto', 'manual', 'edited')),
        focus TEXT,
        model TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        replaces_id INTEGER REFERENCES summaries(id)
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        status TEXT NOT NULL DEFAULT 'complete'
            CHECK (status IN ('complete', 'partial', 'failed')),
        pinned INTEGER NOT NULL DEFAULT 0,
        summary_id INTEGER REFERENCES summaries(id),
        created_at REAL NOT NULL,
        UNIQUE (conversation_id, seq)
    );
    CREATE INDEX summaries_by_conversation ON summaries(conversation_id, id);
    CREATE INDEX conversations_by_update ON conversations(updated_at);
    """,
    # A reply is saved while it streams by appending its new text here, so each save writes only
    # what is new: rewriting (and re-indexing) the whole reply every half second made a 30 MB
    # reply quadratic. The pieces are folded into messages.content when the reply is updated.
    """
    CREATE TABLE message_parts (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (message_id, seq)
    ) WITHOUT ROWID;
    """,
    # What each request cost, as the server counted it: a chat request against the reply it
    # brought, a summary request against the summary. Kept apart from the messages so a reply
    # saved by an older jarvis-tui, or one whose server said nothing, simply has no row.
    """
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        summary_id INTEGER REFERENCES summaries(id) ON DELETE SET NULL,
        kind TEXT NOT NULL CHECK (kind IN ('chat', 'summary')),
        model TEXT NOT NULL DEFAULT '',
        prompt_tokens INTEGER NOT NULL,
        cached_tokens INTEGER,
        cache_write_tokens INTEGER,
        completion_tokens INTEGER NOT NULL,
        freed_tokens INTEGER,
        created_at REAL NOT NULL
    );
    CREATE INDEX usage_by_conversation ON usage(conversation_id, id);
    """,
    # A session is a tree: a regenerated reply or an edited question starts a branch beside
    # the old one, which stays (nothing is deleted). Each message names the one it follows
    # (NULL: the top), the session the tip of the branch shown; before this, a session was
    # one line, so each message follows the one before it. `excluded`: taken out of requests
    # by the user (/forget), kept here.
    """
    ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id);
    ALTER TABLE messages ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN head_id INTEGER;
    UPDATE messages SET parent_id = (
        SELECT p.id FROM messages p WHERE p.conversation_id = messages.conversation_id
        AND p.seq < messages.seq ORDER BY p.seq DESC LIMIT 1);
    CREATE INDEX messages_by_parent ON messages(parent_id);
    """,
]
SCHEMA_VERSION = len(_MIGRATIONS)


def default_db_path(*, create: bool = True) -> Path:
    """Where sessions live by default; honours XDG_DATA_HOME on Linux. Creates the directory
    unless `create` is false (the Store creates it itself, reporting what stops it)."""
    directory = Path(platformdirs.user_data_dir(APP_NAME))
    if create:
        directory.mkdir(parents=True, exist_ok=True)
    return directory / "sessions.db"


def make_title(text: str) -> str:
    """A single-line title from the first user message."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


class Store:
    def __init__(self, path: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 clock: Callable[[], float] = time.time):
        self.path = Path(path) if path is not None else default_db_path(create=False)
        self.timeout = timeout
        self._now = clock  # replaceable so screenshots and exports can be reproduced exactly
        # What the user should be told that is not an error (an index rebuilt, a stored field
        # that could not be read), each once; the caller shows them and empties the list.
        self.notices: list[str] = []
        self._told: set[str] = set()
        # One connection shared by worker threads; the lock serialises every use of it, so a
        # reader never sees another thread's half-done transaction.
        self._lock = threading.RLock()
        self._check_header()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._os_error(self.path.parent, e,
                                 f"needed to create {self.path.parent} for the session "
                                 "database") from None
        try:
            self._db = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as e:
            raise self._error("open", e) from None
        search_index.install(self._db)  # before anything writes: the index triggers call it
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    def take_notices(self) -> list[str]:
        """The notices not yet shown, oldest first; the list is empty afterwards."""
        with self._lock:
            taken, self.notices = self.notices, []
        return taken

    def _notice(self, line: str) -> None:
        with self._lock:
            if line not in self._told:
                self._told.add(line)
                self.notices.append(line)

    def _report(self, unreadable: list[Unreadable]) -> None:
        for field in unreadable:
            self._notice(str(field))

    # -- opening ------------------------------------------------------------------------------

    def _check_header(self) -> None:
        # Checked by hand before SQLite touches the file, so a stray file is never modified.
        try:
            with self.path.open("rb") as f:
                head = f.read(len(_SQLITE_HEADER))
        except FileNotFoundError:
            return
        except OSError as e:
            raise self._os_error(self.path, e, "needed to open the session database") from None
        if head and head != _SQLITE_HEADER:
            raise StoreError(
                f"{self.path}: not a SQLite database; it was not modified. Move it away or "
                "choose another file with --db."
            )

    def _open(self) -> None:
        # Every step is retried while another process holds a lock it needs: ten `ask --new`
        # started at once on a new directory all open it, and the switch to WAL fails at once
        # with "locked" instead of waiting for the busy timeout. One deadline for all of them.
        deadline = time.monotonic() + self.timeout
        version = self._retrying(deadline, "open", self._schema_version)
        self._retrying(deadline, "open", self._configure)
        if version != SCHEMA_VERSION:
            self._retrying(deadline, "upgrade the schema of", self._upgrade)
        self._retrying(deadline, "index the messages of", self._ensure_index)

    def _schema_version(self) -> int:
        # One statement, so one snapshot: read one after the other, another process's first
        # migration could commit in between and make a new store look like a foreign database.
        version, tables = self._db.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), "
            "(SELECT count(*) FROM sqlite_master WHERE type = 'table')"
        ).fetchone()
        if version == 0 and tables:
            raise StoreError(
                f"{self.path}: a SQLite database that is not a jarvis-tui session store; it was "
                "not modified. Move it away or choose another file with --db."
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer jarvis-tui (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade jarvis-tui to open it."
            )
        return version

    def _configure(self) -> None:
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        # WAL + FULL: each commit is on disk before the request it records goes out.
        self._db.execute("PRAGMA synchronous = FULL")

    def _upgrade(self) -> None:
        # Only when the schema is behind, so a second window can read while another one writes.
        with self._transaction() as db:
            current = self._schema_version()  # again under the write lock: another may be done
            for step in range(current, SCHEMA_VERSION):
                for statement in _MIGRATIONS[step].split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _ensure_index(self) -> None:
        """The full-text index, built from the messages when it is missing (a new store, one from
        before it existed) or damaged; looked at again under the write lock, so stores opened at
        once build it once. It holds nothing the messages do not, so a rebuild loses nothing."""
        if search_index.problem(self._db) is None:
            return
        with self._transaction() as db:
            problem = search_index.problem(db)
            if problem is None:
                return
            search_index.build(db)
        if problem != search_index.MISSING:
            self._notice(self._rebuilt(problem))

    def _rebuilt(self, problem: str) -> str:
        return (f"{self.path}: the search index was damaged ({problem}); it was rebuilt from "
                "the stored messages, nothing was lost.")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -----------------------------------------------------------------------------

    def _error(self, action: str, e: sqlite3.Error) -> StoreError:
        text = str(e)
        name = getattr(e, "sqlite_errorname", None) or ""
        if _busy(e):
            return StoreLocked(
                f"{self.path}: could not {action} the session database: it is locked by another "
                f"program (waited {self.timeout:g}s); close other jarvis-tui windows and retry."
            )
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text \
                or "not a database" in text:
            return StoreError(
                f"{self.path}: could not {action} the session database: it is corrupt ({text}); "
                "it was not modified. Move it away to start a fresh one (sqlite3's .recover "
                "may rescue it)."
            )
        if name.startswith(_ACCESS_ERRORS):
            return self._access_error(action, text)
        if isinstance(e, sqlite3.ProgrammingError) and "closed" in text:
            return StoreError(f"{self.path}: the session store is already closed.")
        return StoreError(f"{self.path}: could not {action} the session database ({text}).")

    def _access_error(self, action: str, text: str) -> StoreError:
        """SQLite says only "unable to open" or "readonly": name the place that stops it."""
        places = [(self.path.parent, os.W_OK | os.X_OK)] + [
            (place, os.R_OK | os.W_OK)
            for place in (self.path, *(Path(f"{self.path}{end}") for end in ("-wal", "-shm")))
            if place.exists()
        ]
        for place, mode in places:
            if not os.access(place, mode):
                verb = "write to" if os.access(place, os.R_OK) else "read"
                return _cannot(place, verb, _denied(place),
                               f"needed to {action} the session database")
        if "full" in text:
            return StoreError(f"{self.path}: could not {action} the session database: the disk "
                              "is full; free some space and retry.")
        return StoreError(
            f"{self.path}: could not {action} the session database ({text}); check the disk and "
            "the file's owner and mode, or choose another file with --db."
        )

    def _os_error(self, place: Path, e: OSError, why: str) -> StoreError:
        """The one line for the OSError met reading the file or creating its directory."""
        if isinstance(e, PermissionError) or e.errno == errno.EROFS:
            while not place.exists() and place != place.parent:
                place = place.parent  # a directory not made yet: its parent stops it
            verb = "read" if place == self.path else "write to"
            return _cannot(place, verb, _denied(place), why)
        return StoreError(f"{self.path}: cannot use it ({e.strerror or e}; {why}).")

    def _retrying(self, deadline: float, action: str, step: Callable[[], _T]) -> _T:
        """`step()`, again after a growing pause while it fails for a lock, until `deadline`."""
        pause = 0.002
        while True:
            with self._lock:
                try:
                    return step()
                except sqlite3.Error as e:
                    if not _busy(e) or time.monotonic() + pause > deadline:
                        raise self._error(action, e) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        with self._lock:
            try:
                yield
            except sqlite3.Error as e:
                raise self._error(action, e) from None

    @contextmanager
    def _write(self, action: str = "write to", *,
               wait: float | None = None) -> Iterator[sqlite3.Connection]:
        """One committed transaction (see _transaction). `wait` shortens the time to wait for
        another program's lock, for a save that must not hold up a streaming reply (it is
        tried again later instead)."""
        with self._guard(action):
            try:
                with self._transaction(wait) as db:
                    yield db
            except (sqlite3.DatabaseError, MemoryError) as e:
                # The triggers write to the index, and an FTS5 merge reads old parts of it,
                # which the probe at open may not have read: rebuilt here, so only this one
                # write is lost, and the error says so.
                damage = search_index.damage(e)
                if damage is None:
                    raise
                self._rebuild_index()
                raise StoreError(
                    f"{self.path}: could not {action} the session database: its search index "
                    f"was damaged ({damage}); it has been rebuilt from the stored messages, "
                    "nothing stored was lost. Retry."
                ) from None

    def _rebuild_index(self) -> None:
        with self._transaction() as db:
            search_index.build(db)

    @contextmanager
    def _transaction(self, wait: float | None = None) -> Iterator[sqlite3.Connection]:
        """One committed transaction; IMMEDIATE takes the write lock up front (or times out,
        after `wait` seconds when given, else the store's timeout)."""
        if wait is not None:
            self._db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        finally:
            if wait is not None:
                self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _touch(self, db: sqlite3.Connection, conv_id: int) -> None:
        # Strictly increasing so "most recently updated" never depends on clock resolution.
        newest = db.execute("SELECT max(updated_at) FROM conversations").fetchone()[0] or 0.0
        db.execute(
            "UPDATE conversations SET updated_at = ? WHERE id = ?",
            (max(self._now(), newest + 1e-6), conv_id),
        )

    def _require_conversation(self, db: sqlite3.Connection, conv_id: int) -> None:
        if not _storable(conv_id) or db.execute(
                "SELECT 1 FROM conversations WHERE id = ?", (conv_id,)).fetchone() is None:
            raise StoreError(f"{self.path}: conversation {conv_id} does not exist.")

    # -- conversations ------------------------------------------------------------------------

    _CONV_SELECT = (
        "SELECT c.id, c.title, c.created_at, c.updated_at, c.model, "
        "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c "
    )

    def create_conversation(self, title: str = "", model: str = "") -> SessionInfo:
        with self._write("create a conversation in") as db:
            newest = db.execute("SELECT max(updated_at) FROM conversations").fetchone()[0] or 0.0
            now = max(self._now(), newest + 1e-6)
            cur = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, model) "
                "VALUES (?, ?, ?, ?)",
                (title, now, now, model),
            )
        return SessionInfo(cur.lastrowid or 0, title, now, now, model, 0)

    def get_conversation(self, conv_id: int) -> SessionInfo | None:
        if not _storable(conv_id):
            return None
        with self._guard("read"):
            row = self._db.execute(self._CONV_SELECT + "WHERE c.id = ?", (conv_id,)).fetchone()
        return SessionInfo(*row) if row else None

    def latest_conversation(self) -> SessionInfo | None:
        found = self.list_conversations(limit=1)
        return found[0] if found else None

    def list_conversations(self, limit: int | None = None) -> list[SessionInfo]:
        with self._guard("read"):
            rows = self._db.execute(
                self._CONV_SELECT + "ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [SessionInfo(*row) for row in rows]

    def touch(self, conv_id: int) -> None:
        """Mark a conversation as the most recently used (resuming it counts as using it)."""
        with self._write("update a conversation in") as db:
            self._require_conversation(db, conv_id)
            self._touch(db, conv_id)

    def set_title(self, conv_id: int, title: str) -> None:
        with self._write("rename a conversation in") as db:
            self._require_conversation(db, conv_id)
            db.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conv_id))

    # -- messages -----------------------------------------------------------------------------

    def add_message(self, conv_id: int, msg: Message, *, wait: float | None = None) -> Message:
        if msg.id is not None:
            raise ValueError(f"message {msg.id} is already stored")
        if msg.status not in STATUSES:
            raise ValueError(f"unknown message status {msg.status!r}")
        # Text that is not valid Unicode cannot be encoded for SQLite; one bad character must
        # not lose a message.
        msg.content = valid_unicode(msg.content)
        with self._write("save a message to", wait=wait) as db:
            self._require_conversation(db, conv_id)
            seq = db.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = ?",
                (conv_id,),
            ).fetchone()[0]
            parent = self._head(db, conv_id) if msg.parent_id is None else msg.parent_id
            cur = db.execute(
                "INSERT INTO messages (conversation_id, seq, role, content, tool_calls, "
                "tool_call_id, name, status, pinned, summary_id, created_at, parent_id, "
                "excluded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conv_id, seq, msg.role, msg.content, _dump(msg.tool_calls), msg.tool_call_id,
                    msg.name, msg.status, int(msg.pinned), msg.summary_id, msg.created_at,
                    parent or None, int(msg.excluded),
                ),
            )
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?",
                       (cur.lastrowid, conv_id))
            if msg.role == "user" and msg.content.strip():
                db.execute(
                    "UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                    (make_title(msg.content), conv_id),
                )
            self._touch(db, conv_id)
        msg.id = cur.lastrowid
        msg.parent_id = parent or ROOT
        return msg

    def _head(self, db: sqlite3.Connection, conv_id: int) -> int:
        """The tip of the branch shown: what a new message follows (ROOT in an empty session)."""
        row = db.execute(
            "SELECT coalesce(c.head_id, (SELECT id FROM messages WHERE conversation_id = c.id "
            "ORDER BY seq DESC LIMIT 1)) FROM conversations c WHERE c.id = ?",
            (conv_id,)).fetchone()
        return row[0] if row and row[0] else ROOT

    def head(self, conv_id: int) -> int:
        """The id of the last message of the branch shown (ROOT: none)."""
        if not _storable(conv_id):
            return ROOT
        with self._guard("read"):
            return self._head(self._db, conv_id)

    def set_head(self, conv_id: int, message_id: int) -> None:
        """Show (and continue) the branch ending at `message_id`; ROOT: an empty branch."""
        with self._write("switch branches in") as db:
            self._require_conversation(db, conv_id)
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?",
                       (message_id or None, conv_id))

    def fork(self, conv_id: int, branch: list[Message], title: str, summary: Summary | None,
             *, model: str = "") -> SessionInfo:
        """A new session holding copies of `branch` (stored messages of `conv_id`, in order),
        all at once: a fork half written would be a session missing turns. With `summary`, it
        is copied too and covers the copies of what it covered; without, nothing is covered."""
        now = self._now()
        with self._write("fork a session in") as db:
            self._require_conversation(db, conv_id)
            newest = db.execute("SELECT max(updated_at) FROM conversations").fetchone()[0] or 0.0
            now = max(now, newest + 1e-6)
            new_id = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, model, meta) "
                "VALUES (?, ?, ?, ?, ?)",
                (title, now, now, model, _dump({"forked_from": {
                    "conversation_id": conv_id, "message_id": branch[-1].id if branch else None,
                }})),
            ).lastrowid
            sid = None
            if summary is not None:
                sid = db.execute(
                    "INSERT INTO summaries (conversation_id, content, covered_count, kind, "
                    "focus, model, created_at) VALUES (?, ?, 0, ?, ?, ?, ?)",
                    (new_id, summary.content, summary.kind, summary.focus, summary.model, now),
                ).lastrowid
            parent = None
            first = last = None
            for seq, msg in enumerate(branch, 1):
                covered = sid if msg.covered and sid is not None else None
                parent = db.execute(
                    "INSERT INTO messages (conversation_id, seq, role, content, tool_calls, "
                    "tool_call_id, name, status, pinned, summary_id, created_at, parent_id, "
                    "excluded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, seq, msg.role, msg.content, _dump(msg.tool_calls),
                     msg.tool_call_id, msg.name, msg.status, int(msg.pinned), covered,
                     msg.created_at, parent, int(msg.excluded)),
                ).lastrowid
                if covered is not None:
                    first, last = first or parent, parent
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?", (parent, new_id))
            if sid is not None:
                count = db.execute("SELECT count(*) FROM messages WHERE summary_id = ?",
                                   (sid,)).fetchone()[0]
                db.execute("UPDATE summaries SET first_message_id = ?, last_message_id = ?, "
                           "covered_count = ? WHERE id = ?", (first, last, count, sid))
        return SessionInfo(new_id or 0, title, now, now, model, len(branch))

    def update_message(self, msg: Message, *, wait: float | None = None) -> None:
        """Write the message as it is now; pieces appended while it streamed are folded in."""
        if msg.id is None:
            raise ValueError("message is not stored yet; use add_message")
        if msg.status not in STATUSES:
            raise ValueError(f"unknown message status {msg.status!r}")
        msg.content = valid_unicode(msg.content)
        with self._write("update a message in", wait=wait) as db:
            row = db.execute(
                "SELECT conversation_id FROM messages WHERE id = ?", (msg.id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: message {msg.id} does not exist.")
            db.execute(
                "UPDATE messages SET content = ?, status = ?, pinned = ?, summary_id = ?, "
                "tool_calls = ?, excluded = ? WHERE id = ?",
                (msg.content, msg.status, int(msg.pinned), msg.summary_id,
                 _dump(msg.tool_calls), int(msg.excluded), msg.id),
            )
            db.execute("DELETE FROM message_parts WHERE message_id = ?", (msg.id,))
            self._touch(db, row[0])

    def append_text(self, msg: Message, text: str, *, wait: float | None = None) -> None:
        """Add `text` to the end of a stored message, writing only `text` (a reply saved as
        it streams); `msg.content` in memory is the caller's to extend."""
        if msg.id is None:
            raise ValueError("message is not stored yet; use add_message")
        with self._write("save a reply to", wait=wait) as db:
            row = db.execute(
                "SELECT conversation_id FROM messages WHERE id = ?", (msg.id,)).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: message {msg.id} does not exist.")
            db.execute(
                "INSERT INTO message_parts (message_id, seq, text) VALUES (?, (SELECT "
                "coalesce(max(seq), 0) + 1 FROM message_parts WHERE message_id = ?), ?)",
                (msg.id, msg.id, valid_unicode(text)))
            self._touch(db, row[0])

    def sent_prompts(self, conv_id: int | None, limit: int = 500) -> list[str]:
        """What the user sent in `conv_id` (None: in every session), newest first, for the
        prompt's history: blank messages left out, one sent again right after itself listed
        once (as a shell keeps its history)."""
        if conv_id is not None and not _storable(conv_id):
            return []
        if conv_id is None:
            query = ("SELECT content FROM messages WHERE role = 'user' "
                     "ORDER BY created_at DESC, id DESC")
            args: tuple[int, ...] = ()
        else:
            query = ("SELECT content FROM messages WHERE role = 'user' AND conversation_id = ? "
                     "ORDER BY seq DESC")
            args = (conv_id,)
        texts: list[str] = []
        with self._guard("read"):
            # Read row by row: the limit counts what is listed, after blanks and repeats.
            for (text,) in self._db.execute(query, args):
                if len(texts) >= limit:
                    break
                if text.strip() and (not texts or texts[-1] != text):
                    texts.append(text)
        return texts

    def session_lock(self, conv_id: int) -> SessionLock:
        """The lock that keeps one round at a time on a session, across processes."""
        return SessionLock(self.path, conv_id)

    def stamp(self, conv_id: int) -> tuple[int, int, int, int]:
        """(messages, newest message id, newest summary id, branch shown) of a session: what
        changes when anyone adds to it or switches its branch, so a process can tell another
        one did."""
        with self._guard("read"):
            count, newest = self._db.execute(
                "SELECT count(*), coalesce(max(id), 0) FROM messages WHERE conversation_id = ?",
                (conv_id,)).fetchone()
            summary = self._db.execute(
                "SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = ?",
                (conv_id,)).fetchone()[0]
            head = self._head(self._db, conv_id)
        return count, newest, summary, head

    def search(self, conv_id: int, text: str, *, limit: int = 10,
               covered_only: bool = False) -> list[search_index.Hit]:
        """Messages of `conv_id` that share words (or CJK characters and pairs) with `text`,
        best first; `covered_only`: only those a summary covers and nothing pinned back. A
        damaged index is rebuilt (the user is told) and asked again."""
        if not _storable(conv_id):
            return []
        with self._guard("search"):
            try:
                return search_index.search(self._db, conv_id, text, limit=limit,
                                           covered_only=covered_only)
            except (sqlite3.DatabaseError, MemoryError) as e:
                damage = search_index.damage(e)
                if damage is None:
                    raise
            self._rebuild_index()
            self._notice(self._rebuilt(damage))
            return search_index.search(self._db, conv_id, text, limit=limit,
                                       covered_only=covered_only)

    def postings(self, conv_id: int, words: list[str], *,
                 cap: int) -> dict[str, list[int] | None]:
        """For each of `words` (terms as the index makes them), the ids of the messages of
        `conv_id` that hold it, or None when more than `cap` do (see search_index.postings).
        Read-only; a damaged index is rebuilt (the user is told) and asked again, as in
        search."""
        if not _storable(conv_id):
            return {}
        with self._guard("search"):
            try:
                return search_index.postings(self._db, conv_id, words, cap)
            except (sqlite3.DatabaseError, MemoryError) as e:
                damage = search_index.damage(e)
                if damage is None:
                    raise
            self._rebuild_index()
            self._notice(self._rebuilt(damage))
            return search_index.postings(self._db, conv_id, words, cap)

    def messages(self, conv_id: int) -> list[Message]:
        """Every message of `conv_id` in order; one whose tool calls cannot be read has none
        (and the user is told)."""
        msgs, unreadable = self._messages(conv_id)
        self._report(unreadable)
        return msgs

    def _messages(self, conv_id: int) -> tuple[list[Message], list[Unreadable]]:
        if not _storable(conv_id):
            return [], []
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT id, role, content, tool_calls, tool_call_id, name, status, pinned, "
                "summary_id, created_at, parent_id, excluded FROM messages "
                "WHERE conversation_id = ? ORDER BY seq",
                (conv_id,),
            ).fetchall()
            # A reply still streaming, or cut off by a killed process, has pieces not yet folded.
            parts: dict[int, list[str]] = {}
            for mid, text in self._db.execute(
                    "SELECT p.message_id, p.text FROM message_parts p JOIN messages m "
                    "ON m.id = p.message_id WHERE m.conversation_id = ? "
                    "ORDER BY p.message_id, p.seq", (conv_id,)):
                parts.setdefault(mid, []).append(text)
        msgs, unreadable = [], []
        for (mid, role, content, stored, call_id, name, status, pinned, summary_id, created,
             parent, excluded) in rows:
            calls, problem = _load(stored, list)
            if problem:
                unreadable.append(Unreadable(conv_id, mid, "tool_calls", problem, stored))
            if mid in parts:
                content += "".join(parts[mid])
            msgs.append(Message(
                role=role, content=content, id=mid, tool_calls=calls, tool_call_id=call_id,
                name=name, status=status, pinned=bool(pinned), summary_id=summary_id,
                created_at=created, parent_id=parent or ROOT, excluded=bool(excluded),
            ))
        return msgs, unreadable

    # -- summaries ----------------------------------------------------------------------------

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
                if _storable(summary_id) else None
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
        if not _storable(conv_id):
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
        if not _storable(conv_id):
            return None
        with self._guard("read"):
            rows = self._db.execute(
                self._SUMMARY_SELECT + "WHERE conversation_id = ? ORDER BY id DESC", (conv_id,)
            ).fetchall()
        return next((Summary(*row) for row in rows if row[4] in branch), None)

    def summaries(self, conv_id: int) -> list[Summary]:
        if not _storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(
                self._SUMMARY_SELECT + "WHERE conversation_id = ? ORDER BY id", (conv_id,)
            ).fetchall()
        return [Summary(*row) for row in rows]

    # -- usage ---------------------------------------------------------------------------------

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
                if row_id is not None and (not _storable(row_id) or db.execute(
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
        if not _storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(self._USAGE_SELECT + "WHERE conversation_id = ? ORDER BY id",
                                    (conv_id,)).fetchall()
        return [UsageRow(*row) for row in rows]

    def latest_usage(self, conv_id: int, kind: str = "chat") -> UsageRow | None:
        """The newest request of `kind` in `conv_id` that has counts, or None."""
        if not _storable(conv_id):
            return None
        with self._guard("read"):
            row = self._db.execute(
                self._USAGE_SELECT + "WHERE conversation_id = ? AND kind = ? ORDER BY id DESC "
                "LIMIT 1", (conv_id, kind)).fetchone()
        return UsageRow(*row) if row else None

    def usage_totals(self, conv_id: int) -> list[UsageTotal]:
        """The session's requests summed per kind and model (each model has its own price)."""
        if not _storable(conv_id):
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
        if not _storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute(
                self._USAGE_SELECT + "WHERE conversation_id = ? AND kind = 'summary' AND "
                "summary_id = (SELECT max(summary_id) FROM usage WHERE conversation_id = ? AND "
                "kind = 'summary') ORDER BY id", (conv_id, conv_id)).fetchall()
        return [UsageRow(*row) for row in rows]

    # -- per-conversation metadata (learned context limit, calibration factor, ...) -----------

    def _meta(self, db: sqlite3.Connection, conv_id: int
              ) -> tuple[dict[str, Any], Unreadable | None]:
        row = db.execute(
            "SELECT meta FROM conversations WHERE id = ?", (conv_id,)
        ).fetchone() if _storable(conv_id) else None
        if row is None:
            raise StoreError(f"{self.path}: conversation {conv_id} does not exist.")
        meta, problem = _load(row[0] or "{}", dict)
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
                "UPDATE conversations SET meta = ? WHERE id = ?", (_dump(meta), conv_id)
            )
        if unreadable:
            self._notice(f"session {conv_id}: meta could not be read; its stored text is now "
                         f"kept in it under {UNREADABLE_META!r}")

    # -- export -------------------------------------------------------------------------------

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
                }
                for m in msgs
            ],
            "summaries": [{**asdict(s), "usage": by_summary.get(s.id, [])} for s in sums],
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


_ACCESS_ERRORS = ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH",
                  "SQLITE_IOERR", "SQLITE_FULL")


def _busy(e: sqlite3.Error) -> bool:
    name = getattr(e, "sqlite_errorname", None) or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(e)


def _denied(place: Path) -> str:
    try:
        read_only = bool(os.statvfs(place).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "read-only file system" if read_only else "permission denied"


def _cannot(place: Path, verb: str, reason: str, why: str) -> StoreError:
    fix = "remount it read-write" if reason == "read-only file system" else \
        "check its owner and mode"
    return StoreError(f"cannot {verb} {place}: {reason} ({why}); {fix}, or choose another file "
                      "with --db.")


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


def _storable(row_id: object) -> bool:
    """Whether an id can name a row at all: 1..2**63-1 (SQLite refuses to bind larger ones)."""
    return isinstance(row_id, int) and 1 <= row_id <= MAX_ID


def _dump(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _load(text: str | None, kind: type) -> tuple[Any, str | None]:
    """The JSON value of a stored field and None, or None and what is wrong with it."""
    if text is None:
        return None, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None, "is not valid JSON"
    if value is not None and not isinstance(value, kind):
        return None, f"is not a JSON {'list' if kind is list else 'object'}"
    return value, None
