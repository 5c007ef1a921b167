"""The local model server as a child process: started on a free port, waited for, used, stopped,
and never left behind. The child here is the fake provider run as a real separate process; the
real llama.cpp server is the e2e tests' job."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from jarvis_tui.core.providers.local_server import LocalServer, LocalServerError, free_port
from tests.engine_helpers import final, make_engine, running, send, until


def fake_command(port: int, limit: int = 2048) -> list[str]:
    return [sys.executable, "-m", "tests.fakeserver", "--port", str(port), "--limit", str(limit)]


async def test_starts_answers_and_stops(tmp_path):
    port = free_port()
    server = LocalServer(fake_command(port), port=port, log_path=tmp_path / "server.log")
    steps: list[float] = []
    await server.start(progress=steps.append)
    pid = server.process.pid
    try:
        assert server.base_url == f"http://127.0.0.1:{port}/v1"
        engine = make_engine(server.base_url, tmp_path, context_window=2048)
        assert type(final(await send(engine, "hello from the parent"))).__name__ == "Finished"
        await engine.provider.aclose()
    finally:
        server.stop()
    assert not running(pid)
    server.stop()  # twice is fine
    # The port is free again.
    again = LocalServer(fake_command(port), port=port, log_path=tmp_path / "again.log")
    async with again:
        assert again.process is not None


async def test_a_server_that_dies_while_starting_says_why(tmp_path):
    script = "import sys; print('error: model file /nope.gguf not found'); sys.exit(3)"
    server = LocalServer([sys.executable, "-c", script], port=free_port(),
                         log_path=tmp_path / "server.log")
    with pytest.raises(LocalServerError) as info:
        await server.start()
    assert "exited with code 3" in str(info.value)
    assert "model file /nope.gguf not found" in str(info.value)


async def test_a_server_that_never_answers_is_stopped(tmp_path):
    server = LocalServer([sys.executable, "-c", "import time; time.sleep(60)"],
                         port=free_port(), log_path=tmp_path / "server.log",
                         startup_timeout=1.0)
    steps: list[float] = []
    start = asyncio.get_running_loop().create_task(server.start(progress=steps.append))
    await until(lambda: server.process is not None, "the server process to be started")
    pid = server.process.pid
    with pytest.raises(LocalServerError, match="did not answer within 1s"):
        await start
    assert steps and steps == sorted(steps) and 0 <= steps[0] < 1.0  # seconds, counting up
    assert not running(pid)


async def test_what_a_running_server_prints_reaches_its_log_at_once(tmp_path):
    # uvicorn prints its access log to stdout; held in a file buffer, a refusal the server had
    # already answered was missing from the log (and from the e2e tests that read it).
    script = "import time; print('POST /v1/chat/completions HTTP/1.1 400'); time.sleep(60)"
    server = LocalServer([sys.executable, "-c", script], port=free_port(),
                         log_path=tmp_path / "server.log", startup_timeout=1.0)
    with pytest.raises(LocalServerError) as info:
        await server.start()
    assert "HTTP/1.1 400" in str(info.value)


def test_the_child_dies_with_a_killed_parent(tmp_path):
    port = free_port()
    parent = textwrap.dedent(f"""
        import asyncio, sys, time
        from pathlib import Path
        from jarvis_tui.core.providers.local_server import LocalServer
        async def main():
            server = LocalServer({fake_command(port)!r}, port={port},
                                 log_path=Path({str(tmp_path / "s.log")!r}))
            await server.start()
            print(server.process.pid, flush=True)
            await asyncio.sleep(60)
        asyncio.run(main())
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        assert running(child)
        os.kill(proc.pid, signal.SIGKILL)  # no chance to clean up
        proc.wait(timeout=10)
        end = time.monotonic() + 10
        while running(child) and time.monotonic() < end:
            time.sleep(0.05)
        assert not running(child), "the model server outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
