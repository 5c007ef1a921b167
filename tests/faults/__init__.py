"""The hostile half of the fault matrix: each case runs `jarvis-tui` as real processes, with real
config and data directories, against a loopback server (the fake provider or tests.hostile_server),
and counts what a user would hold against us: replies and messages lost, tracebacks printed,
secrets printed.

A case builds a Trial, runs commands through it, states what must hold (`expect`), and returns
`trial.outcome(...)`. Shared by tests/faults/test_fault_matrix.py (asserting every row) and
bench/faults/faults.py (printing them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store

TRACEBACK = "Traceback (most recent call last)"


@dataclass
class ProcOutcome:
    item: int  # the item of the issue the case comes from (issue 13 unless `issue` says)
    name: str
    survived: bool
    lost: int
    tracebacks: int
    secrets: int
    seconds: float
    result: str  # what the user saw, one line (or the first thing that did not hold)
    issue: int = 13

    @property
    def label(self) -> str:
        return f"{self.issue}.{self.item}"


@dataclass
class ProcCase:
    item: int
    name: str
    run: Callable[[Path], ProcOutcome]
    issue: int = 13  # the hostile run that found the fault: issue 13, 25 or 39

    @property
    def label(self) -> str:
        return f"{self.issue}.{self.item}"


@dataclass
class Proc:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def home_env(tmp: Path) -> dict[str, str]:
    """A user with empty config and data directories and no provider variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JARVIS_", "ANTHROPIC_", "OLLAMA_"))}
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"),
               XDG_CACHE_HOME=str(tmp / "cache"), PYTHONIOENCODING="utf-8")
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "jarvis_tui", *args]


@dataclass
class Trial:
    item: int
    name: str
    tmp: Path
    secrets: list[str] = field(default_factory=list)  # none of these may ever be printed
    procs: list[Proc] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: int = 0
    issue: int = 13

    def __post_init__(self) -> None:
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.env = home_env(self.tmp)
        self._start = time.monotonic()

    @property
    def db(self) -> Path:
        return Path(self.env["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db"

    @property
    def config(self) -> Path:
        return self.tmp / "config" / "jarvis-tui" / "config.toml"

    def run(self, *args: str, stdin: bytes | str | None = None, timeout: float = 60,
            env: dict[str, str] | None = None) -> Proc:
        """One jarvis-tui command to its end; a command still running after `timeout` is
        killed and that is a problem of its own (every fault must end in bounded time)."""
        return self._run(command(*args), env or self.env, stdin, timeout)

    def shell(self, script: str, *, timeout: float = 60, namespace: bool = False) -> Proc:
        """A bash script in the trial's environment, where "$JARVIS" runs jarvis-tui: for
        pipes a plain command cannot make. `namespace`: in a user and mount namespace of its
        own, where the script may mount a filesystem (a tiny tmpfs: a real full disk) without
        any privilege, and the mount vanishes with it."""
        env = {**self.env, "JARVIS": " ".join(command())}  # split by bash: no spaces inside
        argv = ["bash", "-c", script]
        return self._run(["unshare", "-rm", *argv] if namespace else argv, env, None, timeout)

    def _run(self, argv: list[str], env: dict[str, str], stdin: bytes | str | None,
             timeout: float) -> Proc:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        start = time.monotonic()
        try:
            done = subprocess.run(argv, env=env, input=data, capture_output=True,
                                  timeout=timeout)
            rc, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            rc, out, err = -9, exc.stdout or b"", exc.stderr or b""
            self.problems.append(f"still running after {timeout:g}s: {' '.join(argv[-3:])[:60]}")
        return self.add(Proc(argv, rc, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"), time.monotonic() - start))

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """A jarvis-tui command in the background; `finish` collects it."""
        return subprocess.Popen(command(*args), env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def finish(self, child: subprocess.Popen[bytes], timeout: float = 60) -> Proc:
        start = time.monotonic()
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            self.problems.append(f"still running after {timeout:g}s: {child.args[-1]!s:.40}")
        return self.add(Proc([str(a) for a in child.args], child.returncode,
                             out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                             time.monotonic() - start))

    def write_config(self, text: str) -> Path:
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(text, encoding="utf-8")
        self.config.chmod(0o600)
        return self.config

    def add(self, proc: Proc) -> Proc:
        """A process the case ran itself (in the background, or through a pipe)."""
        self.procs.append(proc)
        return proc

    def expect(self, ok: object, problem: str) -> bool:
        if not ok:
            self.problems.append(problem)
        return bool(ok)

    def messages(self, conv_id: int | None = None) -> list[Message]:
        """What the session store holds (the latest session by default)."""
        if not self.db.exists():
            return []
        with Store(self.db) as store:
            conv = store.get_conversation(conv_id) if conv_id else store.latest_conversation()
            return store.messages(conv.id) if conv else []

    def keeps(self, texts: Iterable[str], conv_id: int | None = None) -> int:
        """Count each text no stored message holds as lost; returns how many were."""
        stored = [m.content for m in self.messages(conv_id)]
        missing = [t for t in texts if not any(t in s for s in stored)]
        for text in missing:
            self.problems.append(f"lost: {text[:40]!r}")
        self.lost += len(missing)
        return len(missing)

    def outcome(self, result: str = "") -> ProcOutcome:
        printed = [p.stdout + p.stderr for p in self.procs]
        tracebacks = sum(text.count(TRACEBACK) for text in printed)
        leaked = sum(text.count(s) for text in printed for s in self.secrets if s)
        if tracebacks:
            first = next(t for t in printed if TRACEBACK in t)
            self.problems.append("traceback: " + first.strip().splitlines()[-1][:80])
        if leaked:
            self.problems.append(f"a secret was printed {leaked} times")
        last = self.procs[-1] if self.procs else None
        said = result or (one_line(last.stderr) if last else "")
        shown = "; ".join(self.problems) if self.problems else said
        return ProcOutcome(self.item, self.name, not self.problems, self.lost, tracebacks,
                           leaked, time.monotonic() - self._start, shown, self.issue)


def wait_for(check: Callable[[], object], limit_s: float = 20.0) -> bool:
    """Whether `check` came true within `limit_s` (another process storing, a file appearing)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return False


def one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:120] if lines else ""
