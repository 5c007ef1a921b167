"""write_whole: a file the user keeps is replaced whole or not at all, even when the disk
refuses the write halfway (here a file-size limit, as a full disk refuses it: ENOSPC/EFBIG)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

from jarvis_tui.core.files import write_whole


def test_a_write_the_disk_refuses_halfway_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "session.md"
    path.write_text("the export of yesterday\n", encoding="utf-8")
    child = textwrap.dedent(f"""
        import resource, signal, sys
        from pathlib import Path
        from jarvis_tui.core.files import write_whole
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_whole(Path({str(path)!r}), "新的导出 " * 10_000)
        except OSError as err:
            print(err.errno)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 3, done.stderr
    assert path.read_text(encoding="utf-8") == "the export of yesterday\n"
    assert [p.name for p in tmp_path.iterdir()] == ["session.md"]  # no temporary left


def test_a_link_stays_a_link_and_modes_are_kept_or_private(tmp_path):
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text("old", encoding="utf-8")
    real.chmod(0o644)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    write_whole(link, "new = 1\r\n")
    assert link.is_symlink() and real.read_bytes() == b"new = 1\r\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o644  # the user's choice, kept
    fresh = tmp_path / "out" / "memory.json"
    write_whole(fresh, b"{}")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600  # new: may hold keys
