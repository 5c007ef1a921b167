"""The real thing: llama-cpp-python's server with the local model (Qwen2.5-Coder 0.5B) on loopback.

One server with a 1,024-token window serves the whole e2e session: loading takes seconds, but a
fresh one per test would add up. Each test talks to it through the same code a user runs. The
window is small on purpose: reading the prompt is what takes the time on two cores (about 76
tokens a second), and every behaviour under test (a full window, a refusal, compaction) comes
at half the tokens of a 2,048 one.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
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


def litellm_python() -> str | None:
    """A Python that can import litellm (for the proxy e2e test): JARVIS_LITELLM_PYTHON (a venv
    of its own: litellm[proxy] is about 750 MB), or the one running the tests if it can."""
    named = os.environ.get("JARVIS_LITELLM_PYTHON")
    if named:
        # Absolute: the proxy starts in a folder of its own, where a relative path means nothing.
        path = Path(named).absolute()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    try:
        return sys.executable if importlib.util.find_spec("litellm") is not None else None
    except ImportError:
        return None


# Not collected without litellm: an optional tool, not a failure, and nothing shows as skipped.
collect_ignore = [] if litellm_python() else ["test_litellm_proxy_e2e.py"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # One worker runs them all (with `--dist loadgroup`, as README's test command does), so one
    # llama server reads their prompts instead of one per worker fighting for the two cores.
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(pytest.mark.xdist_group("llama_server"))
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
