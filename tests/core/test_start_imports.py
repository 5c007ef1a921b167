"""The chat screen's start needs no vector: the engine is made and the gauge counted without
numpy, which is imported when recall or embedding first needs it (core/embed/numpy_later.py).
In a fresh interpreter, since this one has numpy loaded already."""

from __future__ import annotations

import subprocess
import sys
import textwrap

START = textwrap.dedent("""
    import sys
    from pathlib import Path
    import jarvis_tui.ui.app
    from jarvis_tui.core.engine.engine import Engine
    from jarvis_tui.core.engine.request_plan import request_states
    from jarvis_tui.core.providers.openai import OpenAIProvider
    from jarvis_tui.core.settings.config import Settings
    from jarvis_tui.core.store.store import Store

    settings = Settings(base_url="http://127.0.0.1:9/v1", model="m", context_window=4096)
    store = Store(Path(sys.argv[1]) / "s.db")
    engine = Engine(settings, store, OpenAIProvider(settings.base_url, ""))
    engine.usage()  # the gauge
    request_states(engine.basis())  # the marks beside each message
    print("before:", "numpy" in sys.modules)
    from jarvis_tui.core.embed.numpy_later import np
    half = float(np.float32(1.5))
    print("after:", "numpy" in sys.modules, half)
""")


def test_the_start_imports_no_numpy_and_the_first_use_does(tmp_path):
    done = subprocess.run([sys.executable, "-c", START, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before: False", "after: True 1.5"]
