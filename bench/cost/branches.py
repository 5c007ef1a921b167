"""What branches cost a session that has many (issue 18), beside the same session with none.

A stored session of N turns in which every tenth reply was regenerated twice and every
twentieth question edited (each edit's branch carrying on for two turns): opening it (read
every message, walk from the head to the top, pick the summary in force), the "‹ i/n ›" marks
of a page of 120 views, and a switch to another version; the baseline is the same turns stored
as one line, opened by the same code. A session is read once when it opens, so the walk is
O(messages), and a switch is one more walk.

Run from the repository root: python bench/cost/branches.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from jarvis_tui.core.tree import Tree, path_to  # noqa: E402
from jarvis_tui.core.window.history import History  # noqa: E402


def fill(store: Store, turns: int, *, branchy: bool) -> int:
    conv = store.create_conversation()
    for i in range(turns):
        question = store.add_message(conv.id, Message("user", f"第{i}个问题 about turn {i} " * 4))
        reply = store.add_message(conv.id, Message("assistant", f"Answer {i}: keep it. " * 12))
        if not branchy:
            continue
        if i % 10 == 5:  # regenerated twice: three replies to one question, the line goes on
            for again in range(2):  # from the newest
                store.add_message(conv.id, Message("assistant", f"Answer {i} again {again}",
                                                   parent_id=question.id))
        if i % 20 == 7:  # edited: a second question after the same reply, two turns on it
            store.add_message(conv.id, Message("user", f"edited {i}",
                                               parent_id=question.parent_id))
            for text in (f"on the edit {i}", f"more on {i}", f"more {i}"):
                role = "user" if text.startswith("more on") else "assistant"
                store.add_message(conv.id, Message(role, text))
            store.set_head(conv.id, reply.id or 0)  # the line goes on from the first branch
    return conv.id


def best_of(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def measure(store: Store, cid: int) -> tuple[History, float, float, float, float | None]:
    """(the history opened, open ms, of which the walk, marks ms, switch ms or None)."""
    opened: list[History] = []

    def open_session() -> None:
        history = History(store.messages(cid), store.head(cid))
        store.summary_on(cid, {m.id for m in history.all if m.id is not None})
        opened.append(history)

    open_ms = best_of(open_session)
    history = opened[-1]
    walk_ms = best_of(lambda: path_to(history.stored, history.all[-1].id))
    page = history.all[-120:]

    def marks() -> None:
        tree = Tree(history.stored)
        for msg in page:
            tree.alternatives(msg)

    marks_ms = best_of(marks)
    tree = Tree(history.stored)
    versioned = next((m for m in reversed(history.all) if len(tree.alternatives(m)) > 1), None)
    if versioned is None:
        return history, open_ms, walk_ms, marks_ms, None
    tip = history.all[-1].id or 0

    def switch() -> None:
        other = Tree(history.stored).alternatives(versioned)[0]
        history.show(Tree(history.stored).tip(other).id or 0)
        history.show(tip)

    return history, open_ms, walk_ms, marks_ms, best_of(switch) / 2


def main(quick: bool) -> None:
    print(f"{'turns':>6} {'layout':>8} {'stored':>7} {'shown':>6} {'open ms':>8} "
          f"{'of which walk':>14} {'marks ms':>9} {'switch ms':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for turns in (100,) if quick else (500, 5_000):
            for branchy in (False, True):
                with Store(Path(tmp) / f"{turns}-{branchy}.db") as store:
                    cid = fill(store, turns, branchy=branchy)
                    history, open_ms, walk_ms, marks_ms, switch_ms = measure(store, cid)
                layout = "branchy" if branchy else "line"
                switched = f"{switch_ms:.1f}" if switch_ms is not None else "-"
                print(f"{turns:>6} {layout:>8} {len(history.stored):>7} {len(history.all):>6} "
                      f"{open_ms:>8.1f} {walk_ms:>14.1f} {marks_ms:>9.1f} {switched:>10}")


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])  # --quick: 100 turns, to see it runs
