"""Cost of fitting one request, ours beside the seed's `_fit_messages_to_window`, same run.

The seed re-estimates every message on every request with a per-character loop and inserts at
index 0 (O(window^2) list moves); ours counts each message once (cached), walks back from the
newest only as far as the budget goes, and takes the pinned positions from the engine's history
bookkeeping (core/window/history.py) instead of scanning for them. The "gauge" column is the history
part of what the gauge asks on every keystroke (History.tokens, warm).
Run from the repository root: python bench/cost/window.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.messages import Message  # noqa: E402
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.history import History  # noqa: E402
from jarvis_tui.core.window.system_message import SystemMessage  # noqa: E402
from jarvis_tui.core.window.tokens import TokenCounter, seed_estimate  # noqa: E402


def seed_fit(messages: list[dict], max_tokens: int) -> list[dict]:
    """The seed blog's layer 1, as published (reserves 1024 + 512)."""
    budget = max_tokens - 1024 - 512
    fitted: list[dict] = []
    used = 0
    for msg in reversed(messages):
        msg_tokens = seed_estimate(msg.get("content", ""))
        if used + msg_tokens > budget:
            break
        fitted.insert(0, msg)
        used += msg_tokens
    return fitted


def history(n: int) -> list[Message]:
    out = []
    for i in range(n):
        out.append(Message("user", f"第{i}个问题：how should the window handle turn {i}? " * 3))
        out.append(Message("assistant", f"Answer {i}: keep groups whole, newest first. " * 8))
    return out


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(quick: bool) -> None:
    print(f"{'messages':>9} {'window':>8} {'sent':>6} {'seed ms':>9} {'ours ms':>9} "
          f"{'ours first ms':>14} {'gauge ms':>9}")
    for n_turns in (500,) if quick else (500, 5_000, 50_000):
        msgs = history(n_turns)
        msgs[len(msgs) // 3].pinned = True  # one old pinned message: the window must find it
        dicts = [{"role": m.role, "content": m.content} for m in msgs]
        for window in (8_192,) if quick else (8_192, 128_000):
            counter = TokenCounter("bench", exact=False)
            budget = window - 1024 - 512
            kept = History(list(msgs))  # built once when a session opens, then kept up to date
            start = time.perf_counter()
            fitted = fit_window(kept.active, budget=budget, counter=counter,
                                system=SystemMessage("sys"), pinned=kept.pinned)
            first = time.perf_counter() - start  # counts every visited message once
            ours = best_of(lambda h=kept, b=budget, c=counter: fit_window(
                h.active, budget=b, counter=c, system=SystemMessage("sys"), pinned=h.pinned))
            seed = best_of(lambda d=dicts, w=window: seed_fit(d, w))
            kept.tokens(counter)  # the first sum counts the whole history once
            gauge = best_of(lambda h=kept, c=counter: h.tokens(c))
            print(f"{len(msgs):>9} {window:>8} {len(fitted.sent):>6} {seed * 1e3:>9.2f} "
                  f"{ours * 1e3:>9.2f} {first * 1e3:>14.2f} {gauge * 1e3:>9.3f}")
            for m in msgs:
                m._tokens = None  # the next window size starts cold again
    print("\nseed = per-request re-estimation + insert(0); ours = cached counts, best of 5 after "
          "the first fit (the 'first' column pays for counting).")


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])  # --quick: 1,000 messages at 8,192, to see it runs
