"""The real thing: llama-cpp-python's server with the local model (Qwen2.5-Coder 0.5B) on loopback.

One server with a 1,024-token window serves the whole e2e session: loading takes seconds, but a
fresh one per test would add up. Each test talks to it through the same code a user runs. The
window is small on purpose: reading the prompt is what takes the time on two cores (about 76
tokens a second), and every behaviour under test (a full window, a refusal, compaction) comes
at half the tokens of a 2,048 one.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jarvis_tui.core.providers.local_server import (
    LocalServer,
    LocalServerError,
    free_port,
    llama_cpp_command,
    local_model_path,
)
from jarvis_tui.core.settings.config import Settings

N_CTX = 1024
# The app's own timeouts, not the fake server tests' 10 s: a busy 2-core machine takes many
# seconds to read a full prompt, and a request the client gave up on keeps the server busy.
REAL_TIMEOUTS = {"request_timeout": Settings().request_timeout,
                 "connect_timeout": Settings().connect_timeout}


def local_extra_missing() -> bool:
    """Installed without the `local` extra (`pip install -e '.[dev]'`): llama-cpp-python absent."""
    try:
        return importlib.util.find_spec("llama_cpp") is None
    except ImportError:
        return True


LITELLM_MISSING = ("litellm is not installed: set JARVIS_LITELLM_PYTHON to a Python with "
                   "litellm[proxy]; README's test command installs it")
LITELLM_TEST = "test_litellm_proxy_e2e.py"


def under_ci() -> bool:
    """Whether CI runs the tests (CI=true, as CI services set it): there nothing may be skipped
    for a missing tool, since README's test command installs every one."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@functools.cache
def litellm_python() -> str | None:
    """A Python that can import litellm (for the proxy e2e test): JARVIS_LITELLM_PYTHON (a venv
    of its own: litellm[proxy] is about 750 MB), or the one running the tests if it can."""
    named = os.environ.get("JARVIS_LITELLM_PYTHON")
    if named:
        # Absolute: the proxy starts in a folder of its own, where a relative path means nothing.
        path = Path(named).absolute()
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None
        # Found, not imported: importing litellm takes seconds, and this runs at collection.
        probe = ("import importlib.util, sys; "
                 "sys.exit(importlib.util.find_spec('litellm') is None)")
        try:
            found = subprocess.run([str(path), "-c", probe], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return str(path) if found.returncode == 0 else None
    try:
        return sys.executable if importlib.util.find_spec("litellm") is not None else None
    except ImportError:
        return None


def litellm_missing() -> str | None:
    """Why the LiteLLM e2e test cannot run here, or None when it can."""
    if litellm_python() is not None:
        return None
    named = os.environ.get("JARVIS_LITELLM_PYTHON")
    if named:
        return (f"JARVIS_LITELLM_PYTHON names {named}, which cannot import litellm: point it "
                "at a Python with litellm[proxy]; README's test command installs it")
    return LITELLM_MISSING


@pytest.fixture(scope="session")
def litellm() -> str:
    """The Python with litellm; the test fails with the reason when there is none (under CI:
    elsewhere it was skipped at collection). Session-scoped, so that it is asked before the
    llama server is started for nothing."""
    python = litellm_python()
    if python is None:
        pytest.fail(litellm_missing() or LITELLM_MISSING, pytrace=False)
    return python


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # One worker runs them all (with `--dist loadgroup`, as README's test command does), so one
    # llama server reads their prompts instead of one per worker fighting for the two cores.
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(pytest.mark.xdist_group("llama_server"))
    # Without litellm the proxy test is skipped with the reason, so it is seen to be missing;
    # under CI it runs, and its fixture fails with the reason.
    proxy_tests = [item for item in items if item.path.name == LITELLM_TEST]
    why = litellm_missing() if proxy_tests and not under_ci() else None
    for item in proxy_tests if why else ():
        item.add_marker(pytest.mark.skip(reason=why))
    # Without the extra the e2e tests cannot run: skipped, with the reason, rather than red.
    # With it (README's test command, CI) they run, and a missing model is a failure.
    if not local_extra_missing():
        return
    skip = pytest.mark.skip(reason="needs the local extra (llama-cpp-python): install with "
                                   "pip install -e '.[dev,local]', as README's test command does")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    try:
        model = local_model_path()
    except LocalServerError as err:
        pytest.fail(f"{err}. The e2e tests need the local extra (README's test command "
                    "installs it); `-m 'not e2e'` leaves them out.")
    port = free_port()
    server = LocalServer(llama_cpp_command(model, N_CTX, "127.0.0.1", port), port=port,
                         log_path=tmp_path_factory.mktemp("llama") / "server.log")
    asyncio.run(server.start())
    try:
        yield server
    finally:
        server.stop()


def server_prompt_tokens(server: LocalServer, messages: list[dict]) -> int:
    """The server's own count for a chat request: a one-token completion's usage."""
    resp = httpx.post(f"{server.base_url}/chat/completions", timeout=300,
                      json={"messages": messages, "max_tokens": 1, "stream": False})
    resp.raise_for_status()
    return int(resp.json()["usage"]["prompt_tokens"])


def log_text(server: LocalServer) -> str:
    return Path(server.log_path).read_text(encoding="utf-8", errors="replace")
