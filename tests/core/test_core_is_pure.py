"""The core must stay usable without a screen: importing it must not pull in Textual or Rich."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import jarvis_tui.core


def test_core_imports_neither_textual_nor_rich():
    modules = [m.name for m in pkgutil.walk_packages(jarvis_tui.core.__path__, "jarvis_tui.core.")]
    assert "jarvis_tui.core.engine.engine" in modules
    code = (
        "import importlib, sys\n"
        # httpx loads its command-line tool, which imports Rich, whenever click, rich and
        # pygments happen to be installed (the local extra's server brings them); that is
        # httpx's import, not ours, so it is switched off here.
        "sys.modules['httpx._main'] = None\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


def test_no_core_module_names_textual_or_rich():
    """The runtime check above skips httpx's own Rich import; this one reads our sources."""
    import ast
    from pathlib import Path

    for path in Path(jarvis_tui.core.__path__[0]).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in ("textual", "rich"), f"{path}: imports {name}"
