"""The session store on disk: appending messages and reading a 5,000-message session.

Ours (WAL, synchronous=FULL, the full-text index kept by triggers) beside a baseline measured in
the same run on the same messages: a plain SQLite table in the default rollback journal with
synchronous=FULL, one INSERT per committed transaction, no index. Both commit every message on
its own, as a chat client must (a crash loses nothing already shown).
Run from the repository root: python bench/cost/store.py
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402

N = 5000


def texts() -> list[str]:
    out = []
    for i in range(N):
        if i % 2:
            out.append(f"Answer {i}: keep the newest turns, summarise the rest. 上下文窗口有限。 "
                       * 6)
        else:
            out.append(f"问题 {i}：how should a long conversation stay inside the window? " * 2)
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(p * len(ordered)) - 1)]


def ours(path: Path, contents: list[str]) -> dict[str, float]:
    with Store(path) as store:
        conv = store.create_conversation(model="bench")
        each = []
        for i, text in enumerate(contents):
            t0 = time.perf_counter()
            store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant", text))
            each.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    with Store(path) as store:  # a fresh open, as when the app resumes the session
        messages = store.messages(conv.id)
    read_ms = (time.perf_counter() - t0) * 1000
    assert len(messages) == N
    return {"p50": statistics.median(each), "p95": percentile(each, 0.95), "read": read_ms}


def baseline(path: Path, contents: list[str]) -> dict[str, float]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, role TEXT, content TEXT, "
               "created_at REAL)")
    each = []
    for i, text in enumerate(contents):
        t0 = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO messages (role, content, created_at) VALUES (?, ?, ?)",
                   ("user" if i % 2 == 0 else "assistant", text, time.time()))
        db.execute("COMMIT")
        each.append((time.perf_counter() - t0) * 1000)
    db.close()
    t0 = time.perf_counter()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT id, role, content, created_at FROM messages ORDER BY id").fetchall()
    db.close()
    read_ms = (time.perf_counter() - t0) * 1000
    assert len(rows) == N
    return {"p50": statistics.median(each), "p95": percentile(each, 0.95), "read": read_ms}


def main() -> None:
    global N
    if "--quick" in sys.argv[1:]:  # to see it runs: the figures need the 5,000
        N = 300
    contents = texts()
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline(Path(tmp) / "baseline.db", contents)
        mine = ours(Path(tmp) / "ours.db", contents)
    print(f"{N:,} messages, each committed on its own")
    print(f"{'':40}{'append p50':>12}{'append p95':>12}{'read all':>12}")
    for name, r in (("jarvis-tui (WAL, FULL, full-text index)", mine),
                    ("baseline (rollback journal, FULL)", base)):
        print(f"{name:40}{r['p50']:>10.2f}ms{r['p95']:>10.2f}ms{r['read']:>10.1f}ms")


if __name__ == "__main__":
    main()
