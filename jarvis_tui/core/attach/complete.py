"""The paths `@` offers: the working folder's files, walked once in a thread (tree.walk: near
ones first, .gitignore honoured) while the list shows what has come so far, then narrowed as
the user types, fuzzily: the letters typed in order, anywhere in the path.

Ranked so what a person means comes first: the name itself, then the name containing the
letters, then the path containing them, then the letters spread out; shorter paths before
longer. Each keystroke that extends the last query filters the last matches only, so typing
stays fast in a 50,000-file tree. Hidden entries are offered only once the query asks for
them (a part starting with a dot: `@.env`, `@src/.config`).
"""

from __future__ import annotations

import heapq
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from jarvis_tui.core.attach.tree import walk

MAX_PATHS = 200_000  # a home folder has millions: past this, the user types a longer path
SHOWN = 50


_MENTION = re.compile(r"(?:^|(?<=\s))@([^\s@]*)$")


def mention_at(text: str, cursor: int) -> tuple[int, str] | None:
    """The `@path` being typed where the cursor is: (where its @ is, what follows it), or None
    when the cursor is not at the end of one (an address like a@b.c is no mention)."""
    line_start = text.rfind("\n", 0, cursor) + 1
    found = _MENTION.search(text, line_start, cursor)
    return (found.start(), found.group(1)) if found else None


def pasted_path(text: str, cwd: Path) -> str | None:
    """`text` (one pasted line) as the path of a file or folder that exists, as the user
    would type it for /attach: quotes a file manager adds taken off, `~` expanded, a
    file:// address read; None when it names nothing there."""
    line = text.strip().strip("'\"")
    if line.startswith("file://"):
        line = unquote(line.removeprefix("file://"))
    if not line or "\n" in line or len(line) > 4096:
        return None
    try:
        path = Path(line).expanduser()
        exists = (cwd / path).exists()
    except (OSError, ValueError):
        return None
    return line if exists else None


def _hidden(path: str) -> bool:
    return path.startswith(".") or "/." in path


def asks_hidden(query: str) -> bool:
    return query.startswith(".") or "/." in query


# A path as matched: (lower-case path without a folder's "/", its lower-case name, the path as
# shown, whether it is hidden), made once when walked, not at every keystroke.
Row = tuple[str, str, str, bool]


def _row(path: str) -> Row:
    lower = path.lower().rstrip("/")
    return lower, lower.rsplit("/", 1)[-1], path, _hidden(path)


class PathIndex:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)
        self._rows: list[Row] = []  # folders end with "/"
        self._lock = threading.Lock()
        self.done = False
        self.truncated = False
        self._last: tuple[str, bool, int, list[Row]] | None = None  # query, hidden, count, found

    def fill(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Walk the folder (in a thread); `stop`: asked every so often, to give up early."""
        batch: list[Row] = []
        for entry in walk(self.root, hidden=True):
            batch.append(_row(entry.path + "/" if entry.folder else entry.path))
            if len(batch) >= 512:
                if stop():
                    return
                self._add(batch)
                batch = []
                if len(self._rows) >= MAX_PATHS:
                    self.truncated = True
                    break
        self._add(batch)
        self.done = True

    def _add(self, batch: list[Row]) -> None:
        with self._lock:
            self._rows.extend(batch)

    @property
    def count(self) -> int:
        return len(self._rows)

    def matches(self, query: str, limit: int = SHOWN) -> list[str]:
        """The best `limit` paths for `query` among those walked so far."""
        with self._lock:
            rows = self._rows[:]
        hidden = asks_hidden(query)
        q = query.lower()
        last = self._last
        if last is not None and q.startswith(last[0]) and last[1] == hidden \
                and last[2] == len(rows):
            pool = last[3]  # the same paths, a longer query: only the last matches can match
        else:
            pool = rows if hidden else [r for r in rows if not r[3]]
        if not q:
            self._last = (q, hidden, len(rows), pool)
            return [r[2] for r in pool[:limit]]
        search = re.compile(".*?".join(map(re.escape, q))).search  # the letters, in order
        found = [r for r in pool if search(r[0])]
        self._last = (q, hidden, len(rows), found)
        best = heapq.nsmallest(limit, found, key=lambda r: _rank(q, r, search))
        return [r[2] for r in best]


def _rank(q: str, row: Row, search: Callable[[str], re.Match[str] | None]
          ) -> tuple[int, int, str]:
    lower, name, path, _ = row
    if name == q or name.split(".", 1)[0] == q:
        tier = 0
    elif q in name:
        tier = 1
    elif q in lower:
        tier = 2
    elif search(name):
        tier = 3
    else:  # the letters spread out: the closer together (in tenths of the path), the better
        m = search(lower)
        tier = 4 + ((len(m.group()) - len(q)) * 10 // max(len(lower), 1) if m else 10)
    return tier, len(path), path
