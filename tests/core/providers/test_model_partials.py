"""What a killed start leaves of the local model's file is removed by the next start, and said;
what a running start is writing is not, whatever its pid says. A folder that cannot be written
is named, with why, not blamed on free space."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jarvis_tui.core.providers.local_model import (
    TEXTS,
    ModelFileError,
    _write_error,
    model_path,
)
from jarvis_tui.core.providers.model_partials import STALE_S, remove_stale
from tests.core.providers.test_local_model import PARTS, leftovers, pin_for, write_parts
from tests.readonly import read_only

ROOT = Path(__file__).parents[3]


def dead_pid() -> int:
    """A process id that was in use a moment ago and is not now."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def left_copy(cache: Path, pid: int, size: int = 3 << 20, age_s: float = 0.0) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"model.gguf.{pid}.partial"
    with open(path, "wb") as f:
        f.truncate(size)
    if age_s:
        then = time.time() - age_s
        os.utime(path, (then, then))
    return path


def test_a_copy_a_killed_start_left_is_removed_said_once_and_the_model_still_assembles(tmp_path):
    parts, pin, cache = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS), tmp_path / "cache"
    left_copy(cache, dead_pid())
    heard: list[str] = []
    path = model_path(cache, None, parts, pin, notice=heard.append)
    assert path.read_bytes() == b"".join(PARTS)
    assert leftovers(cache) == ["model.gguf", "model.gguf.verified"]
    assert heard == [f"removed an unfinished copy of the local model's file that a stopped start "
                     f"left in {cache} (3 MB freed)"]
    model_path(cache, None, parts, pin, notice=heard.append)
    assert len(heard) == 1  # nothing more to free, nothing more said


def test_copies_are_removed_even_when_the_model_is_ready_and_said_in_chinese(tmp_path):
    parts, pin, cache = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS), tmp_path / "cache"
    model_path(cache, None, parts, pin)
    left_copy(cache, dead_pid(), 5 << 20)
    left_copy(cache, 0, 2 << 20)  # pid 0 is nobody's (signalling it means our process group)
    heard: list[str] = []
    model_path(cache, None, [], pin, language="zh", notice=heard.append)
    assert heard == [f"已删除被中断的启动留在 {cache} 中的 2 个未完成的本地模型文件（释放了 7 MB）"]
    assert leftovers(cache) == ["model.gguf", "model.gguf.verified"]


def test_a_copy_a_running_start_is_writing_stays_whatever_its_pid_and_age(tmp_path):
    cache = tmp_path / "cache"
    path = left_copy(cache, dead_pid(), age_s=2 * STALE_S)  # its name says dead and old...
    writer = subprocess.Popen(  # ...but a start holds its lock: it is being written
        [sys.executable, "-c",
         "import sys; from pathlib import Path\n"
         "from jarvis_tui.core.providers.model_partials import open_partial\n"
         f"f = open_partial(Path({str(path)!r})); print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert writer.stdout.readline().strip() == "locked"
        assert remove_stale(cache) == (0, 0) and path.exists()
    finally:
        writer.communicate("", timeout=30)
    assert remove_stale(cache) == (1, 0) and not path.exists()  # its writer is gone


def test_a_live_pid_that_nobody_writes_under_is_left_while_fresh_and_removed_when_old(tmp_path):
    # A pid in use by a process that is not a start (reused since the start died): only the
    # age tells it from a start that opened its copy and has not locked it yet.
    cache, other = tmp_path / "cache", os.getppid()
    fresh = left_copy(cache, other)
    assert remove_stale(cache) == (0, 0) and fresh.exists()
    os.utime(fresh, (time.time() - 2 * STALE_S,) * 2)
    assert remove_stale(cache) == (1, 3 << 20) and not fresh.exists()


def test_a_copy_named_for_this_very_process_is_a_dead_start_s(tmp_path):
    # In a container every start may get the same pid: the copy is a killed start's, not ours.
    cache = tmp_path / "cache"
    left_copy(cache, os.getpid())
    assert remove_stale(cache) == (1, 3 << 20)


def test_nothing_but_the_unfinished_copies_is_touched(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    keep = ["notes.partial", "model.gguf.partial", "model.gguf.12x.partial", "model.gguf"]
    for name in keep:
        (cache / name).write_bytes(b"x")
    (cache / f"link.{dead_pid()}.partial").symlink_to(cache / "model.gguf")
    (cache / f"dir.{dead_pid()}.partial").mkdir()
    assert remove_stale(cache) == (0, 0)
    assert remove_stale(tmp_path / "absent") == (0, 0)
    assert len(leftovers(cache)) == len(keep) + 2


def test_a_folder_that_may_not_be_written_is_named_with_why(tmp_path):
    parts, pin, cache = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS), tmp_path / "cache"
    cache.mkdir()
    with read_only(cache), pytest.raises(ModelFileError) as err:
        model_path(cache, None, parts, pin)
    assert str(err.value) == (
        f"cannot write the local model's file to {cache}: permission denied; check the "
        "folder's owner and mode, or give it a folder it can write with 31 KB free (on Linux "
        "XDG_CACHE_HOME chooses it)")
    # A folder not made yet: the one above it, which refused it, is named.
    with read_only(cache), pytest.raises(ModelFileError) as err:
        model_path(cache / "jarvis-tui" / "models", None, parts, pin, language="zh")
    assert str(err.value).startswith(f"无法把本地模型文件写入 {cache}：没有权限；请检查")
    assert leftovers(cache) == []


@pytest.mark.parametrize(("code", "said"), [
    (errno.EROFS, "cannot write the local model's file to {f}: read-only file system; remount it "
                  "read-write, or give it"),
    (errno.ENOSPC, "could not write the local model to {f}: No space left on device (it needs "
                   "31 KB free there)"),
    (errno.EIO, "could not write the local model to {f}: Input/output error"),
])
def test_each_write_failure_says_what_failed(tmp_path, code, said):
    pin = pin_for(PARTS)
    err = OSError(code, os.strerror(code), str(tmp_path / "model.gguf.1.partial"))
    line = str(_write_error(err, tmp_path / "model.gguf", pin, TEXTS["en"]))
    assert line.startswith(said.format(f=tmp_path)) and "\n" not in line
    assert ("free there" in line) == (code == errno.ENOSPC)  # room is blamed only for room
