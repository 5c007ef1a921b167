"""Installed without the `local` extra, the e2e tests are skipped with their reason, not red."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Loaded at interpreter start (sitecustomize): llama_cpp cannot be found, as on a machine
# installed with `pip install -e '.[dev]'` only.
HIDE = """
import sys
class _NoLocalExtra:
    def find_spec(self, name, path=None, target=None):
        if name == "llama_cpp" or name.startswith("llama_cpp."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _NoLocalExtra())
"""


def test_without_the_local_extra_the_e2e_tests_are_skipped_with_the_reason(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/e2e/test_ask_e2e.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "skipped" in run.stdout and "passed" not in run.stdout
    assert "needs the local extra (llama-cpp-python)" in run.stdout
