"""Whether a settings library earns its place over the schema (issue 41, item 6): the schema
(core/settings/schema.py) beside pydantic-settings, which the test install already has (the mcp
SDK depends on it), on what a user meets: the import each start pays, loading every setting
from the environment, and the line a bad value gets.

    python bench/dev/settings_library.py [--quick]

The pydantic model is built from the same schema (names, types, defaults, JARVIS_ variables),
so both read the same 38 variables; pydantic checks types only, the schema also its ranges and
choices. Each import is timed in a fresh interpreter (the median of several)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from jarvis_tui.core.settings.config import load_settings  # noqa: E402
from jarvis_tui.core.settings.errors import ConfigError  # noqa: E402
from jarvis_tui.core.settings.schema import SCHEMA  # noqa: E402


def import_ms(module: str, runs: int, after: str = "") -> float:
    """Milliseconds to import `module` in a fresh interpreter, `after` imported first (what
    it adds to what is loaded already)."""
    code = ("{a}import time; t = time.perf_counter(); import {m}; "
            "print((time.perf_counter() - t) * 1000)").format(
                m=module, a=f"import {after}; " if after else "")
    out = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True, cwd=ROOT).stdout) for _ in range(runs)]
    return statistics.median(out)


def sample_env() -> dict[str, str]:
    """Every setting's variable, set to its default written as text (scalars only)."""
    env = {}
    for s in SCHEMA:
        if s.env and s.kind in (str, int, float, bool) and s.default not in ("", None):
            env[s.env] = str(s.default).lower() if s.kind is bool else str(s.default)
    return env


def pydantic_model() -> type:
    from pydantic import Field
    from pydantic_settings import BaseSettings, SettingsConfigDict

    fields = {s.name: (s.kind, Field(default=s.default, validation_alias=s.env or None))
              for s in SCHEMA if s.kind in (str, int, float, bool)}
    namespace = {"__annotations__": {k: t for k, (t, _) in fields.items()},
                 **{k: f for k, (_, f) in fields.items()},
                 "model_config": SettingsConfigDict(extra="ignore")}
    return type("PydanticSettings", (BaseSettings,), namespace)


def load_ms(load, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        load()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a few seconds)")
    args = parser.parse_args()
    runs = 3 if args.quick else 9
    env = sample_env()
    scalars = sum(1 for s in SCHEMA if s.kind in (str, int, float, bool))
    print(f"settings in the schema: {len(SCHEMA)} ({scalars} scalar); "
          f"with an environment variable: {sum(1 for s in SCHEMA if s.env)}")
    ours = import_ms("jarvis_tui.core.settings.config", runs)
    theirs = import_ms("pydantic_settings", runs, after="jarvis_tui.core.settings.config")
    started = subprocess.run(
        [sys.executable, "-c", "import sys, jarvis_tui.cli, jarvis_tui.ui.app; "
         "print('pydantic' in sys.modules)"], capture_output=True, text=True, cwd=ROOT).stdout
    print(f"import, fresh interpreter (median of {runs}): the settings {ours:.0f} ms; "
          f"pydantic-settings on top {theirs:.0f} ms (pydantic loaded at start today: "
          f"{started.strip() == 'True'})")
    model = pydantic_model()
    import os
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        ours_load = load_ms(lambda: load_settings(Path("/nonexistent.toml"), env=env), runs * 20)
        theirs_load = load_ms(model, runs * 20)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    print(f"load {len(env)} variables (median): schema {ours_load:.2f} ms, "
          f"pydantic-settings {theirs_load:.2f} ms")
    bad = {"JARVIS_CONTEXT_WINDOW": "8k"}
    try:
        load_settings(Path("/nonexistent.toml"), env=bad)
        ours_line = "(accepted)"
    except ConfigError as err:
        ours_line = str(err)
    os.environ.update(bad)
    try:
        model()
        theirs_line = "(accepted)"
    except Exception as err:  # pydantic's ValidationError, whatever its module
        theirs_line = str(err)
    finally:
        del os.environ["JARVIS_CONTEXT_WINDOW"]
    print("a bad value, JARVIS_CONTEXT_WINDOW=8k:")
    print(f"  schema ({len(ours_line.splitlines())} line): {ours_line}")
    print(f"  pydantic-settings ({len(theirs_line.splitlines())} lines): "
          + json.dumps(theirs_line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
