"""Without litellm the LiteLLM e2e test shows as skipped, with how to get it; under CI it fails
with that reason instead (README's test command installs litellm, so there it must run); with a
Python that has litellm it is not skipped. Each case runs pytest on that file alone, planned or
stopped before the llama server would start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import LITELLM_MISSING, LITELLM_TEST

ROOT = Path(__file__).resolve().parents[2]
# Loaded at interpreter start (sitecustomize): litellm cannot be found, whatever is installed.
HIDE = """
import sys
class _NoLitellm:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm" or name.startswith("litellm."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _NoLitellm())
"""


def run_pytest(tmp: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp / "hide").mkdir(exist_ok=True)
    (tmp / "hide" / "sitecustomize.py").write_text(HIDE)
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "JARVIS_LITELLM_PYTHON")}
    base["PYTHONPATH"] = os.pathsep.join([str(tmp / "hide"), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rsE", "-p", "no:cacheprovider", "-p",
         "no:randomly", *flags, f"tests/e2e/{LITELLM_TEST}"],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=120)


def test_without_litellm_it_is_skipped_with_the_reason(tmp_path):
    run = run_pytest(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout and f"SKIPPED [1] tests/e2e/{LITELLM_TEST}: " \
        f"{LITELLM_MISSING}" in run.stdout


def test_under_ci_a_missing_litellm_fails_with_the_reason_before_any_server_starts(tmp_path):
    run = run_pytest(tmp_path, CI="true")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout and f"Failed: {LITELLM_MISSING}" in run.stdout
    assert "skipped" not in run.stdout
    # What the fixtures would do, in order: litellm is asked before the llama server starts.
    plan = run_pytest(tmp_path, "--setup-plan", CI="true").stdout
    assert 0 <= plan.index("SETUP    S litellm") < plan.index("SETUP    S llama_server")


def test_a_named_python_without_litellm_is_said_to_be_one(tmp_path):
    run = run_pytest(tmp_path, JARVIS_LITELLM_PYTHON=sys.executable)
    assert "1 skipped" in run.stdout, run.stdout + run.stderr
    assert f"JARVIS_LITELLM_PYTHON names {sys.executable}, which cannot import litellm" \
        in run.stdout


def test_with_a_python_that_has_litellm_it_is_not_skipped_for_it(tmp_path):
    fake = tmp_path / "fake" / "litellm"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    python = tmp_path / "python-with-litellm"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{fake.parent}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    run = run_pytest(tmp_path, "--setup-plan", JARVIS_LITELLM_PYTHON=str(python))
    assert run.returncode == 0, run.stdout + run.stderr
    # Planned to run, its litellm asked for; or skipped for the local extra alone.
    assert "SETUP    S litellm" in run.stdout or "needs the local extra" in run.stdout
    assert "litellm" not in "".join(line for line in run.stdout.splitlines()
                                    if line.startswith("SKIPPED"))
