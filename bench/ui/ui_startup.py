"""Startup to first frame (bench/ui/ui.py's third measurement): the real `jarvis-tui` in a
pseudo-terminal (120x40) with an existing config, timed until the chat screen's footer is on the
terminal, beside `import textual` and a bare Textual app with a footer, timed the same way."""

from __future__ import annotations

import fcntl
import os
import re
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

from tests.fakeserver import FakeProvider

SIZE = (120, 40)
NOW = time.monotonic

# -- 3: startup to first frame, in a pseudo-terminal --------------------------------------------

ANSI = re.compile(rb"\x1b\[[0-9;?<>=!$]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]"
                  rb"|\x1b\][^\x07]*\x07")

BARE_APP = """
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Static

class Bare(App):
    BINDINGS = [Binding("ctrl+q", "quit", "Quit")]
    def compose(self):
        yield Static("a bare Textual app")
        yield Footer()

Bare().run()
"""


def pty_run(argv: list[str], env: dict[str, str], marker: bytes | None,
            limit_s: float = 30.0) -> tuple[float | None, bool]:
    """Start argv on a 120x40 pseudo-terminal; seconds until `marker` (escape codes removed) is
    on the screen output (None: wait for exit instead), then Ctrl+Q; and whether it exited by
    itself (else it was killed)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    t0 = NOW()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True, close_fds=True)
    os.close(slave)
    buf = b""
    found: float | None = None

    def pump(wait: float) -> bool:
        nonlocal buf
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        buf += data
        return True

    try:
        while NOW() - t0 < limit_s:
            alive = pump(0.01)
            if marker is not None and marker in ANSI.sub(b"", buf):
                found = NOW() - t0
                break
            if not alive or proc.poll() is not None:
                if marker is None:
                    proc.wait()
                    found = NOW() - t0
                break
        if proc.poll() is None:
            os.write(master, b"\x11")  # Ctrl+Q
        end = NOW() + 10
        while proc.poll() is None and NOW() < end:
            pump(0.05)
        clean = proc.poll() is not None
        if not clean:
            proc.kill()
            proc.wait()
    finally:
        os.close(master)
    if marker is not None and found is None:
        text = ANSI.sub(b"", buf).decode("utf-8", "replace")[-400:]
        print(f"    (marker {marker!r} not seen; output tail: {text!r})", file=sys.stderr)
    return found, clean


def measure_startup(quick: bool) -> dict[str, Any]:
    runs = 1 if quick else 5
    fake = FakeProvider().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("OPENAI_", "JARVIS_", "ANTHROPIC_", "OLLAMA_",
                                        "TEXTUAL"))}
            env.update(HOME=str(base / "home"), XDG_CONFIG_HOME=str(base / "config"),
                       XDG_DATA_HOME=str(base / "data"), TERM="xterm-256color",
                       COLORTERM="truecolor", LANG="C.UTF-8", PYTHONIOENCODING="utf-8")
            config = base / "config" / "jarvis-tui" / "config.toml"
            config.parent.mkdir(parents=True)
            config.write_text(f'provider = "openai"\nbase_url = "{fake.base_url}"\n'
                              'model = "fake-model"\ncontext_window = 8192\nlanguage = "en"\n',
                              encoding="utf-8")
            (base / "home").mkdir()
            bare = base / "bare_app.py"
            bare.write_text(BARE_APP, encoding="utf-8")
            exe = Path(sys.executable).parent / "jarvis-tui"
            tui = [str(exe)] if exe.exists() else [sys.executable, "-m", "jarvis_tui"]
            cases = {
                "python -c pass (exit)": ([sys.executable, "-c", "pass"], None),
                "python -c 'import textual' (exit)": ([sys.executable, "-c", "import textual"],
                                                      None),
                "bare Textual app, first frame": ([sys.executable, str(bare)], b"Quit"),
                # The chat screen's footer (its last keys are cut off at 120 columns).
                "jarvis-tui, first frame": (tui, b"f1 Help"),
            }
            out: dict[str, Any] = {}
            for name, (argv, marker) in cases.items():
                pty_run(argv, env, marker)  # warm-up: bytecode, the store created once
                times, clean = [], True
                for _ in range(runs):
                    t, ok = pty_run(argv, env, marker)
                    clean = clean and ok
                    if t is not None:
                        times.append(t)
                out[name] = {"times": times, "clean": clean, "runs": runs}
    finally:
        fake.stop()
    return out


def report_startup(results: dict[str, Any]) -> None:
    print()
    print("3. Startup to first frame (pseudo-terminal 120x40, existing config; seconds)")
    print(f"{'':40}{'runs':>6}{'min':>8}{'median':>8}{'quit ok':>9}")
    for name, r in results.items():
        if not r["times"]:
            print(f"{name:40}{r['runs']:>6}  never drew its first frame")
            continue
        print(f"{name:40}{len(r['times']):>6}{min(r['times']):>8.2f}"
              f"{statistics.median(r['times']):>8.2f}{'yes' if r['clean'] else 'KILLED':>9}")
    print(f"{'target (jarvis-tui)':40}{'':>6}{'':>8}{'<= 0.60':>8}")


# What `jarvis-tui` imports before the app runs: the command line, then the UI (cli.py imports it
# only for the full-screen app).
STARTUP_IMPORTS = "import jarvis_tui.cli, jarvis_tui.ui.actions, jarvis_tui.ui.app"
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_profile(top: int = 10) -> dict[str, Any]:
    """`python -X importtime` over the start's imports, in a fresh process (bytecode compiled
    by a first run): the `top` modules by their own time, and each package's share."""
    argv = [sys.executable, "-X", "importtime", "-c", STARTUP_IMPORTS]
    subprocess.run(argv, capture_output=True, check=True)
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    rows = [(int(own), int(cumulative), len(indent) // 2, name)
            for own, cumulative, indent, name in IMPORT_LINE.findall(done.stderr)]
    packages: dict[str, int] = {}
    for own, _, _, name in rows:
        packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0) + own
    return {"total_us": sum(own for own, *_ in rows), "modules": len(rows),
            "top": sorted(rows, reverse=True)[:top],
            "packages": sorted(packages.items(), key=lambda kv: -kv[1])[:top]}


def report_imports(profile: dict[str, Any]) -> None:
    print(f"\nImports of the start ({STARTUP_IMPORTS}; python -X importtime): "
          f"{profile['modules']} modules, {profile['total_us'] / 1e6:.2f} s")
    print(f"{'costliest, by their own time':52}{'own ms':>8}{'with theirs ms':>16}")
    for own, cumulative, _, name in profile["top"]:
        print(f"  {name:50}{own / 1e3:>8.1f}{cumulative / 1e3:>16.1f}")
    print("by package (own times): " + ", ".join(
        f"{name} {us / 1e3:.0f} ms" for name, us in profile["packages"]))
