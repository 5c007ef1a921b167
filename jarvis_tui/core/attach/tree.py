"""The files under a folder as the user's tools see them: .gitignore honoured (each folder's
own, as git reads them), the .git folder never, hidden entries only on request, symlinked
folders not entered (a link back up would never end). The @ completion and a folder's listing
both walk it; it yields as it goes, so a caller can stop at any count."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the root, "/"-separated
    folder: bool
    size: int  # bytes (0 for a folder)


def walk(root: str | os.PathLike[str], *, hidden: bool = False) -> Iterator[Entry]:
    """Entries under `root`, breadth first (the near ones before the deep ones), each folder's
    entries sorted by name."""
    from pathspec import GitIgnoreSpec

    queue: list[tuple[str, list[tuple[str, Any]]]] = [("", [])]
    while queue:
        rel, specs = queue.pop(0)
        folder = os.path.join(root, rel) if rel else os.fspath(root)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue  # unreadable: left out, as git leaves it
        ignore = os.path.join(folder, ".gitignore")
        if any(e.name == ".gitignore" for e in entries):
            try:
                with open(ignore, encoding="utf-8", errors="replace") as f:
                    specs = [*specs, (rel, GitIgnoreSpec.from_lines(f.read().splitlines()))]
            except OSError:
                pass
        for entry in entries:
            name = entry.name
            if name == ".git" or (not hidden and name.startswith(".")):
                continue
            path = f"{rel}/{name}" if rel else name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                size = 0 if is_dir else entry.stat().st_size
            except OSError:
                is_dir, size = False, 0  # a dangling link: listed, refused if picked
            if _ignored(specs, path, is_dir):
                continue
            yield Entry(path, is_dir, size)
            if is_dir:
                queue.append((path, specs))


def _ignored(specs: list[tuple[str, Any]], path: str, folder: bool) -> bool:
    """Whether the .gitignore files above `path` leave it out; a later (deeper) file's
    verdict wins, as git's does, so a `!name` there brings back what a parent ignored."""
    verdict = False
    for base, spec in specs:
        inner = path[len(base) + 1:] if base else path
        result = spec.check_file(inner + "/" if folder else inner)
        if result.include is not None:
            verdict = result.include
    return verdict
