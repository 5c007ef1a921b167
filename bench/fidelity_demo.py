"""bench/fidelity.py --demo: the embedded demo model (llama-cpp-python's server with the Gemma 3
270M GGUF) writes every summary, for the record; one session per language and config.

The chat replies still come from the fake server (the demo model would take minutes per turn on
two cores and its replies are not what is measured); each summary request the engine sends is
passed on, unchanged, to the real llama.cpp server, and its answer is the summary.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from jarvis_tui.core.local_server import (
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)

WINDOW = 4096
SUMMARY_TIMEOUT = 600.0  # seconds for one summary on two cores


async def demo_results(run: Callable[..., Awaitable[tuple[object, int]]]) -> dict[str, object]:
    """`run(config, sessions, summarise)` for ours and the baseline, with the demo model as the
    summariser."""
    from fidelity import BASELINE, OURS

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(llama_cpp_command(local_model_path(), WINDOW, "127.0.0.1", port),
                             port=port, log_path=Path(tmp) / "llama.log")
        await server.start()
        client = httpx.Client(base_url=server.base_url, timeout=SUMMARY_TIMEOUT)
        seconds: list[float] = []

        def summarise(body: dict) -> str:
            started = time.perf_counter()
            answer = client.post("/chat/completions", json={
                "model": LOCAL_MODEL_NAME, "messages": body["messages"],
                "max_tokens": body.get("max_tokens") or 512, "temperature": 0})
            seconds.append(time.perf_counter() - started)
            answer.raise_for_status()
            return answer.json()["choices"][0]["message"]["content"] or ""

        results = {}
        try:
            for config in (OURS, BASELINE):
                out, calls = await run(config, 1, summarise)
                results[f"{config} (demo)"] = out
                print(f"{config} with the demo model: {out.turns} turns, {out.failed} failed, "
                      f"{calls} summary requests, {sum(seconds):.0f} s summarising so far")
        finally:
            client.close()
            server.stop()
    return results
