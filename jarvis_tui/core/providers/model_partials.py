"""The offline model's unfinished copies: each start assembles the file under a name of its own
(`<file>.<pid>.partial`) and holds an flock on it while it writes, so that a later start can tell
a copy being written from one that a killed start left behind (up to 491 MB), and remove that one.

Whether anyone is writing is the lock's to say: the kernel drops it when its holder dies, however
it dies, and it holds across pid namespaces sharing the folder. The pid in the name backs it up
where the lock cannot (Windows has no flock; a start opens its file a moment before it locks
it): a copy whose process is gone is nobody's. A copy whose pid is alive but which nobody has
locked or written for STALE_S belongs to a process that merely got the same pid later (reuse),
since a writer touches its copy every 8 MB.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no flock; the pid and the age decide alone there
    fcntl = None  # type: ignore[assignment]

STALE_S = 600.0
_NAME = re.compile(r".+\.(\d{1,10})\.partial")


def partial_path(target: Path) -> Path:
    """Where this process assembles `target` before publishing it with a rename."""
    return target.with_name(f"{target.name}.{os.getpid()}.partial")


def open_partial(path: Path) -> BinaryIO:
    """`path` opened for writing from empty and locked for as long as it is open. If a sweep
    removed the name between the open and the lock (its pid was a dead start's, now ours),
    the file is opened again, so what is written is never an unlinked file's."""
    for _ in range(3):
        out = open(path, "wb")  # the caller closes it
        if fcntl is None:
            return out
        fcntl.flock(out.fileno(), fcntl.LOCK_EX)
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(out.fileno()), os.stat(path)):
                return out
        out.close()
    raise OSError(f"{path} kept being removed while it was opened")


def remove_stale(folder: Path) -> tuple[int, int]:
    """How many unfinished copies in `folder` no start was writing, and their bytes: removed."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0, 0
    removed = freed = 0
    for entry in entries:
        found = _NAME.fullmatch(entry.name)
        if found and entry.is_file(follow_symlinks=False):
            size = _remove_if_stale(Path(entry.path), int(found.group(1)))
            removed, freed = removed + (size is not None), freed + (size or 0)
    return removed, freed


def _remove_if_stale(path: Path, pid: int) -> int | None:
    """The size of the copy at `path` if it was nobody's and is gone now, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return None  # a start is writing it now
        st = os.fstat(fd)
        if _writer_alive(pid) and time.time() - st.st_mtime < STALE_S:
            return None  # its start may have opened it and not locked it yet
        if not os.path.samestat(st, os.stat(path)):
            return None  # replaced by a new start's copy since it was opened
        path.unlink()
        return st.st_size
    except OSError:
        return None  # a folder we may not change: the copy stays, nothing else is harmed
    finally:
        os.close(fd)


def _writer_alive(pid: int) -> bool:
    """Whether process `pid` may be the one writing its copy: never this process (the sweep runs
    before it writes; a container gives every start the same pid), never pid 0 (signalling it
    means the whole process group)."""
    if pid <= 0 or pid == os.getpid():
        return False
    if os.name == "nt":
        return True  # os.kill(pid, 0) would send Ctrl+C there; the age decides
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a number no process can have
        return False
    except OSError:
        return True  # another user's process (EPERM): alive
    return True
