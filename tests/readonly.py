"""A file or directory nobody may write to, for tests of what the user is told then.

chmod alone is not enough: the tests run as root in CI, and root ignores mode bits. Root does not
ignore the immutable attribute (`chattr +i`), which also holds for every process started while it
is set. So both: mode 0o555/0o444 for an ordinary user, +i for root (needs CAP_LINUX_IMMUTABLE
and a file system with attributes, as ext4 under tmp_path here). Checked before use, so a test
never passes because the place was writable after all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only(place: Path) -> Iterator[Path]:
    mode = place.stat().st_mode
    place.chmod(0o555 if place.is_dir() else 0o444)
    immutable = os.geteuid() == 0
    try:
        if immutable:
            subprocess.run(["chattr", "+i", str(place)], check=True, capture_output=True)
        if os.access(place, os.W_OK):
            raise RuntimeError(f"could not make {place} read-only for this test")
        yield place
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(place)], capture_output=True)
        place.chmod(mode)
