"""The session database itself, under every part of the store: opening it (checking what the
file is, upgrading its schema, installing and repairing the full-text index), and the plumbing
each part writes and reads through: one lock around the one connection, retries while another
program holds SQLite's lock, committed transactions, and one wording for every error, naming the
file or directory that stops it. `Db` holds no conversation, message or summary logic: the parts
(conversations, messages, search, summaries, usage, meta, memory) each add theirs on top of it,
and need nothing from one another but what is here.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

import platformdirs

from jarvis_tui.core.store import search_index
from jarvis_tui.core.store.records import StoreError, StoreLocked, Unreadable
from jarvis_tui.core.store.schema import MIGRATIONS, SCHEMA_VERSION

APP_NAME = "jarvis-tui"
DEFAULT_TIMEOUT = 5.0  # seconds to wait for another process's write lock
_SQLITE_HEADER = b"SQLite format 3\x00"
MAX_ID = 2**63 - 1  # SQLite's INTEGER range: a larger id names no row (and cannot be bound)
_T = TypeVar("_T")


def default_db_path(*, create: bool = True) -> Path:
    """Where sessions live by default; honours XDG_DATA_HOME on Linux. Creates the directory
    unless `create` is false (the Store creates it itself, reporting what stops it)."""
    directory = Path(platformdirs.user_data_dir(APP_NAME))
    if create:
        directory.mkdir(parents=True, exist_ok=True)
    return directory / "sessions.db"


class Db:
    def __init__(self, path: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 clock: Callable[[], float] = time.time):
        self.path = Path(path) if path is not None else default_db_path(create=False)
        self.timeout = timeout
        self._now = clock  # replaceable so screenshots and exports can be reproduced exactly
        # What the user should be told that is not an error (an index rebuilt, a stored field
        # that could not be read), each once; the caller shows them and empties the list.
        self.notices: list[str] = []
        self._told: set[str] = set()
        # Search.postings' terms, kept while the file stays in this state (its changes, any
        # other connection's data_version).
        self._postings_state: tuple[int, int] | None = None
        self._postings_kept: dict[tuple[int, str, int], list[int] | None] = {}
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

    def tell(self, line: str) -> None:
        """A line for the user from a part beside the store (shown once, as the store's own)."""
        self._notice(line)

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
                for statement in _statements(MIGRATIONS[step]):
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

    def __enter__(self) -> Self:
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
        if not storable(conv_id) or db.execute(
                "SELECT 1 FROM conversations WHERE id = ?", (conv_id,)).fetchone() is None:
            raise StoreError(f"{self.path}: conversation {conv_id} does not exist.")


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


def storable(row_id: object) -> bool:
    """Whether an id can name a row at all: 1..2**63-1 (SQLite refuses to bind larger ones)."""
    return isinstance(row_id, int) and 1 <= row_id <= MAX_ID


def _statements(script: str) -> Iterator[str]:
    """Each SQL statement of a migration, in order: split at semicolons, except those inside a
    trigger's body (not executescript, which would commit the upgrade's transaction)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending
            pending = ""
    if pending.strip(" \n;"):
        yield pending  # not a whole statement: SQLite says what is wrong with it


def dump_json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def load_json(text: str | None, kind: type) -> tuple[Any, str | None]:
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
