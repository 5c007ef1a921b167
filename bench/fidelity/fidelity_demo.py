"""bench/fidelity/fidelity.py --demo: the bundled local model (llama-cpp-python's server with the
Qwen2.5-Coder-0.5B-Instruct GGUF the `local` extra installs) writes every summary; one session
per language and config.

The sessions are set up as the app runs that model: the chat model is LOCAL_MODEL_NAME, so the
engine asks for summaries in the plain style, at the chat's front (the prefix form), with no
repair request, at LOCAL_SUMMARY_SAMPLING. The chat replies still come from the fake server (the
model would take a minute per turn on two cores and its replies are not what is measured); each
summary request the engine sends is passed on, unchanged but for the sampling the app's provider
adds, to the real llama.cpp server, and its answer is the summary.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LOCAL_SUMMARY_SAMPLING,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)

WINDOW = 4096
# The engine counts with the fake server's tokenizer, not Qwen's: a front that fits the fake
# server's 4,096 tokens may not fit Qwen's, so its server gets room for the difference.
N_CTX = WINDOW + 1024
SUMMARY_TIMEOUT = 600.0  # seconds for one summary on two cores


async def demo_results(run: Callable[..., Awaitable[tuple[object, int]]],
                       configs: tuple[str, ...], n_ctx: int = N_CTX,
                       max_tokens: int | None = None) -> dict[str, object]:
    """`run(config, sessions, summarise, model)` for each config (ours and the baseline), with
    the bundled model as the summariser. The configs are given, not imported: fidelity.py
    imports this module. `max_tokens` caps every summary below what the engine asks."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(llama_cpp_command(local_model_path(), n_ctx, "127.0.0.1", port),
                             port=port, log_path=Path(tmp) / "llama.log")
        await server.start()
        client = httpx.Client(base_url=server.base_url, timeout=SUMMARY_TIMEOUT)
        seconds: list[float] = []

        def summarise(body: dict) -> str:
            started = time.perf_counter()
            answer = client.post("/chat/completions", json={
                "model": LOCAL_MODEL_NAME, "messages": body["messages"],
                "max_tokens": max_tokens or body.get("max_tokens") or 512,
                **LOCAL_SUMMARY_SAMPLING})
            seconds.append(time.perf_counter() - started)
            answer.raise_for_status()
            return answer.json()["choices"][0]["message"]["content"] or ""

        results = {}
        try:
            for config in configs:
                out, calls = await run(config, 1, summarise, LOCAL_MODEL_NAME)
                results[f"{config} (local)"] = out
                print(f"{config} with {LOCAL_MODEL_NAME} summarising: {out.turns} turns, "
                      f"{out.failed} failed, {calls} summary requests, "
                      f"{sum(seconds):.0f} s summarising so far", flush=True)
        finally:
            client.close()
            server.stop()
    return results
