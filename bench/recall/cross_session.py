"""Recall across sessions (issue 29, item 2): what a new session's request carries of facts and
preferences said in another one, and how often an ordinary message brings another session's
turns in when it should not.

The store: for each language, a working session (bench/fidelity_work_data's turns: pasted
source files, logs, JSON, stack traces, notes) with the held-out set's FACTS (--set) of that
language said once each among them, then "days of turns later" FILLER_SESSIONS more working
sessions in both languages. Then:

(a) fidelity: each fact asked from a NEW session, once in its statement's language and once in
    the other (questions written before the code, committed on their own), the engine running
    for real against tests/fakeserver.py on loopback; it counts when the fact's value is in the
    request. Four configs on copies of the same store: none (today: a new session knows
    nothing of the others), memory alone (the user said yes to every suggestion the memory
    made from the working sessions' turns), cross-session recall alone, and both.
(b) false recall: the share of ordinary messages whose request would carry another session's
    turns (the engine's own recall, as the gauge and the request compute it): bench/data's
    natural prose (half of its documents stored as sessions, the sentences of the other half
    asked), working-session messages, and the set's ORDINARY (within-session
    back-references among them). Also, as a stress figure, natural sentences that do point
    beyond the session ("Last week, ..."/"上周，...") but about nothing stored.
(c) time: recall across sessions for each question of (a), p50 and p95, on the store with and
    without a session of HUGE messages added (months of working turns in both languages),
    beside the plain full-text search across sessions the store offers (`search --all`'s
    search_sessions, same questions) on the same stores.

    python bench/recall/cross_session.py            figures for both languages (about a minute)
    python bench/recall/cross_session.py --seed 7
    python bench/recall/cross_session.py --set cross_language   the second held-out set
    python bench/recall/cross_session.py --fresh    no question sees the sessions of those before it
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.fidelity.fidelity_work_data import NOTES, working_turn  # noqa: E402
from bench.recall import cross_language_data, cross_session_data  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.memory.suggest import durable  # noqa: E402
from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.recall.sessions import recall_beyond, search_sessions  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from jarvis_tui.core.window.tokens import TokenCounter  # noqa: E402
from tests.engine_helpers import BASE  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402

WINDOW = 16384
TURNS_AROUND = 6  # working turns before and after each fact in its session
FILLER_SESSIONS = 6  # later working sessions, alternating languages
FILLER_TURNS = 30
HUGE = 30_000  # messages of the huge session of (c)
HUGE_WINDOW = 2048  # sizes its pastes: months of everyday turns, not 30,000 big pastes
DATA = Path(__file__).resolve().parents[1] / "data"
CONFIGS = {"none": (False, 0.0), "memory": (True, 0.0), "recall": (False, 0.15),
           "memory+recall": (True, 0.15)}
# Held-out sets of facts, questions and ordinary messages, each written before the code it
# measured: the first before cross-session recall, the second before cross-language matching.
SETS = {"original": cross_session_data, "cross_language": cross_language_data}
TITLES = {"en": "orders service: payments and ops", "zh": "订单服务：支付和运维"}


def build(path: Path, rng: random.Random, facts: list[dict]) -> list[str]:
    """The store of working sessions; the user's prose of the planting sessions (what the
    memory suggests from)."""
    said: list[str] = []
    with Store(path) as store:
        for language in ("en", "zh"):
            conv = store.create_conversation(title=TITLES[language], model="bench").id
            for fact in (f for f in facts if f["language"] == language):
                texts = [working_turn(language, rng, WINDOW) for _ in range(TURNS_AROUND)]
                texts.insert(rng.randrange(len(texts)), fact["statement"])
                for text in texts:
                    store.add_message(conv, Message("user", text))
                    store.add_message(conv, Message("assistant", reply(language)))
                said += texts
        for i in range(FILLER_SESSIONS):
            language = ("en", "zh")[i % 2]
            conv = store.create_conversation(title=f"work {i}", model="bench").id
            for _ in range(FILLER_TURNS):
                store.add_message(conv, Message("user", working_turn(language, rng, WINDOW)))
                store.add_message(conv, Message("assistant", reply(language)))
    return said


def reply(language: str) -> str:
    return "好的，我看一下，稍后给你改好的版本。" if language == "zh" else (
        "Got it, I'll take a look and come back with a fixed version.")


def with_memory(source: Path, target: Path, said: list[str]) -> int:
    """A copy of the store whose memory holds every suggestion made from `said`, as if the
    user said yes to each; how many."""
    shutil.copy(source, target)
    with Store(target) as store:
        found = durable(said)
        for kind, text in found:
            store.add_memory(text, kind=kind)
    return len(found)


def engine(path: Path, fake: FakeProvider, recall_budget: float) -> Engine:
    settings = replace(BASE, base_url=fake.base_url, context_window=WINDOW,
                       response_reserve=1024, system_reserve=512, recall_budget=recall_budget)
    provider = OpenAIProvider(fake.base_url, "", timeout=10, connect_timeout=2)
    return Engine(settings, Store(path), provider, None)


async def fidelity(stores: dict[str, Path], fake: FakeProvider, facts: list[dict],
                   fresh: bool = False) -> dict:
    """config -> (fact language, asked in the same or the other) -> [reached, asked]. Each
    question is asked in a session of its own, which stays in the store for the next ones,
    unless `fresh`: then each is asked of a copy of the store as built (the fake server's reply
    only echoes the question, so an earlier question's session holds the question's words and
    never the answer, and outranks the statement)."""
    out: dict[str, dict[tuple[str, str], list[int]]] = {}
    for config, (memory, budget) in CONFIGS.items():
        counts: dict[tuple[str, str], list[int]] = {}
        for fact in facts:
            for which, question in zip(("same", "other"), fact["questions"], strict=True):
                path = stores["memory" if memory else "plain"]
                if fresh:
                    path = Path(shutil.copy(path, path.with_suffix(".asked.db")))
                e = engine(path, fake, budget)
                async for _ in e.stream_reply(question):
                    pass
                body = fake.chat_requests[-1].body
                text = "\n".join(str(m.get("content")) for m in body["messages"])
                cell = counts.setdefault((fact["language"], which), [0, 0])
                cell[0] += fact["value"] in text
                cell[1] += 1
                await e.provider.aclose()
                e.store.close()
        out[config] = counts
    return out


def natural(rng: random.Random) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """bench/data's documents: half as sessions (a paragraph a turn), the sentences of the
    other half (a paragraph of code) as new messages: (sessions, [(kind, message)])."""
    docs = [(kind, block) for kind in ("chinese", "english", "mixed", "code")
            for block in (DATA / f"{kind}.txt").read_text(encoding="utf-8").split("\n----\n")]
    rng.shuffle(docs)
    sessions = [[p.strip() for p in re.split(r"\n\s*\n", d) if p.strip()] for _, d in docs[::2]]
    new = []
    for kind, d in docs[1::2]:
        parts = (re.split(r"\n\s*\n", d) if kind == "code"
                 else re.split(r"(?<=[。！？.!?])\s*|\n+", d))
        new += [(kind, p.strip()) for p in parts if len(p.strip()) > 8]
    return sessions, new


def false_recall(path: Path, rng: random.Random,
                 ordinary: dict[str, list[str]]) -> dict[str, tuple[int, int, int]]:
    """kind -> (messages that would carry another session's turns, that pointed beyond their
    session at all, messages)."""
    sessions, new = natural(rng)
    with Store(path) as store:
        for i, turns in enumerate(sessions):
            conv = store.create_conversation(title=f"notes {i}", model="bench").id
            for text in turns:
                store.add_message(conv, Message("user", text))
                store.add_message(conv, Message("assistant", "好的，明白了。Got it."))
    asked: list[tuple[str, str]] = [(f"natural {k}", t) for k, t in new]
    for language in ("en", "zh"):
        asked += [(f"working {language}", working_turn(language, rng, 4096))
                  for _ in range(100)]
        asked += [(f"working {language}", n) for n in NOTES[language]]
        asked += [(f"ordinary {language}", m) for m in ordinary[language]]
        back = "As I said above, " if language == "en" else "刚才说的，"
        asked += [(f"in-session back-ref {language}", back + n) for n in NOTES[language]]
    pointer = {"english": "Last week, ", "chinese": "上周，", "mixed": "上次，"}
    asked += [(f"points beyond, about nothing ({k})", pointer[k] + t)
              for k, t in new if k in pointer]
    from jarvis_tui.core.recall.sessions import points_beyond

    fake_url = "http://127.0.0.1:9"  # never asked: the gauge's path needs no server
    settings = replace(BASE, base_url=fake_url, context_window=WINDOW, response_reserve=1024,
                       system_reserve=512)
    e = Engine(settings, Store(path), OpenAIProvider(fake_url, ""), None)
    # Every stored message embedded, as the engine's worker leaves a store it has had time on.
    while e.front.meaning.index(None, limit=4096):
        pass
    out: dict[str, list[int]] = {}
    took: dict[bool, list[float]] = {True: [], False: []}  # pointed beyond -> gauge seconds
    for kind, text in asked:
        cell = out.setdefault(kind, [0, 0, 0])
        start = time.perf_counter()
        cell[0] += e.usage(pending=text).recalled > 0
        took[points_beyond(text)].append(time.perf_counter() - start)
        cell[1] += points_beyond(text)
        cell[2] += 1
    e.store.close()
    LATENCY.update({k: p95(v) for k, v in took.items() if v})
    return {k: (a, b, c) for k, (a, b, c) in out.items()}


LATENCY: dict[bool, float] = {}  # pointed beyond -> p95 seconds of the gauge's usage()


def add_huge_session(path: Path, rng: random.Random) -> None:
    """A session of HUGE messages: working turns in both languages and their replies."""
    with Store(path) as store:
        conv = store.create_conversation(title="everything, since spring", model="bench").id
        rows = []
        for i in range(HUGE):
            language = ("en", "zh")[i // 2 % 2]
            text = working_turn(language, rng, HUGE_WINDOW) if i % 2 == 0 else reply(language)
            rows.append((conv, i, "assistant" if i % 2 else "user", text, 1.0 + i))
        # At once, as the recall test fills its huge session: add_message commits each one,
        # and the bench times the reading, not 30,000 commits. The index triggers still run.
        with store._write("bench: the huge session") as db:
            db.executemany("INSERT INTO messages (conversation_id, seq, role, content, "
                           "created_at) VALUES (?, ?, ?, ?, ?)", rows)


def timed(path: Path, questions: list[str]) -> dict[str, list[float]]:
    """Seconds per question, asked from a new session: recall across sessions (the budget of
    config "recall") and the plain full-text search across sessions; and "found": 1.0 for each
    question recall brought a turn back for."""
    counter = TokenCounter("bench", exact=False)
    took: dict[str, list[float]] = {"recall": [], "search": [], "found": []}
    with Store(path) as store:
        cid = store.create_conversation(title="new", model="bench").id
        recall_beyond(store, cid, questions[0], counter, int(WINDOW * 0.15))  # a warm cache
        for question in questions:
            start = time.perf_counter()
            found = recall_beyond(store, cid, question, counter, int(WINDOW * 0.15))
            took["recall"].append(time.perf_counter() - start)
            took["found"].append(float(bool(found.turns)))
            start = time.perf_counter()
            search_sessions(store, question, beside=cid)
            took["search"].append(time.perf_counter() - start)
    return took


def p50(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main() -> None:
    global WINDOW
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--set", choices=SETS, default="original")
    parser.add_argument("--fresh", action="store_true",
                        help="ask each question of the store as built, without the sessions "
                             "of the questions asked before it")
    parser.add_argument("--window", type=int, default=WINDOW,
                        help="context window (default 16384; the recall budget is 15%% of it "
                             "and the pastes of the working sessions scale with it)")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: four facts, one short filler session, a small "
                             "huge session, five ordinary messages a language")
    args = parser.parse_args()
    WINDOW = args.window
    held_out = SETS[args.set]
    if args.quick:
        global FILLER_SESSIONS, FILLER_TURNS, HUGE
        FILLER_SESSIONS, FILLER_TURNS, HUGE = 1, 4, 300
        held_out = SimpleNamespace(FACTS=[f for lang in ("en", "zh") for f in [
            x for x in held_out.FACTS if x["language"] == lang][:2]], ORDINARY={
            k: v[:5] for k, v in held_out.ORDINARY.items()})
    rng = random.Random(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.db"
        said = build(plain, rng, held_out.FACTS)
        entries = with_memory(plain, Path(tmp) / "memory.db", said)
        fake = FakeProvider(limit=WINDOW).start()
        try:
            table = asyncio.run(fidelity({"plain": plain, "memory": Path(tmp) / "memory.db"},
                                         fake, held_out.FACTS, args.fresh))
        finally:
            fake.stop()
        shutil.copy(plain, Path(tmp) / "false.db")
        false = false_recall(Path(tmp) / "false.db", rng, held_out.ORDINARY)
        questions = [q for fact in held_out.FACTS for q in fact["questions"]]
        times = {"without": timed(plain, questions)}
        add_huge_session(plain, rng)
        times["with"] = timed(plain, questions)
    print(f"set {args.set}, window {WINDOW:,}"
          + ", each question asked of the store as built" * args.fresh)
    print(f"(a) cross-session fidelity: {len(held_out.FACTS)} facts and "
          "preferences, each asked from a new session in its own language and the other; "
          f"memory: {entries} suggestions accepted")
    cells = [(lang, which) for lang in ("en", "zh") for which in ("same", "other")]
    print(f"{'config':<15}" + "".join(f"{f'{lang} said, asked {w}':>24}" for lang, w in cells))
    for config, counts in table.items():
        print(f"{config:<15}" + "".join(
            f"{f'{counts[c][0]}/{counts[c][1]}':>24}" for c in cells))
    print("\n(b) false recall across sessions: messages of a new session whose request would "
          "carry another session's turns")
    print(f"{'messages':<42}{'recalled':>10}{'share':>8}{'pointed beyond':>16}")
    for kind, (hit, pointed, n) in sorted(false.items()):
        print(f"{kind:<42}{f'{hit}/{n}':>10}{hit / n:>8.1%}{pointed:>16}")
    ordinary = [v for k, v in false.items() if not k.startswith("points beyond")]
    hits, total = sum(v[0] for v in ordinary), sum(v[2] for v in ordinary)
    print(f"{'all ordinary messages':<42}{f'{hits}/{total}':>10}{hits / total:>8.1%}")
    print(f"\nthe gauge's usage() as the user types (store: {FILLER_SESSIONS + 2} working "
          "sessions and bench/data's): p95 "
          + ", ".join(f"{LATENCY[k] * 1000:.1f} ms {w}" for k, w in (
              (False, "for a message that points beyond nothing"),
              (True, "for one that points beyond its session")) if k in LATENCY))
    print(f"\n(c) time per question ({len(questions)} questions of (a), from a new session), "
          "ms p50 / p95")
    print(f"{'store':<46}{'recall across sessions':>24}{'full-text search':>20}"
          f"{'recalled':>10}")
    for which, said in (("without", "as built"),
                        ("with", f"with a {HUGE:,}-message session added")):
        cells = [f"{p50(times[which][k]) * 1000:.1f} / {p95(times[which][k]) * 1000:.1f}"
                 for k in ("recall", "search")]
        recalled = f"{sum(times[which]['found']):.0f}/{len(questions)}"
        print(f"{said:<46}{cells[0]:>24}{cells[1]:>20}{recalled:>10}")
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
