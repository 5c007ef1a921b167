"""One round at a time on a session, across processes.

Two `ask --session N` at once stored user B, user A, reply B, reply A, and the next request sent
two user messages in a row. A round therefore holds an advisory lock on its session: an flock on
a small file beside the database, one per session. The kernel drops it when the process ends,
however it ends, so a killed jarvis-tui never leaves a session locked. The file says who holds
it, for the message the next one shows.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; rounds are not serialised there
    fcntl = None  # type: ignore[assignment]


class SessionLock:
    def __init__(self, db_path: Path, conv_id: int) -> None:
        self.path = db_path.with_name(f".{db_path.name}.locks") / f"session-{conv_id}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if no other holder has it; True when this one holds it now."""
        if self._fd is not None:
            return True
        if fcntl is None:
            self._fd = -1
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            # No lock file can be made here (a read-only data directory): the store says what
            # is wrong when it writes; the round goes on unlocked rather than not at all.
            self._fd = -1
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None or fd < 0:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def holder(self) -> int | None:
        """The process id that holds (or last held) the lock, if the file says."""
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return int(text) if text.isdigit() else None
