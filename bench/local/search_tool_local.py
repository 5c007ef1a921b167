"""search_history with the bundled local model, for the record: does a small local model call the
tool when asked about a turn folded into the summary?

A short session with the real llama-cpp-python server and the bundled GGUF
(Qwen2.5-Coder-0.5B-Instruct, jarvis_tui/core/providers/local_server.py; the provider as the app
makes it for that model, so calls written as text count): a turn stating a fact, two more turns,
a manual compaction that folds the first turns into the model's own summary (the details ledger
off, so the summary is all the model has), then QUESTIONS questions about the folded fact.
Recall is off (recall_budget 0), so the tool is the only way back. Printed: how many questions
the model answered by calling search_history, whether the fact reached its answer, beside the
same session with the tool off (the baseline). Replies are capped (max_tokens) to keep it to a
few minutes on two cores.

    .venv/bin/python bench/local/search_tool_local.py [--questions N]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LOCAL_N_CTX,
    LocalServer,
    free_port,
    llama_cpp_command,
    local_model_path,
)
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.history_search import HISTORY_TOOL

WINDOW = LOCAL_N_CTX  # the app's window for the bundled model
REPLY_TOKENS = 64  # max_tokens: two cores write ~20 tokens a second
FACT = ("For the record: the staging server listens on port 8443, and Anna set it up on "
        "Monday.")
ANSWER = "8443"
EARLY = [FACT, "Thanks. Can you remind me what a context window is, in one sentence?",
         "And what does a summary do for a long conversation, in one sentence?"]
QUESTIONS = [
    "Which port does the staging server listen on? Search the earlier turns if you need to.",
    "What port did I give you for the staging server earlier?",
    "Look it up in our earlier conversation: who set up the staging server?",
    "Use the search_history tool to find the staging server's port, then tell me.",
    "我之前说过 staging 服务器的端口是多少？",
    "请用 search_history 工具查一下 staging 服务器的端口。",
]
QUICK = False
SETTINGS = Settings(model=LOCAL_MODEL_NAME, context_window=WINDOW,
                    response_reserve=REPLY_TOKENS, system_reserve=WINDOW // 16,
                    keep_recent_turns=1, summary_max_tokens=96, details_max_tokens=0,
                    recall_budget=0.0, max_retries=1, request_timeout=300, connect_timeout=10,
                    first_token_timeout=300, reply_timeout=300)


@dataclass
class Tally:
    name: str
    questions: int = 0
    called: int = 0  # questions whose round called search_history at least once
    calls: int = 0  # every call of it
    found: int = 0  # calls whose result held the fact
    answered_with_fact: int = 0
    left_out: list[str] = field(default_factory=list)  # the server refused the tool
    offered: bool = False  # the tool was in the engine's definitions during the questions
    seconds: float = 0.0


async def session(base_url: str, db: Path, name: str, tool: bool, questions: list[str]) -> Tally:
    settings = replace(SETTINGS, base_url=base_url, history_search_tool=tool)
    provider = make_provider(settings)
    engine = Engine(settings, Store(db), provider)
    tally = Tally(name)
    started = time.perf_counter()
    try:
        for text in EARLY[:2] if QUICK else EARLY:
            await _round(engine, text, tally)
        folded = [e async for e in engine.compact(reason="manual")]
        if not any(isinstance(e, ev.CompactionFinished) for e in folded):
            raise SystemExit(f"{name}: the compaction did not happen: {folded}")
        if not any(m.covered and m.content == FACT for m in engine.messages):
            raise SystemExit(f"{name}: the fact was not folded into the summary")
        tally.offered = any(d["name"] == HISTORY_TOOL for d in engine.front.definitions())
        for text in questions:
            events = await _round(engine, text, tally)
            tally.questions += 1
            ours = [e for e in events if isinstance(e, ev.ToolFinished)
                    and e.call.name == HISTORY_TOOL]
            tally.called += bool(ours)
            tally.calls += len(ours)
            tally.found += sum(FACT in e.result.content for e in ours)
            last = events[-1]
            if isinstance(last, ev.Finished) and ANSWER in last.message.content:
                tally.answered_with_fact += 1
    finally:
        await provider.aclose()
        engine.store.close()
    tally.seconds = time.perf_counter() - started
    return tally


async def _round(engine: Engine, text: str, tally: Tally) -> list[ev.Event]:
    events = [e async for e in engine.stream_reply(text)]
    tally.left_out += [e.why for e in events if isinstance(e, ev.ToolLeftOut)]
    return events


async def main() -> None:
    global SETTINGS, QUICK
    n = len(QUESTIONS)
    # --quick, to see it runs: two early turns, one question, the tool on, short replies
    quick = QUICK = "--quick" in sys.argv
    if quick:
        n, SETTINGS = 1, replace(SETTINGS, response_reserve=16, summary_max_tokens=48)
    if "--questions" in sys.argv:
        n = int(sys.argv[sys.argv.index("--questions") + 1])
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(n)]
    print(f"the bundled model ({LOCAL_MODEL_NAME}, llama-cpp-python server), context {WINDOW:,}, "
          f"replies capped at {REPLY_TOKENS} tokens, recall off; {len(EARLY)} early turns "
          f"folded by a manual compaction, then {n} questions about the fact in the first")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalServer(llama_cpp_command(local_model_path(), WINDOW, "127.0.0.1", port),
                             port=port, log_path=Path(tmp) / "llama.log")
        await server.start()
        try:
            runs = [await session(server.base_url, Path(tmp) / f"{name}.db", name, tool,
                                  questions)
                    for name, tool in (("search_history on", True),
                                       ("tool off (baseline)", False))[:1 if quick else 2]]
        finally:
            server.stop()
    print(f"\n{'':22}{'offered':>8}{'called':>9}{'calls':>7}{'found':>7}{'answer has':>12}"
          f"{'s':>6}")
    print(f"{'':22}{'':>8}{'(rounds)':>9}{'':>7}{'fact':>7}{ANSWER:>12}")
    for t in runs:
        print(f"{t.name:22}{'yes' if t.offered else 'no':>8}{t.called:>5}/{t.questions:<3}"
              f"{t.calls:>7}{t.found:>7}{t.answered_with_fact:>8}/{t.questions:<3}"
              f"{t.seconds:>6.0f}")
        for why in t.left_out:
            print(f"  the server refused the tool: {why}")
    print("\nfor the record, not a target: the GGUF's own template renders the tool "
          "definitions; a call counts when the app would run it")


if __name__ == "__main__":
    asyncio.run(main())
