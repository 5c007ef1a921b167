"""The layering README describes, as import-linter contracts ([tool.importlinter] in
pyproject.toml): the core never imports the UI, the UI and the command line reach a session
only through core.session, each part of the core sits above the ones it uses, only the engine
emits events, the events import no part (they are the vocabulary every part shares), and the
store's parts (conversations, messages, search, ...) share only store.db. Run here so CI runs
them; a broken contract prints the import chain that broke it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


def lint_imports() -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_every_contract_is_kept():
    run = lint_imports()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout and "7 kept" in run.stdout, run.stdout


def test_no_module_imports_itself_round_a_circle():
    graph = grimp.build_graph("jarvis_tui")
    circles = sorted({tuple(sorted((a, b))) for a in graph.modules
                      for b in graph.find_modules_directly_imported_by(a)
                      if graph.chain_exists(importer=b, imported=a)})
    assert circles == []
