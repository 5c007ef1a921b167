"""MCP servers of our own for the MCP client's tests, and helpers to run them."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def faulty_args(*extra: str) -> tuple[str, ...]:
    return ("-m", "tests.mcp_servers.faulty", *extra)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http_faulty(timeout: float = 30.0) -> tuple[subprocess.Popen[bytes], str]:
    """The faulty server on streamable HTTP, once it accepts connections: (process, url)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, *faulty_args("--http", str(port))], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the HTTP faulty server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError("the HTTP faulty server did not listen in time")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_git_repo(path: Path, commits: int = 40) -> Path:
    """A repository with `commits` commits of a growing source file (a long log and diffs of
    several thousand tokens), plus an unstaged change; made by one git fast-import."""
    path.mkdir(parents=True, exist_ok=True)
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    stream = []
    for n in range(1, commits + 1):
        body = "".join(f"def function_{i}(x):\n    return x * {i} + {n}  # revision {n}\n"
                       for i in range(n * 8))
        data = body.encode()
        message = (f"Revision {n}: rework functions 0-{n * 8} of module.py\n\n"
                   f"Each function now adds {n}; see the design notes in docs/notes-{n}.md.\n"
                   ).encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"author Ada <ada@example.com> {1_700_000_000 + n * 60} +0000\n".encode())
        stream.append(f"committer Ada <ada@example.com> {1_700_000_000 + n * 60} +0000\n"
                      .encode())
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
        stream.append(f"M 100644 inline module.py\ndata {len(data)}\n".encode() + data + b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream),
                   check=True, env=env)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", "main"], check=True, env=env)
    module = path / "module.py"
    module.write_text(module.read_text().replace("return x *", "return -x *"), encoding="utf-8")
    return path
