"""The core must stay usable without a screen: importing it must not pull in Textual or Rich."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import jarvis_tui.core


def test_core_imports_neither_textual_nor_rich():
    modules = [m.name for m in pkgutil.walk_packages(jarvis_tui.core.__path__, "jarvis_tui.core.")]
    assert "jarvis_tui.core.engine" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""
