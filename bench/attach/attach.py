"""Attachments (issue 42): what the chip said a file costs before sending, against what the
server counted, and how fast `@` lists paths in a large tree.

1. Estimate against the server: for English and Chinese prose and code (bench/data's samples,
   joined to a few thousand tokens), a service's log and an MCP tool's JSON result (made here
   from a fixed seed, in both languages), per wire protocol (OpenAI's chat completions, Anthropic's
   messages), the tokens the chip showed against the difference the server counted between the
   same question sent with and without the file. The chip is read twice: in a new store (the
   estimator alone) and after one short turn (the counter calibrated by the server's count of
   it, as a session has it). The servers are the repository's fakes, which count with tiktoken
   (cl100k) as a real tokenizer would.
2. `@` in a tree of 50,000 files (2,000 folders, a .gitignore leaving out a build folder):
   the time from the @ to the first list (the walk runs in a thread and the list shows what it
   found so far), against walking the whole tree first (what a list that waits for every path
   does); then each keystroke of five queries, narrowed from the last one, against filtering
   every path afresh. Target: the first list and the keystrokes at most 100 ms at p95.

3. Tokens evaluated anew per new token over a session that brings in files larger than the
   window, attached (as digests the model reads with read_attachment) against pasted whole:
   bench/attach/session_cost.py says how. Target: attached no worse than pasted.

Images (a 1280x800 screenshot and a 4000x3000 photo, scaled to each provider's limit as the
app sends them) are rows of the first table on the OpenAI, Anthropic and Ollama fakes, which
count them by each provider's published formula.

Run from the repository root: python bench/attach/attach.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.attach import session_cost  # noqa: E402
from jarvis_tui.core.attach.complete import PathIndex  # noqa: E402
from jarvis_tui.core.attach.message import Sending, message_with  # noqa: E402
from jarvis_tui.core.attach.read import read_path  # noqa: E402
from jarvis_tui.core.providers import make_provider  # noqa: E402
from jarvis_tui.core.session import ChatSession, Store  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.window.tokens import seed_estimate  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402
from tests.fake_ollama import FakeOllama  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402

DATA = ROOT / "bench" / "data"
KINDS = {"English prose": "english", "Chinese prose": "chinese", "code": "code",
         "log": "log", "JSON tool output": "json"}
QUESTION = "What is in this file?"
KEY = "sk-ant-api03-bench-0123456789"
IMAGES = {"screenshot 1280x800": (1280, 800), "photo 4000x3000": (4000, 3000)}
QUERIES = ("src/eng", "window", "d17/f3", "readme", "cfg.json")


def made(name: str) -> str:
    """A service's log (English and Chinese messages, a traceback) and an MCP tool's JSON
    result (Chinese fields, as json.dumps writes by default): from a fixed seed."""
    rng = random.Random(42)
    if name == "log":
        lines = []
        for i in range(400):
            level = rng.choice(["INFO", "INFO", "WARN", "ERROR"])
            said = rng.choice([f"request {i} served in {rng.randint(3, 900)} ms",
                               f"用户 {rng.randint(1000, 9999)} 登录成功", "连接池已满，等待重试",
                               f"GET /api/v2/orders/{rng.randint(1, 99999)} 200"])
            lines.append(f"2026-12-05T10:{i // 60:02d}:{i % 60:02d}Z {level} app.worker: {said}")
            if level == "ERROR" and i % 7 == 0:
                lines += ["Traceback (most recent call last):",
                          '  File "/srv/app/worker.py", line 88, in handle',
                          "    conn = pool.acquire(timeout=5)",
                          "TimeoutError: pool exhausted"]
        return "\n".join(lines)
    rows = [{"id": i, "标题": rng.choice(["修复登录超时", "Add retry to the uploader",
                                        "更新依赖版本"]), "state": rng.choice(["open", "closed"]),
             "labels": rng.sample(["bug", "网络", "p1", "docs"], 2),
             "updated": f"2026-11-{rng.randint(1, 30):02d}"} for i in range(300)]
    return json.dumps({"total": len(rows), "items": rows}, indent=1)


def sample(name: str, chars: int) -> str:
    if name in ("log", "json"):
        return made(name)[:chars]
    text = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    return "\n\n".join(s.strip("\n") for s in text.split("\n----\n") if s.strip())[:chars]


async def counted(settings: Settings, store: Store, question) -> int:  # noqa: ANN001
    session = ChatSession(settings, store, make_provider)
    try:
        async for _ in session.stream_reply(question):
            pass
        usage = session.last_usage
        return usage.prompt_tokens if usage is not None else 0
    finally:
        await session.aclose()


def chip(settings: Settings, store: Store, sending: Sending) -> int:
    return ChatSession(settings, store, make_provider).attachment_tokens([sending])[0]


async def measured(settings: Settings, folder: Path, name: str,
                   sending: Sending) -> tuple[int, int, int]:
    """The chip in a new store and after one short turn, and what the server counted the file
    adds: the question with it against the question alone, each the first request of its own
    session (a second request would carry the first turn too)."""
    with Store(folder / f"{name}-alone.db") as store:
        fresh = chip(settings, store, sending)
        plain = await counted(settings, store, message_with(QUESTION, []))
        calibrated = chip(settings, store, sending)
    with Store(folder / f"{name}-with.db") as store:
        carried = await counted(settings, store, message_with(QUESTION, [sending]))
    return fresh, calibrated, carried - plain


async def estimates(quick: bool) -> list[tuple[str, str, int, int, int, int]]:
    rows = []
    chars = 3000 if quick else 12000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for protocol, server in (("OpenAI", FakeProvider), ("Anthropic", FakeAnthropic)):
            with server(limit=200_000) as fake:
                settings = Settings(base_url=fake.base_url, model="bench-model",
                                    context_window=128_000)
                if protocol == "Anthropic":
                    settings = replace(settings, provider="anthropic", api_key=KEY)
                for label, name in KINDS.items():
                    path = folder / f"{name}.txt"
                    path.write_text(sample(name, chars), encoding="utf-8")
                    sending = Sending(read_path(path, folder))
                    fresh, calibrated, server = await measured(settings, folder,
                                                               f"{protocol}-{name}", sending)
                    rows.append((protocol, label, fresh, calibrated, server,
                                 seed_estimate(message_with("", [sending]).content)))
                rows += await image_rows(protocol, settings, folder)
        rows += await ollama_image_rows(folder)
    return rows


async def image_rows(protocol: str, settings: Settings,
                     folder: Path) -> list[tuple[str, str, int, int, int, int]]:
    """A screenshot and a photo, scaled to the provider's limit as the app sends them: the
    chip against what the server's formula counted. The seed column is the image's line
    alone, what a client that counts only text shows."""
    rows = []
    for label, size in IMAGES.items():
        path = folder / f"{label.split()[0]}.png"
        path.write_bytes(picture(*size))
        with Store(folder / f"{protocol}-{label}-as-sent.db") as store:
            session = ChatSession(settings, store, make_provider)
            sending = session.as_sent([Sending(read_path(path, folder))])[0]
        fresh, calibrated, server = await measured(settings, folder, f"{protocol}-{label}",
                                                   sending)
        rows.append((protocol, label, fresh, calibrated, server,
                     seed_estimate(message_with("", [sending]).content)))
    return rows


async def ollama_image_rows(folder: Path) -> list[tuple[str, str, int, int, int, int]]:
    with FakeOllama(default_num_ctx=131_072, context_length=131_072) as fake:
        settings = Settings(base_url=fake.base_url, model="llama3.2", provider="ollama",
                            context_window=128_000)
        return await image_rows("Ollama", settings, folder)


def picture(width: int, height: int) -> bytes:
    """An image whose PNG does not shrink to nothing: a gradient with a fixed-seed speckle."""
    from PIL import Image

    random.seed(7)
    across = Image.linear_gradient("L").rotate(90).resize((width, height))
    down = Image.linear_gradient("L").resize((width, height))
    img = Image.merge("RGB", (across, down, Image.effect_noise((width, height), 40)))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def make_tree(root: Path, files: int) -> None:
    folders = max(1, files // 25)
    for d in range(folders):
        sub = root / ("build" if d % 50 == 49 else "src") / f"eng{d % 7}" / f"d{d}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(files // folders):
            (sub / f"f{f}_{'window' if f % 9 == 0 else 'part'}.py").touch()
    (root / "README.md").touch()
    (root / "cfg.json").touch()
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")


def first_list(root: Path) -> float:
    """Seconds from the @ to a list with paths in it, the walk running in a thread."""
    start = time.perf_counter()
    index = PathIndex(root)
    walker = threading.Thread(target=index.fill, daemon=True)
    walker.start()
    while not index.matches("", 20):
        time.sleep(0.001)
    took = time.perf_counter() - start
    walker.join()
    return took


def whole_walk(root: Path) -> float:
    start = time.perf_counter()
    index = PathIndex(root)
    index.fill()
    index.matches("", 20)
    return time.perf_counter() - start


def keystrokes(index: PathIndex, *, narrowed: bool) -> list[float]:
    times = []
    for query in QUERIES:
        for end in range(1, len(query) + 1):
            if not narrowed:
                index._last = None  # every keystroke filters every path afresh
            start = time.perf_counter()
            index.matches(query[:end])
            times.append(time.perf_counter() - start)
    return times


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: shorter files, a 5,000-file tree, 3 runs")
    args = parser.parse_args()
    started = time.perf_counter()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")

    print("\n1. What the chip said against what the server counted (tokens the file added): "
          "in a new store, and after one short turn calibrated the counter; beside it the seed "
          "blog's estimate (CJK 1:1, the rest length / 4), what a simple client would show")
    print(f"{'protocol':10}{'text':18}{'server':>8}{'chip new':>10}{'error':>8}"
          f"{'chip after':>12}{'error':>8}{'seed':>8}{'error':>8}")
    for protocol, label, fresh, calibrated, server, seed in asyncio.run(estimates(args.quick)):
        errors = [(shown - server) / server * 100 if server else 0.0
                  for shown in (fresh, calibrated, seed)]
        print(f"{protocol:10}{label:18}{server:>8,}{fresh:>10,}{errors[0]:>+7.1f}%"
              f"{calibrated:>12,}{errors[1]:>+7.1f}%{seed:>8,}{errors[2]:>+7.1f}%")

    files = 5_000 if args.quick else 50_000
    runs = 3 if args.quick else 20
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, files)
        print(f"\n2. @ in a tree of {files:,} files ({runs} runs; ms)")
        ours = [first_list(root) for _ in range(runs)]
        waits = [whole_walk(root) for _ in range(max(1, runs // 4))]
        print(f"{'':44}{'p50':>8}{'p95':>8}")
        print(f"{'first list, walking in a thread (ours)':44}"
              f"{statistics.median(ours) * 1000:>8.1f}{p95(ours):>8.1f}")
        print(f"{'first list after the whole walk (baseline)':44}"
              f"{statistics.median(waits) * 1000:>8.1f}{p95(waits):>8.1f}")
        index = PathIndex(root)
        index.fill()
        narrowed = keystrokes(index, narrowed=True)
        fresh = keystrokes(index, narrowed=False)
        print(f"{'a keystroke, narrowing the last list (ours)':44}"
              f"{statistics.median(narrowed) * 1000:>8.1f}{p95(narrowed):>8.1f}")
        print(f"{'a keystroke, filtering every path (baseline)':44}"
              f"{statistics.median(fresh) * 1000:>8.1f}{p95(fresh):>8.1f}")
        print(f"{index.count:,} paths offered (the build folder's left out by .gitignore); "
              "target: first list and keystrokes <= 100 ms at p95")
    for window in (4096,) if args.quick else (4096, 16384, 131072):
        session_cost.report(window)
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
