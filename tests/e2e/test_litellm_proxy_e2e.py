"""The real LiteLLM proxy on loopback in front of the real llama-cpp-python server (N_CTX),
with jarvis-tui told 8,192 (the proxy does not say the window). Over the real window, the proxy
streams an empty reply that "stopped"; jarvis-tui must see the overflow behind it, learn the
real window and compact, turn after turn.

Needs, besides the `local` extra: the `litellm[proxy]` package, importable by the Python that
runs the tests, or by the Python that JARVIS_LITELLM_PYTHON names (a venv of its own: the proxy
pulls in about 750 MB). Without either, tests/e2e/conftest.py skips it with the reason, except
under CI (CI=true), where it fails with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jarvis_tui.core.providers.local_server import LocalServer, free_port
from tests.e2e.conftest import N_CTX
from tests.faults.proxy import TOLD_WINDOW, turn_texts

pytestmark = pytest.mark.e2e

MASTER_KEY = "sk-jarvis-e2e-proxy-key"  # the proxy refuses to start without one
START_TIMEOUT = 180.0  # the proxy imports for a long while on a busy 2-core machine
# Of about 500 tokens each, against the 1,024-token server. Turn 2 overflows behind the proxy's
# silence: the window is learned, turn 1 compacted and the turn sent again. Turn 3, a process of
# its own, starts from the learned window and folds the summary into a new one. (The fake proxy
# of tests/faults/proxy.py runs 9 such turns; here each costs the real model about 25 s.)
TURNS = 3


@pytest.fixture(scope="module")
def litellm_proxy(litellm: str, llama_server: LocalServer,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The proxy's base URL; the model behind it is called "local". `litellm` first: without
    it the test fails (or was skipped) before the llama server is started."""
    folder = tmp_path_factory.mktemp("litellm")
    config = folder / "config.yaml"
    config.write_text("model_list:\n  - model_name: local\n    litellm_params:\n"
                      "      model: openai/local\n"
                      f"      api_base: {llama_server.base_url}\n      api_key: none\n",
                      encoding="utf-8")
    port = free_port()
    log = (folder / "proxy.log").open("wb")
    # The cost map comes from the package, not the network; no telemetry either.
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": MASTER_KEY,
           "LITELLM_TELEMETRY": "False", "PATH": "/usr/bin:/bin", "HOME": str(folder)}
    proc = subprocess.Popen([litellm, "-c", "from litellm import run_server; run_server()",
                             "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                            cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(proc, base, folder / "proxy.log")
        yield f"{base}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_until_up(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    end = time.monotonic() + START_TIMEOUT
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"the LiteLLM proxy exited ({proc.returncode}): "
                        f"{log.read_text(errors='replace')[-600:]}")
        try:
            if httpx.get(f"{base}/health/liveliness", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    pytest.fail(f"the LiteLLM proxy did not answer within {START_TIMEOUT:g}s")


def test_an_overflow_the_proxy_turns_into_an_empty_reply_is_compacted(
        home: dict[str, str], litellm_proxy: str, tmp_path: Path):
    config = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    # Told a window 4x the real one, as a user behind a proxy would be; small replies keep the
    # run short.
    config.write_text(f"context_window = {TOLD_WINDOW}\nresponse_reserve = 32\n"
                      f"system_reserve = 128\nsummary_max_tokens = 64\n"
                      f'api_key = "{MASTER_KEY}"\n', encoding="utf-8")
    config.chmod(0o600)  # it holds a key: jarvis-tui warns otherwise
    env = home
    flags = ["--base-url", litellm_proxy, "--model", "local"]
    texts = turn_texts(TURNS)
    notices = []
    for i, text in enumerate(texts):
        done = subprocess.run([*_jarvis(), *flags, "ask", text], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"turn {i + 1} failed: {done.stderr}"
        assert "Traceback" not in done.stderr
        notices.append(done.stderr)
    exported = subprocess.run([*_jarvis(), "export", "--format", "json"], env=env,
                              capture_output=True, text=True, timeout=120)
    data = json.loads(exported.stdout)
    replies = [m for m in data["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == texts
    assert len(replies) == len(texts)
    assert all(m["status"] == "complete" for m in replies), [m["status"] for m in replies]
    # The proxy's silence was seen through: the real window learned and turns compacted. (The
    # demo model does send empty replies of its own now and then: those stay empty.)
    said = "\n".join(notices)
    assert f"context window is {N_CTX} tokens" in said, said[-2000:]
    assert data["summaries"], "no compaction behind the proxy"


def _jarvis() -> list[str]:
    return [sys.executable, "-m", "jarvis_tui"]
