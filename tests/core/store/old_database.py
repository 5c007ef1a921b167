"""A database as an older jarvis-tui left it: the first `version` migrations, one session with
one user message; what a migration test opens with today's Store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jarvis_tui.core.store.schema import MIGRATIONS


def old_database(path: Path, version: int, said: str) -> None:
    path.parent.mkdir(parents=True)
    raw = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:version]:
        for statement in migration.split(";"):
            if statement.strip():
                raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {version}")
    raw.execute("INSERT INTO conversations (title, created_at, updated_at, model) "
                "VALUES ('old', 1, 1, 'm')")
    raw.execute("INSERT INTO messages (conversation_id, seq, role, content, created_at) "
                "VALUES (1, 1, 'user', ?, 1)", (said,))
    raw.close()
