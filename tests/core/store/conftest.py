"""The store the tests of this folder open: a real SQLite file in a fresh data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.core.store.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sessions.db"


@pytest.fixture
def store(db_path: Path):
    with Store(db_path) as s:
        yield s
