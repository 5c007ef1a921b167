"""Writing a file the user keeps (config, exports, copies) whole or not at all."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_whole(path: Path, data: str | bytes, *, parents: bool = True) -> None:
    """Replace `path` with `data` (text as UTF-8, line ends as given) so that a crash or a full
    disk mid-write leaves the old file, never half of the new one, and no temporary behind. A
    symlink (dotfiles) is written at its target, so the link stays a link; an existing file
    keeps its permission bits, a new one is the user's only (0600): configs, exports and
    copies can hold keys. `parents`: make the folders it goes in (not for a path the user
    typed: a typo there is a folder they did not want)."""
    target = Path(os.path.realpath(path))
    if parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not every platform lets a directory be opened.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
