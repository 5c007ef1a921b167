"""Recall of planted facts in a long conversation: ours beside plain FTS5, same run, same data.

A generated 2,000-turn conversation (a user message and a reply each) holds 50 facts, 25 stated
in English and 25 in Chinese, among filler turns that reuse the same people, pets and places.
Each fact is then asked about in other words; recall@3 counts the questions whose answer turn is
among the first three results. The baseline is FTS5's own `unicode61` tokenizer over the raw
text, which sees a Chinese sentence as one word. Latency is per search over the whole store.
Run from the repository root: python bench/recall.py
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.recall_index import query_terms  # noqa: E402
from jarvis_tui.core.store import Store  # noqa: E402

TURNS = 2000
RELATIONS = ["sister", "brother", "neighbour", "boss", "cousin"]
PETS = ["dog", "cat", "parrot", "rabbit", "turtle"]
NAMES = ["Biscuit", "Mochi", "Pepper", "Orion", "Hazel", "Juniper", "Tofu", "Waffles", "Nova",
         "Pickle", "Basil", "Clover", "Ziggy", "Maple", "Bean", "Olive", "Rocket", "Sesame",
         "Pumpkin", "Echo", "Comet", "Fig", "Noodle", "Pixel", "Sprout"]
ZH_RELATIONS = ["妹妹", "哥哥", "邻居", "老板", "表姐"]
ZH_PETS = ["狗", "猫", "鹦鹉", "兔子", "乌龟"]
ZH_NAMES = ["饼干", "团子", "花椒", "星星", "榛子", "豆豆", "年糕", "布丁", "汤圆", "果冻",
            "芝麻", "橙子", "毛毛", "旺财", "雪球", "可乐", "元宝", "小米", "栗子", "麻薯",
            "candy", "球球", "黑豆", "糖糖", "花卷"]
FILLER_EN = ["I talked to my {r} about the weather today.", "My {r} has a {p} too, it is cute.",
             "Can you suggest a recipe for dinner with rice?", "What do you think about trains?",
             "The meeting with my {r} went well.", "I need to buy food for the {p}.",
             "My {r}'s {p} was sick yesterday.", "Is a {p} a good pet for my {r}'s kids?"]
FILLER_ZH = ["今天我和{r}聊了天气。", "我的{r}也养了一只{p}，很可爱。", "晚饭做什么好呢？",
             "你觉得坐火车去旅行怎么样？", "我需要给{p}买点吃的。", "周末我们去公园散步了。",
             "我{r}的{p}昨天生病了。", "{p}适合我{r}家的孩子养吗？"]


def facts() -> list[tuple[str, str, str]]:
    """(statement, question, language) for 50 distinct facts."""
    out = []
    for i in range(25):
        r, p = RELATIONS[i % 5], PETS[i // 5]
        out.append((f"By the way, my {r}'s {p} is named {NAMES[i]}.",
                    f"What was the name of my {r}'s {p} again?", "en"))
        zr, zp = ZH_RELATIONS[i % 5], ZH_PETS[i // 5]
        out.append((f"顺便说一下，我{zr}的{zp}叫{ZH_NAMES[i]}。",
                    f"我{zr}家的{zp}叫什么名字来着？", "zh"))
    return out


def conversation(rng: random.Random) -> tuple[list[Message], dict[int, int]]:
    """The turns, and which turn index holds each fact."""
    planted = facts()
    at = sorted(rng.sample(range(TURNS - 100), len(planted)))  # all stated before the end
    where = dict(zip(at, range(len(planted)), strict=True))
    msgs = []
    for turn in range(TURNS):
        if turn in where:
            text = planted[where[turn]][0]
        elif turn % 2:
            text = rng.choice(FILLER_ZH).format(r=rng.choice(ZH_RELATIONS), p=rng.choice(ZH_PETS))
        else:
            text = rng.choice(FILLER_EN).format(r=rng.choice(RELATIONS), p=rng.choice(PETS))
        msgs.append(Message("user", text))
        msgs.append(Message("assistant", f"Noted (turn {turn}). 好的，我记住了。"))
    return msgs, {fact: turn for turn, fact in where.items()}


def plain_fts(path: Path, conv_id: int, question: str, limit: int) -> list[int]:
    """The baseline: FTS5's unicode61 over the raw text, the same OR of the question's words."""
    db = sqlite3.connect(path)
    try:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS plain USING fts5(content)")
        if db.execute("SELECT count(*) FROM plain").fetchone()[0] == 0:
            db.execute("INSERT INTO plain (rowid, content) SELECT id, content FROM messages "
                       "WHERE conversation_id = ?", (conv_id,))
            db.commit()
        words = [w for w in question.replace("?", " ").replace("？", " ").split()
                 if w.lower() not in ("what", "was", "the", "of", "my", "again")]
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if not match:
            return []
        return [r[0] for r in db.execute(
            "SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY bm25(plain) LIMIT ?",
            (match, limit))]
    finally:
        db.close()


def main() -> None:
    rng = random.Random(7)
    msgs, where = conversation(rng)
    planted = facts()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        with Store(path) as store:
            conv = store.create_conversation(model="bench")
            start = time.perf_counter()
            for m in msgs:
                store.add_message(conv.id, m)
            write_s = time.perf_counter() - start
            ours = {"en": [0, 0], "zh": [0, 0]}
            base = {"en": [0, 0], "zh": [0, 0]}
            latencies = []
            # The engine's path: only the turns a summary covers (here all but the last 50).
            covered = msgs[:-100]
            store.add_summary(conv.id, "bench summary", covered, kind="auto")
            among_latencies = []
            for fact, (_, question, lang) in enumerate(planted):
                t0 = time.perf_counter()
                store.search(conv.id, question, limit=12, covered_only=True)
                among_latencies.append((time.perf_counter() - t0) * 1000)
                target = msgs[2 * where[fact]].id
                t0 = time.perf_counter()
                hits = store.search(conv.id, question, limit=3)
                latencies.append((time.perf_counter() - t0) * 1000)
                ours[lang][0] += target in [h.message_id for h in hits]
                ours[lang][1] += 1
                base[lang][0] += target in plain_fts(path, conv.id, question, 3)
                base[lang][1] += 1
    lat = sorted(latencies)
    p95 = lat[max(0, round(0.95 * len(lat)) - 1)]
    among = sorted(among_latencies)
    among_p95 = among[max(0, round(0.95 * len(among)) - 1)]
    print(f"{TURNS} turns ({len(msgs)} messages), {len(planted)} facts; "
          f"storing them with the index: {write_s:.2f} s")
    print(f"{'':24}{'English':>10}{'Chinese':>10}")
    for name, table in (("jarvis-tui recall@3", ours), ("plain FTS5 recall@3", base)):
        print(f"{name:24}" + "".join(f"{table[k][0] / table[k][1]:>10.2f}" for k in ("en", "zh")))
    print(f"search latency: p50 {statistics.median(lat):.2f} ms, p95 {p95:.2f} ms "
          f"(targets: recall@3 >= 0.9 both languages, p95 <= 20 ms)")
    print(f"  among the {len(covered):,} covered messages (the engine's recall search): "
          f"p50 {statistics.median(among):.2f} ms, p95 {among_p95:.2f} ms")
    print(f"example query terms: {query_terms(planted[1][1])}")


if __name__ == "__main__":
    main()
