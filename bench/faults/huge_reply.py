"""Huge replies (issue 13, item 7): the two things that made a reply of tens of megabytes
quadratic, each beside the way it was done before, in the same run on the same data.

1. Splitting a stream into lines when one line is huge (a 40 MB SSE event): ours scans each piece
   once; the baseline (the old stream_lines) split the carried-over rest plus the new piece on
   every piece, so a line of n pieces was scanned n times.
2. Saving a reply as it streams (every 512 KB here, as a fast stream saves every half second):
   ours appends only the new text and folds it in once at the end; the baseline rewrote, and
   re-indexed, the whole reply on every save.

Then the real thing end to end: `jarvis-tui ask` receiving a 30 MB reply and a 40 MB line from
the hostile server, with the process's peak memory.

4. The full-screen app holding a 10 MB reply (issue 25, item 19), streamed from the hostile server
   and opened from a stored session: the process's memory with the reply on the screen, its
   peak, and after Ctrl+N, each beside the app showing every message whole (`--whole`, the way
   it was before), in the same run. tests/faults/huge_reply_tui.py is the app's side.

Run from the repository root in the test environment: python bench/faults/huge_reply.py
(`--app`: section 4 alone)
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.messages import PARTIAL, Message  # noqa: E402
from jarvis_tui.core.providers.http import stream_lines  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.faults import home_env  # noqa: E402
from tests.faults.cases import CASES  # noqa: E402
from tests.faults.huge_reply_tui import prose_text, run_app, store_huge_session  # noqa: E402

PIECE = 64 * 1024
SAVE_EVERY = 8  # pieces: 512 KB
_EOL = re.compile(r"\r\n|\r|\n")


async def old_stream_lines(resp: httpx.Response) -> AsyncIterator[str]:
    rest = ""
    async for text in resp.aiter_text():
        lines = _EOL.split(rest + text)
        rest = lines.pop()
        for line in lines:
            yield line
    if rest:
        yield rest


def one_line_response(size: int) -> httpx.Response:
    async def body() -> AsyncIterator[bytes]:
        piece = b"y" * PIECE
        for _ in range(size // PIECE):
            yield piece
        yield b"\n"

    return httpx.Response(200, content=body())


async def split_seconds(split, size: int) -> float:
    start = time.perf_counter()
    async for line in split(one_line_response(size)):
        assert len(line) == size // PIECE * PIECE
    return time.perf_counter() - start


def save_seconds(size: int, *, append: bool, folder: Path) -> float:
    with Store(folder / f"{size}-{append}.db") as store:
        conv = store.create_conversation()
        store.add_message(conv.id, Message("user", "send me everything"))
        reply = store.add_message(conv.id, Message("assistant", "", status=PARTIAL))
        parts: list[str] = []
        saved = 0
        start = time.perf_counter()
        for n in range(size // PIECE):
            parts.append(f"{n:08d} " + "x" * (PIECE - 10) + "\n")
            if n % SAVE_EVERY:
                continue
            if append:
                store.append_text(reply, "".join(parts[saved:]))
                saved = len(parts)
            else:
                reply.content = "".join(parts)
                store.update_message(reply)
        reply.content, reply.status = "".join(parts), "complete"
        store.update_message(reply)
        seconds = time.perf_counter() - start
        assert store.messages(conv.id)[-1].content == reply.content
    return seconds


# The bound the app's memory must keep with a 10 MB reply on the screen, shown cut: the app at
# rest is ~120 MB here, plus the reply itself held by the session (10 MB) and the store's pages.
HELD_BOUND_MB = 300


def app_figures(mode: str, whole: bool, tmp: Path, limit: float) -> dict[str, object]:
    env = home_env(tmp)
    if mode.startswith("load"):
        store_huge_session(Path(env["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db",
                           prose_text() if mode == "load-md" else None)
    done, got = run_app(mode.split("-")[0], env, whole=whole, timeout=limit)
    if "held_mb" not in got:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"failed": f"exit {done.returncode}, peak {got.get('peak_mb')} MB: {tail[:80]}"}
    return got


def app_section(limit: float, quick: bool = False) -> bool:
    """The table; True when the app showing the reply cut kept within HELD_BOUND_MB."""
    print("\n4. the app holding a 10 MB reply (real app under Pilot, its own process; RSS in MB)")
    print(f"{'':7} {'':15} {'shown':>6} {'peak':>6} {'V open':>7} {'Ctrl+N':>7} {'widgets':>8} "
          f"{'stored':>11} {'seconds':>8}")
    bounded = True
    for mode in ("load",) if quick else ("stream", "load", "load-md"):
        for whole in (False,) if quick else (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                got = app_figures(mode, whole, Path(tmp), limit)
            who = "before (whole)" if whole else "ours (cut)"
            if "failed" in got:
                print(f"{mode:7} {who:15} {got['failed']}")
                bounded = bounded and whole
                continue
            if "timed_out" in got:
                print(f"{mode:7} {who:15} {got['held_mb']:>6} {got['peak_mb']:>6}   not shown "
                      f"after {got['timed_out']} s: killed")
                bounded = bounded and whole
                continue
            print(f"{mode:7} {who:15} {got['held_mb']:>6} {got['peak_mb']:>6} "
                  f"{got.get('viewer_mb', '-'):>7} {got['after_new_mb']:>7} {got['widgets']:>8} "
                  f"{got['stored_chars']:>11,} {got['seconds']:>8}")
            if not whole and int(got["held_mb"]) > HELD_BOUND_MB:  # type: ignore[call-overload]
                bounded = False
    print("   stream, load: the hostile server's flood (153 lines of 64 KB, one Markdown "
          "paragraph);\n   load-md: 10 MB of Markdown prose, lists and code (~75,000 blocks)\n"
          "   stored: the reply's length in the session once shown (nothing is cut there); "
          "V open: the whole\n   text in the full-text view (the app before had none)")
    print(f"   the app with the reply shown cut holds at most {HELD_BOUND_MB} MB: "
          f"{'PASS' if bounded else 'FAIL'}")
    return bounded


async def main() -> None:
    # The app showing 10 MB whole took minutes to stream it: it gets this long, then its memory
    # at that point is the figure.
    limit = 300.0
    # --quick, to see it runs: 2 MB only, one end-to-end case, the app loading the reply cut
    quick = "--quick" in sys.argv[1:]
    if "--app" in sys.argv[1:]:
        if not app_section(limit):
            raise SystemExit(1)
        return
    print("1. one line of N MB split into lines (seconds)")
    print(f"{'MB':>4}  {'ours':>7}  {'baseline':>8}")
    for mb in (2,) if quick else (2, 4, 8, 40):
        ours = await split_seconds(stream_lines, mb << 20)
        old = await split_seconds(old_stream_lines, mb << 20) if mb <= 8 else float("nan")
        print(f"{mb:>4}  {ours:>7.2f}  {old:>8.2f}")
    print("   (baseline at 40 MB left out: it grows with the square of the size)")

    print("\n2. an N MB reply saved every 512 KB as it streams, then finished (seconds)")
    print(f"{'MB':>4}  {'ours (append)':>13}  {'baseline (rewrite)':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (2,) if quick else (2, 4, 8, 30):
            ours = save_seconds(mb << 20, append=True, folder=Path(tmp))
            old = (save_seconds(mb << 20, append=False, folder=Path(tmp)) if mb <= 8
                   else float("nan"))
            print(f"{mb:>4}  {ours:>13.2f}  {old:>18.2f}")
    print("   (baseline at 30 MB left out: it grows with the square of the size)")

    print("\n3. jarvis-tui ask, end to end (real process, hostile server on loopback)")
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate([c for c in CASES if c.item == 7][:1 if quick else None]):
            outcome = case.run(Path(tmp) / str(n))
            state = "survived" if outcome.survived else "FAILED"
            print(f"   {case.name}: {state}, {outcome.result}")

    if not app_section(limit, quick):
        raise SystemExit(1)


if __name__ == "__main__":
    asyncio.run(main())
