"""The local model started by jarvis-tui itself, as a newcomer without a provider or key gets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_tui.core.messages import COMPLETE
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)
from tests.e2e.conftest import N_CTX, REAL_TIMEOUTS
from tests.ui.app_helpers import SIZE, make_app, notices, send_and_wait, views, wait_for

pytestmark = pytest.mark.e2e


def model_servers() -> set[int]:
    found = subprocess.run(["pgrep", "-f", "llama_cpp.server"], capture_output=True, text=True)
    return {int(pid) for pid in found.stdout.split()}


def test_ask_with_nothing_configured_runs_the_local_model(home: dict[str, str]):
    """A newcomer's first start: the model's file is assembled into the (empty) cache, checked,
    loaded, and the question answered."""
    before = model_servers()
    done = subprocess.run([sys.executable, "-m", "jarvis_tui", "ask", "Hello! 你好！"], env=home,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    chosen = f"so a small model runs on this machine ({LOCAL_MODEL_NAME})"
    assert chosen in done.stderr
    assert "preparing the local model's file (469 MB, checked by sha256; once)" in done.stderr
    assert "the local model is ready at http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout.strip()
    assert model_servers() == before  # its server stopped with it
    cached = Path(home["XDG_CACHE_HOME"]) / "jarvis-tui" / "models"
    gguf = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert sorted(p.name for p in cached.iterdir()) == [gguf, f"{gguf}.verified"]


async def test_the_app_loads_the_model_on_screen_then_answers(tmp_path):
    port = free_port()
    server = LocalServer(llama_cpp_command(local_model_path(), N_CTX, "127.0.0.1", port),
                         port=port, log_path=tmp_path / "server.log")
    app = make_app(server.base_url, tmp_path, local_server=server, model=LOCAL_MODEL_NAME,
                   context_window=N_CTX, response_reserve=64, system_reserve=128,
                   **REAL_TIMEOUTS)
    seen: list[str] = []

    def ready() -> bool:
        seen.append(str(app.chat.query_one("#status").content))
        return any(n.startswith("🖥") for n in notices(app))

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, ready, "the model to load", 180)
        assert any("Loading the local model" in line for line in seen)
        await send_and_wait(pilot, "What is a context window? 什么是上下文窗口？", 300)
        reply = views(app)[-1].message
        assert reply.role == "assistant" and reply.status == COMPLETE
        assert not any(n.startswith("✖") for n in notices(app))
        pid = server.process.pid
    assert pid not in model_servers()
