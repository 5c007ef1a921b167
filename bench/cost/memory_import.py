"""`memory import` of 10,000 and 100,000 entries, and what another jarvis-tui meanwhile waits.

Ours (Store.import_memory: every text de-duplicated by the rule `memory add` uses, the stored
texts read once before the write lock, one INSERT statement for all rows, issue 39 item 10)
beside a baseline measured in the same run on the same rows: a bare executemany of them into the
same table of a fresh store, one transaction, nothing checked. The whole command (`jarvis-tui
memory import`: reading the file, the guard on every entry, the store) is timed as a process.

While each import runs, two other processes use the same store as a running app does: one reads
memory_stamp (what the app reads before every request), one saves a message (what it does when
the user sends one). Their longest wait is printed: a reader never waits for a writer in WAL
mode; a writer waits for the import's write lock, and gives up after the store's 5 s timeout.

Run from the repository root: python bench/cost/memory_import.py [--quick]
(--quick: 10,000 entries only, a few seconds.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402

SIZES = (10_000, 100_000)


def rows(n: int) -> list[dict[str, object]]:
    # Short, so 100,000 of them fit the 4 MB a memory file may be.
    return [{"text": f"note {i}: builds run on CI"} for i in range(n)]


def ours(path: Path, entries: list[dict[str, object]]) -> float:
    with Store(path) as store:
        start = time.perf_counter()
        added = store.import_memory(entries)
        took = time.perf_counter() - start
    assert added == len(entries)
    return took


def baseline(path: Path, entries: list[dict[str, object]]) -> float:
    with Store(path) as store:
        db = store._db  # the same table, indexes and pragmas, written the plain way
        start = time.perf_counter()
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO memories (text, kind, state, pinned, created_at, updated_at) "
            "VALUES (?, ?, 'active', 0, ?, ?)",
            [(e["text"], "fact", now, now) for e in entries])
        db.execute("COMMIT")
        return time.perf_counter() - start


def command(path: Path, entries: list[dict[str, object]], tmp: Path) -> float:
    """`jarvis-tui memory import FILE` as a user runs it, start to end."""
    memory_file = tmp / "memory.json"
    memory_file.write_text(json.dumps({"format": "jarvis-tui memory", "version": 1,
                                       "entries": entries}), encoding="utf-8")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jarvis_tui", "--db", str(path), "memory",
                           "import", str(memory_file)], capture_output=True, text=True)
    took = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    return took


def idle(_path: Path, _entries: list[dict[str, object]], _tmp: Path) -> float:
    """No import: what the reader's and the writer's calls take by themselves."""
    time.sleep(0.5)
    return 0.0


WAYS: list[tuple[str, Callable[[Path, list[dict[str, object]], Path], float]]] = [
    ("nothing imported (the calls alone)", idle),
    ("jarvis-tui, Store.import_memory", lambda path, entries, _tmp: ours(path, entries)),
    ("baseline, a bare executemany", lambda path, entries, _tmp: baseline(path, entries)),
    ("jarvis-tui memory import (all)", command),
]


def watched(path: Path, run: Callable[[], float]) -> tuple[float, dict[str, float]]:
    """`run()`'s time, and the longest wait of a reader and of a writer of the same store
    running meanwhile (each in a process of its own), in seconds."""
    with Store(path) as store:
        store.create_conversation(model="bench")  # the store exists, with a session to save to
    stop = path.with_suffix(".stop")
    watchers = {kind: subprocess.Popen([sys.executable, __file__, "--watch", kind, str(path),
                                        str(stop)], stdout=subprocess.PIPE, text=True)
                for kind in ("reader", "writer")}
    for kind in watchers:  # each has made its first call before the import starts
        ready = path.with_suffix(f".{kind}")
        while not ready.exists():
            time.sleep(0.01)
    took = run()
    time.sleep(0.1)
    stop.touch()
    worst = {kind: json.loads(child.communicate()[0])["worst"]
             for kind, child in watchers.items()}
    return took, worst


def watch(kind: str, path: Path, stop: Path) -> None:
    """Use the store as a running app does until `stop` exists; print the longest call."""
    worst = 0.0
    with Store(path) as store:
        conv = store.latest_conversation()
        assert conv is not None
        first = True
        while not stop.exists():
            start = time.perf_counter()
            if kind == "reader":
                store.memory_stamp()
            else:
                store.add_message(conv.id, Message("user", "a message sent meanwhile"))
            worst = max(worst, time.perf_counter() - start)
            if first:
                path.with_suffix(f".{kind}").touch()
                first = False
            time.sleep(0.01)
    print(json.dumps({"worst": worst}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 entries only")
    parser.add_argument("--watch", nargs=3, metavar=("KIND", "DB", "STOP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watch:
        kind, db, stop = args.watch
        watch(kind, Path(db), Path(stop))
        return
    sizes = SIZES[:1] if args.quick else SIZES
    print(f"{'':36}{'entries':>9}{'import':>10}{'reader waited':>15}{'writer waited':>15}")
    for n in sizes:
        entries = rows(n)
        for name, way in WAYS:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "sessions.db"
                took, worst = watched(path, lambda: way(path, entries, Path(tmp)))  # noqa: B023
            print(f"{name:36}{n:>9,}{took:>9.2f}s{worst['reader'] * 1000:>13.1f}ms"
                  f"{worst['writer'] * 1000:>13.1f}ms")

if __name__ == "__main__":
    main()
