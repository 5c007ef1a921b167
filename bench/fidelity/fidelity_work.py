"""Details that survive compaction in a working session (issue 26): facts said once, early, in
the user's own prose, then a coding session's turns (pasted source files, logs, JSON, stack
traces, git tool calls, short notes) until the session has compacted 1, 3 and 5 times; at each
point every fact is asked about, once in its own language and once in the other, each question
on a copy of the session's database. It counts when the fact's value is in the request the
fake server received: in the summary, the details ledger, a recalled turn, the window, or a
tool result. bench/fidelity/fidelity.py does this with everyday talk between the facts; here the
ledger meets the identifiers of pasted code, which is where it fails.

Each window (4,096, 16,384, 131,072) and each config: jarvis-tui with its defaults, and the
summary alone (details_max_tokens=0, recall_budget=0, and the model's history search off if
the engine has one), on the same turns and the same lossy summariser (bench/fidelity/fidelity.py's:
it keeps the gist of every sentence and drops details at the rates measured on a leading coding
agent; ports, phone numbers, codes and any kind it does not know at the rate of numbers). The
engine runs for real: OpenAIProvider over loopback to tests/fakeserver.py's FakeProvider whose
limit is the window, a SQLite store, mcp-server-git through McpHub on a repository of
tests.mcp_servers.make_git_repo (git_log, git_show and git_diff allowed).

Question sets: "tuning" (bench/fidelity_work_data.FACTS) and "fresh" (bench/
fidelity_work_fresh.FRESH, held out: written by someone else; only aggregate figures of it are
ever printed).

    python bench/fidelity/fidelity_work.py                    every window, both sets
    python bench/fidelity/fidelity_work.py --set tuning       the tuning facts only
    python bench/fidelity/fidelity_work.py --quick            4,096 only, English only
    python bench/fidelity/fidelity_work.py --window 16384 --sessions 2
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, fields, replace
from itertools import cycle
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.fidelity import fidelity_work_report  # noqa: E402
from bench.fidelity.fidelity import BASELINE, KEEP, OURS, SYSTEM, Planted, serve  # noqa: E402
from bench.fidelity.fidelity import where as where_in_request  # noqa: E402
from bench.fidelity.fidelity_work_data import FACTS, paste, paste_tokens, problems, working_turn  # noqa: E402
from bench.fidelity.fidelity_work_report import Outcome, report  # noqa: E402
from bench.shared.tools_clients import Recorder  # noqa: E402
from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.details.ledger import HEADER, entry, section, split  # noqa: E402
from jarvis_tui.core.engine.budgeting import budget_for, details_room  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.recall.turns import RECALL_HEADER  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.settings.mcp import McpServerConfig  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from jarvis_tui.core.tools.mcp_client import McpHub  # noqa: E402
from jarvis_tui.core.window.fit import NEW_MESSAGE_HEADER  # noqa: E402
from tests.engine_helpers import is_summary_request  # noqa: E402
from tests.fake_tools import ToolReply  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402
from tests.mcp_servers import make_git_repo  # noqa: E402

WINDOWS = (4096, 16384, 131072)
CHECKPOINTS = (1, 3, 5)
MAX_TURNS = 160  # a session that has not compacted 5 times by then stops (reported)
FACTS_PER_TURN = 2
TURN_TIMEOUT = 300.0  # seconds: a turn that takes longer counts as failed, never a hang
GIT_TOOLS = ("git_log", "git_show", "git_diff")
CONFIGS = (OURS, BASELINE)
LEDGER_ROOM: int | None = None  # --ledger-room: the room held at this many tokens


def with_ledger_room(s: Settings, window: int, tokens: int) -> Settings:
    """`s` with the ledger's room (budgeting.details_room) at `tokens` at this window, below the
    floor or above it: the cap holds it down, the share lifts it. Settings, not code: the sweep
    in bench/README.md ("After issue 26") was made by editing the floor."""
    budget = budget_for(s, window).tokens
    s = replace(s, details_max_tokens=tokens, details_share=min(0.25, (tokens + 0.5) / budget))
    if details_room(s, budget_for(s, window)) != tokens:
        sys.exit(f"--ledger-room {tokens}: at {window:,} the room is at most {budget // 4:,}")
    return s


def settings(base_url: str, config: str, window: int) -> Settings:
    s = Settings(base_url=base_url, model="fake", system_prompt=SYSTEM, context_window=window)
    if config == BASELINE:
        off: dict[str, object] = {"details_max_tokens": 0, "recall_budget": 0.0}
        if "history_search_tool" in {f.name for f in fields(Settings)}:
            off["history_search_tool"] = False
        s = replace(s, **off)
    elif LEDGER_ROOM is not None:
        s = with_ledger_room(s, window, LEDGER_ROOM)
    return s


def planted(facts: list[dict]) -> list[Planted]:
    """The facts as the lossy summariser knows details: kinds it has no rate for (port, phone,
    code, ...) are dropped at the rate of numbers."""
    return [Planted(f["kind"] if f["kind"] in KEEP else "number", f["language"],
                    f["statement"], f["value"], f["questions"][0]) for f in facts]


def where(request: dict, value: str) -> str | None:
    """bench/fidelity.where, with the recalled turns found in the newest user message whatever
    follows it (tool calls and results), and "tool" for a value only in tool results."""
    found = where_in_request(request, value)
    if found != "window":
        return found
    messages = request["messages"]
    newest = next((str(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    if newest.startswith(RECALL_HEADER) and value in newest.partition(NEW_MESSAGE_HEADER)[0]:
        return "recall"
    if not any(value in str(m.get("content")) for m in messages[1:] if m["role"] != "tool"):
        return "tool"
    return found


class WorkFake(FakeProvider):
    """The fake model runs the `call` lines of what the user writes now, not those of turns
    recall quoted in front of it: a model shown a turn as a recollection does not run its
    calls again."""

    def tool_reply(self, view: tuple[str, list[str]], messages: object, offered: bool,
                   prefix: str) -> ToolReply | None:
        text, results = view
        if text.startswith(RECALL_HEADER):
            text = text.partition(NEW_MESSAGE_HEADER)[2]
        return super().tool_reply((text, results), messages, offered, prefix)


# ---- the turns ---------------------------------------------------------------------------------

def planting_turns(facts: list[dict], language: str, rng: Random, window: int, repo: Path,
                   values: list[str]) -> list[str]:
    """The first turns: every fact said once, two to a turn; those said with a paste or a tool
    call ("with") in a turn that has one, and every other turn of the rest with a paste too.
    Pastes here are at most a fifth of the window, so no fact is cut from its own turn; none
    says any fact's value."""
    groups: dict[str | None, list[dict]] = defaultdict(list)
    for f in facts:
        groups[f.get("with")].append(f)
    plan: list[tuple[list[dict], str | None]] = []
    for kind in sorted(k for k in groups if k):
        plan += [(groups[kind][i:i + FACTS_PER_TURN], kind)
                 for i in range(0, len(groups[kind]), FACTS_PER_TURN)]
    beside = cycle(("source", None, "log", None, "json", None, "trace", None, "git", None))
    plan += [(groups[None][i:i + FACTS_PER_TURN], next(beside))
             for i in range(0, len(groups[None]), FACTS_PER_TURN)]
    rng.shuffle(plan)
    turns = []
    for chunk, kind in plan:
        prose = ("" if language == "zh" else " ").join(f["statement"] for f in chunk)
        while kind is not None:
            tokens = min(paste_tokens(rng, window), window // 5)
            pasted = paste(kind, language, rng, tokens, repo)
            if not any(v in pasted for v in values):
                prose += "\n" + pasted
                break
        turns.append(prose)
    return turns


def filler(language: str, rng: Random, window: int, repo: Path, values: list[str]) -> str:
    """A working turn that says none of the facts (a value found in a paste by chance would be
    counted as remembered)."""
    while True:
        text = working_turn(language, rng, window, repo)
        if not any(v in text for v in values):
            return text


# ---- one session -------------------------------------------------------------------------------

@dataclass
class Bench:
    fake: FakeProvider
    provider: OpenAIProvider
    hub: McpHub
    repo: Path
    tmp: Path
    summaries: list[int]


async def probe(b: Bench, s: Settings, db: Path, conversation: int, box: Recorder,
                question: str, value: str) -> str | None:
    """Asks `question` on a copy of the session: where `value` was in the request."""
    copy = b.tmp / "probe.db"
    copy.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    with Store(copy) as store:
        engine = Engine(s, store, b.provider, conversation, sleep=_no_wait, tools=box)
        first = len(b.fake.requests)
        async for _ in engine.stream_reply(question):
            pass
    chats = [r for r in b.fake.requests[first:] if r.path.endswith("/chat/completions")
             and r.status == 200 and not is_summary_request(r.body)]
    return where(chats[-1].body, value) if chats else None


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


def ledger_tokens(engine: Engine, request: dict) -> int | None:
    """Tokens of the ledger in a request that carries a summary (None: no summary yet)."""
    messages = request.get("messages") or []
    system = messages[0].get("content") if messages and messages[0]["role"] == "system" else ""
    if not isinstance(system, str) or system == SYSTEM:
        return None
    _, marker, tail = system.partition("\n\n" + HEADER)
    return engine.counter.text(marker + tail) if marker else 0


async def run_turn(engine: Engine, text: str, out: Outcome) -> int:
    """One turn; the compactions it made."""
    made = 0
    try:
        async with asyncio.timeout(TURN_TIMEOUT):
            async for event in engine.stream_reply(text):
                if isinstance(event, ev.CompactionFinished):
                    made += 1
                    body, ledger = split(engine.summary.content)
                    out.sizes.append((engine.counter.text(body), engine.summary_max_tokens,
                                      engine.counter.text(section(ledger)) if ledger else 0,
                                      engine.details_max_tokens))
                elif isinstance(event, ev.Failed):
                    out.failed += 1
    except TimeoutError:
        out.failed += 1
    out.turns += 1
    return made


async def session(b: Bench, window: int, config: str, facts: list[dict], language: str,
                  seed: int, out: Outcome, every_value: list[str]) -> None:
    rng = Random(f"{language}-{seed}")  # the same turns for both configs
    s = settings(b.fake.base_url, config, window)
    db = b.tmp / f"{window}-{config}-{language}-{seed}.db"
    box = Recorder(b.hub)
    started = time.perf_counter()
    with Store(db) as store:
        engine = Engine(s, store, b.provider, sleep=_no_wait, tools=box)
        out.ledger_budget = engine.details_max_tokens
        turns = planting_turns(facts, language, rng, window, b.repo, every_value)
        # Counted from the last fact said: at 4,096 tokens a session compacts several times
        # while the facts are still being said, and "after 1" must mean every fact went through
        # at least one.
        compactions, checkpoints, done, before = 0, list(CHECKPOINTS), 0, 0
        while checkpoints and done < MAX_TURNS:
            saying = bool(turns)
            text = turns.pop(0) if turns else filler(language, rng, window, b.repo, every_value)
            first, asked = len(b.fake.requests), b.summaries[0]
            compactions += await run_turn(engine, text, out)
            out.summaries += b.summaries[0] - asked  # not the probes': they compact copies
            done += 1
            if saying:
                before = compactions
            for r in b.fake.requests[first:]:
                if r.status == 200 and r.path.endswith("/chat/completions") \
                        and not is_summary_request(r.body):
                    tokens = ledger_tokens(engine, r.body)
                    if tokens is not None:
                        out.ledger_per_request.append(tokens)
            if turns or compactions - before < checkpoints[0]:
                continue
            passed = [p for p in checkpoints if compactions - before >= p]
            checkpoints = checkpoints[len(passed):]
            for f in facts:
                for rel, question in zip(("same", "other"), f["questions"], strict=True):
                    found = await probe(b, s, db, engine.conversation.id, box, question,
                                        f["value"])
                    for point in passed:
                        out.answered[(point, rel, f["language"], f["kind"])].append(
                            found is not None)
                        out.source[(point, found or "missing")] += 1
            for point in passed:
                out.reached[point].append(compactions - before)
        out.while_said.append(before)
        if engine.summary is not None:
            _, ledger = split(engine.summary.content)
            ours = sum(any(v in entry(d) for v in every_value) for d in ledger)
            out.ledger_lines.append((ours, len(ledger) - ours))
    out.tool_calls += len(box.outputs)
    out.tool_errors += sum(r.is_error for _, r in box.outputs)
    out.seconds += time.perf_counter() - started


# ---- the run -----------------------------------------------------------------------------------

def question_sets(wanted: str | None) -> dict[str, list[dict]]:
    sets: dict[str, list[dict]] = {}
    if wanted in (None, "tuning"):
        sets["tuning"] = FACTS
    if wanted in (None, "fresh"):
        try:
            from bench.fidelity.fidelity_work_fresh import FRESH
        except ImportError:
            print("fresh set: bench/fidelity/fidelity_work_fresh.py is not there, skipped")
        else:
            sets["fresh"] = FRESH
    for name, facts in sets.items():
        wrong = problems(facts)
        if wrong:
            sys.exit(f"{name} set: {len(wrong)} problems, first: {wrong[0]}")
    return sets


async def run_window(window: int, sets: dict[str, list[dict]], languages: tuple[str, ...],
                     sessions: int, hub: McpHub, repo: Path
                     ) -> dict[tuple[str, str], Outcome]:
    results: dict[tuple[str, str], Outcome] = {}
    summaries = [0]
    with WorkFake(limit=window) as fake, tempfile.TemporaryDirectory() as tmp:
        async with OpenAIProvider(fake.base_url) as provider:
            b = Bench(fake, provider, hub, repo, Path(tmp), summaries)
            for name, facts in sets.items():
                serve(fake, planted(facts), summaries)
                values = [f["value"] for f in facts]
                for config in CONFIGS:
                    out = results[(config, name)] = Outcome()
                    for language in languages:
                        said = [f for f in facts if f["language"] == language]
                        for seed in range(sessions):
                            await session(b, window, config, said, language, seed, out, values)
                            fake.requests.clear()  # a long run would keep every body
    return results


async def main_async(windows: tuple[int, ...], wanted: str | None, languages: tuple[str, ...],
                     sessions: int) -> None:
    sets = question_sets(wanted)
    if not sets:
        return
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_git_repo(Path(tmp) / "repo", commits=60)
        git = McpServerConfig("git", "stdio", command=sys.executable, allow=GIT_TOOLS,
                              args=("-m", "mcp_server_git", "--repository", str(repo)))
        async with McpHub([git], start_timeout=120.0) as hub:
            (status,) = await hub.start()
            if status.state != "ready":
                sys.exit(f"mcp-server-git did not start: {status.error}")
            for window in windows:
                began = time.perf_counter()
                results = await run_window(window, sets, languages, sessions, hub, repo)
                report(window, results, sets, languages, sessions,
                       time.perf_counter() - began)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, action="append", help="a window (repeatable)")
    parser.add_argument("--set", choices=("tuning", "fresh"), help="one question set only")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: 4,096, English, the tuning set, one compaction")
    parser.add_argument("--sessions", type=int, default=1, help="sessions per language")
    parser.add_argument("--ledger-room", type=int, metavar="TOKENS",
                        help="hold jarvis-tui's ledger room at this many tokens (the default: "
                             "a share of the budget with a floor)")
    args = parser.parse_args()
    global LEDGER_ROOM, CHECKPOINTS
    LEDGER_ROOM = args.ledger_room
    if args.quick:
        CHECKPOINTS = fidelity_work_report.CHECKPOINTS = (1,)
        args.set = args.set or "tuning"
    windows = tuple(args.window or ((4096,) if args.quick else WINDOWS))
    languages = ("en",) if args.quick else ("en", "zh")
    asyncio.run(main_async(windows, args.set, languages, args.sessions))


if __name__ == "__main__":
    main()
