"""LoCoMo (issue 40, "Benchmark"): does the request the server receives for a question about a
long two-person conversation carry the turns that answer it? Rows: the plain client, recall by
words alone, and the defaults (recall by meaning); `--set` adds a row with one setting changed.

DIR holds LoCoMo conversations as JSON (../shared/locomo: read its README; the data is never
copied into the repository). For each conversation, window and row it reports, per category
(1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 adversarial is left out) and overall:
- evidence-all: every evidence turn of the question is in the request, verbatim or as its five
  rarest content words (rarity over the conversation) within a short span (locomo_data.Scorer);
- answer-in-request: the answer string, case-insensitive (a weak signal: answers are often
  paraphrases or computed dates);
- mean prompt tokens of the question's request (the fake server's cl100k count).

Modes: "one session" (the whole conversation fed into one jarvis-tui session, then each question
asked in it); "across" (each LoCoMo session its own jarvis-tui session in one store, the question
asked in a new session) and "across+phrase" (the same, the question prefixed with POINTER).
Every question is asked on a copy of the fed store, so questions never see each other.

Rows: the plain client (tests/budget_client.fill: the newest messages under window minus the
response reserve, on the same feed; scored on what it would send, no server needed) and each
engine configuration in ROWS. Today's jarvis-tui, with its default settings, is the
"lexical-only recall" row; a semantic configuration is one more entry there.

Feeding (locomo_data's docstring has the details): speaker_a's turns are the user's messages,
speaker_b's the assistant's replies, consecutive turns of one speaker joined; each message keeps
its speaker's name ("Caroline: ...") and a shared photo's blip_caption as text; each LoCoMo
session's first turn carries its date. A feed that opens with speaker_b gets a user message of
the date alone; one that ends with speaker_a is answered "OK.". Only the turns and dates: never
the annotations. The real Engine (stream_reply, default settings, the window set) talks over
loopback to tests/fakeserver.FakeProvider (a strict window; openai flavour), scripted to answer
each user message with speaker_b's turn, each summary request with SUMMARY (as issue 40's own
measurement did: what is measured is the window, the ledger and recall), each question with
ANSWER.

    python bench/recall/locomo.py ../shared/locomo            every conversation, window and mode
    python bench/recall/locomo.py ../shared/locomo --quick    one conversation, 20 questions, 4,096
    python bench/recall/locomo.py ../shared/locomo --window 16384 --conversations conv-41 --misses 5
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.recall.locomo_data import (  # noqa: E402
    CATEGORIES,
    FOUND,
    Conversation,
    Scorer,
    exchanges,
    load,
    request_text,
)
from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.budget_client import estimate, fill  # noqa: E402
from tests.engine_helpers import is_summary_request  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402

WINDOWS = (4096, 16384, 131072)
MODES = ("one session", "across", "across+phrase")
POINTER = "Thinking back to our previous conversations: "
SUMMARY = "The two friends caught up on what they have been doing lately."
ANSWER = "Let me think about that."
PLAIN = "plain client"
# Engine rows: name -> changes to the default settings.
ROWS: dict[str, dict[str, object]] = {
    "jarvis-tui (lexical-only recall)": {"recall_by_meaning": False},
    "jarvis-tui (hybrid recall)": {},
}
# Issue 40's figures (its author, six conversations, 240 questions): (window, mode, row) ->
# {column: share}; printed beside ours. Its jarvis-tui row is today's lexical-only one.
OURS = next(iter(ROWS))
RUN = dict(ROWS)  # the rows this run measures (--rows)
ISSUE_40 = {
    (4096, "one session", OURS): {"all": .458}, (4096, "one session", PLAIN): {"all": .092},
    (16384, "one session", OURS): {"all": .567, 1: .075, 3: .077},
    (16384, "one session", PLAIN): {"all": .576, 1: .150, 3: .231},
    (None, "across", OURS): {"all": 0.0}, (None, "across", PLAIN): {"all": 0.0},
    (None, "across+phrase", OURS): {"all": .33}, (None, "across+phrase", PLAIN): {"all": 0.0},
}


@dataclass
class Result:
    category: int
    evidence_all: bool
    answer_in: bool
    tokens: int
    question: str = ""
    missing: tuple[str, ...] = ()  # evidence ids not found (for --misses)
    recalled: str = ""  # the start of the recall block, if the request had one


class Script:
    """What the fake server answers: `reply` to the round being fed, SUMMARY to summaries."""

    def __init__(self, fake: FakeProvider) -> None:
        self.reply = ANSWER
        fake.reply_fn = lambda body: SUMMARY if is_summary_request(body) else self.reply


def settings(base_url: str, window: int, changes: dict[str, object]) -> Settings:
    return replace(Settings(base_url=base_url, model="fake", context_window=window), **changes)


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0)


async def round_(engine: Engine, text: str) -> bool:
    """One round; False if it failed."""
    ok = True
    async for event in engine.stream_reply(text):
        ok = ok and not isinstance(event, ev.Failed)
    return ok


async def feed(s: Settings, db: Path, provider: OpenAIProvider, script: Script,
               feeds: list[list[tuple[str, str]]]) -> tuple[int, int]:
    """Each feed into a session of its own in the store at `db`: (the last session's id,
    failed rounds)."""
    failed, conv = 0, 0
    with Store(db) as store:
        for pairs in feeds:
            engine = Engine(s, store, provider, sleep=_no_wait)
            conv = engine.conversation.id
            for user, reply in pairs:
                script.reply = reply
                failed += not await round_(engine, user)
    script.reply = ANSWER
    return conv, failed


async def ask(s: Settings, db: Path, tmp: Path, provider: OpenAIProvider, fake: FakeProvider,
              conv: int | None, text: str) -> dict | None:
    """`text` asked on a copy of the store (in session `conv`, or a new one): the body of the
    chat request that carried it (a compaction may go first)."""
    copy = tmp / "asked.db"
    copy.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    fake.requests.clear()
    with Store(copy) as store:
        await round_(Engine(s, store, provider, conv, sleep=_no_wait), text)
    chats = [r for r in fake.chat_requests if r.status == 200 and not is_summary_request(r.body)]
    return (chats[-1].body | {"_tokens": chats[-1].prompt_tokens}) if chats else None


def score(conv: Conversation, q, body: dict | None, asked: str, tokens: int) -> Result:
    if body is None:
        return Result(q.category, False, False, tokens, q.text, tuple(q.evidence))
    text = request_text(body, asked)
    scorer = Scorer(text)
    missing = tuple(e for e in q.evidence if not scorer.has(conv, e))
    recalled = text.partition("Recalled from")[2][:160] if "Recalled from" in text else ""
    return Result(q.category, not missing, scorer.answer_in(q), tokens, q.text, missing,
                  recalled)


def plain(conv: Conversation, q, history: list[dict], s: Settings, asked: str) -> Result:
    sent = fill(s.system_prompt, [*history, {"role": "user", "content": asked}],
                s.context_window - s.response_reserve)
    return score(conv, q, {"messages": sent}, asked, estimate(sent))


async def run_window(conv: Conversation, window: int, questions: list, modes: tuple[str, ...],
                     out: dict, failed: dict) -> None:
    one = exchanges(conv.sessions, conv.speaker_a)
    per_session = [exchanges([s], conv.speaker_a) for s in conv.sessions]
    with FakeProvider(limit=window) as fake, tempfile.TemporaryDirectory() as tmp:
        script = Script(fake)
        async with OpenAIProvider(fake.base_url, "", timeout=60, connect_timeout=5) as provider:
            for row, changes in RUN.items():
                s = settings(fake.base_url, window, changes)
                for mode in modes:
                    db = Path(tmp) / f"{row}-{mode}.db"
                    if mode == "across+phrase" and "across" in modes:
                        db = Path(tmp) / f"{row}-across.db"  # the same feed as "across"
                    else:
                        feeds = [one] if mode == "one session" else per_session
                        conv_id, bad = await feed(s, db, provider, script, feeds)
                        failed[(window, mode, row)] += bad
                        fake.requests.clear()  # a long run would keep every body
                    history = [m for u, r in one for m in (
                        {"role": "user", "content": u}, {"role": "assistant", "content": r})]
                    for q in questions:
                        asked = POINTER + q.text if mode == "across+phrase" else q.text
                        body = await ask(s, db, Path(tmp), provider, fake,
                                         conv_id if mode == "one session" else None, asked)
                        tokens = body.pop("_tokens") if body else 0
                        out[(window, mode, row)].append(score(conv, q, body, asked, tokens))
                        if row == next(iter(RUN)):  # the plain client once, on the same feed
                            h = history if mode == "one session" else []
                            out[(window, mode, PLAIN)].append(plain(conv, q, h, s, asked))


def report(out: dict, failed: dict, windows: tuple[int, ...], modes: tuple[str, ...],
           misses: int) -> None:
    cats = list(CATEGORIES)
    head = (f"{'window':>8} {'mode':<14}{'row':<34}{'n':>5}{'evidence-all':>14}"
            + "".join(f"{CATEGORIES[c]:>13}" for c in cats)
            + f"{'answer-in':>11}{'prompt tok':>12}  issue 40 (6 conv.)")
    print(head)
    for window in windows:
        for mode in modes:
            for row in (PLAIN, *RUN):
                rs = out.get((window, mode, row))
                if not rs:
                    continue
                share = lambda xs: f"{sum(xs) / len(xs):.1%}" if xs else "-"  # noqa: E731
                by_cat = [share([r.evidence_all for r in rs if r.category == c]) for c in cats]
                base = ISSUE_40.get((window, mode, row)) or ISSUE_40.get((None, mode, row), {})
                said = ", ".join(f"{'all' if k == 'all' else CATEGORIES[k]} {v:.1%}"
                                 for k, v in base.items())
                print(f"{window:>8,} {mode:<14}{row:<34}{len(rs):>5}"
                      f"{share([r.evidence_all for r in rs]):>14}"
                      + "".join(f"{c:>13}" for c in by_cat)
                      + f"{share([r.answer_in for r in rs]):>11}"
                      f"{sum(r.tokens for r in rs) / len(rs):>12,.0f}  {said}")
    print("evidence turns checked, all rows: " + ", ".join(f"{v:,} {k}" for k, v in FOUND.items()))
    bad = {k: v for k, v in failed.items() if v}
    if bad:
        print("failed rounds while feeding:", bad)
    for key, rs in out.items():
        if misses and key[2] == list(RUN)[-1]:
            shown = [r for r in rs if not r.evidence_all][:misses]
            for r in shown:
                print(f"miss {key[0]} {key[1]}: {r.question!r} missing {list(r.missing)}; "
                      f"recalled: {r.recalled[:120]!r}")


async def main_async(args: argparse.Namespace) -> None:
    files = sorted(Path(args.dir).glob("*.json"))
    if args.conversations:
        files = [f for f in files if f.stem in args.conversations.split(",")]
    if args.quick:
        files = files[:1]
    windows = tuple(args.window or ((4096,) if args.quick else WINDOWS))
    modes = tuple(m for m in MODES if m in (args.mode or MODES))  # "across" feeds first
    extra = {}
    for change in args.set or ():  # one more hybrid row per --set
        key, _, value = change.partition("=")
        extra[f"hybrid, {change}"] = {key: type(getattr(Settings(), key))(value)}
    RUN.update(extra)
    if args.rows:
        RUN.clear()
        RUN.update({k: v for k, v in [*ROWS.items(), *extra.items()]
                    if any(w in k for w in args.rows.split(","))})
    out: dict = defaultdict(list)
    failed: dict = defaultdict(int)
    started = time.perf_counter()
    for path in files:
        conv = load(path)
        questions = conv.questions
        if args.quick:  # spread over the conversation, every category
            questions = random.Random(40).sample(questions, min(20, len(questions)))
        print(f"{conv.name}: {len(conv.sessions)} sessions, {len(conv.turns)} turns, "
              f"{len(questions)} questions; evidence ids naming no turn, left out: "
              f"{conv.dropped_ids}", flush=True)
        for window in windows:
            began = time.perf_counter()
            await run_window(conv, window, questions, modes, out, failed)
            print(f"  window {window:,}: {time.perf_counter() - began:.0f} s", flush=True)
    print()
    report(out, failed, windows, modes, args.misses)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="the folder of LoCoMo conversations (conv-*.json)")
    parser.add_argument("--window", type=int, action="append", help="a window (repeatable)")
    parser.add_argument("--mode", choices=MODES, action="append", help="a mode (repeatable)")
    parser.add_argument("--conversations", help="names to run, comma-separated (conv-41,...)")
    parser.add_argument("--rows", help="rows to run, by a word of their name, comma-separated "
                        "(lexical,hybrid); the plain client is always there")
    parser.add_argument("--set", action="append", metavar="SETTING=VALUE",
                        help="one more row: the default settings with this one changed "
                        "(repeatable: a row each)")
    parser.add_argument("--quick", action="store_true",
                        help="one conversation, 20 questions, window 4,096")
    parser.add_argument("--misses", type=int, default=0,
                        help="print this many missed questions per window and mode")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
