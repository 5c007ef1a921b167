"""The full-screen app holding one huge reply (issue 25, item 19), for the fault matrix's row
(tests/faults/memory.py) and bench/faults/huge_reply.py.

`jarvis-tui` as the user starts it (cli.main: its arguments, config and session store), with the
app under Textual's Pilot instead of a terminal, in a process of its own so its memory is its
own. `stream`: the user sends a message and the server's huge reply streams in. `load`: the
session holding the huge reply opens at start. Either way, once the reply is on the screen, the
process's memory is read from /proc/self/status; then the whole text is opened as the cut line
says (Tab, V, End), and closed; then Ctrl+N (a new session) and the memory is read again after the
pause in which the app runs its put-off garbage collection.

    python -m tests.faults.huge_reply_tui stream|load [--limit S] [--whole] [jarvis-tui args...]

`--whole`: the app as it was before item 19, every message shown whole however large.
Prints one JSON line: the figures in MB, the reply's stored length, the widgets the conversation
mounted, the cut markers shown; or, when the reply was not shown within S seconds (600 by
default), `timed_out` and the memory held then.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from jarvis_tui import cli
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.widgets.conversation import Conversation
from tests.hostile_server import HostileServer, flood

LIMIT_S = 600.0
QUESTION = "send me everything"
REPLY = 10_000_000  # characters, as in the hostile run
FLOOD_LINE = "x" * (64 * 1024 - 1) + "\n"  # what hostile_server.flood sends, one event each


def huge_reply_text() -> str:
    return (FLOOD_LINE * (REPLY // len(FLOOD_LINE) + 1))[:REPLY]


def prose_text() -> str:
    """10 MB of Markdown as a model writes it: headings, paragraphs of short lines, lists and
    code, so many blocks where the flood's reply is one paragraph."""
    parts: list[str] = []
    size = n = 0
    while size < REPLY:
        block = (f"## Part {n}\n\n" if n % 40 == 0 else "") + (
            f"Paragraph {n} says what the step does and why, in a line of about eighty chars.\n"
            "A second line goes on with the reasons, the numbers and the names it uses.\n\n")
        if n % 10 == 5:
            block += f"- item {n}a\n- item {n}b\n\n```python\nvalue_{n} = compute({n})\n```\n\n"
        parts.append(block)
        size += len(block)
        n += 1
    return "".join(parts)[:REPLY]


def store_huge_session(db: Path, text: str | None = None) -> None:
    """The session the user reopens: the question and a 10 MB reply (the hostile server's
    flood unless `text`)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with Store(db) as store:
        conv = store.create_conversation()
        store.add_message(conv.id, Message("user", QUESTION))
        store.add_message(conv.id, Message("assistant", text or huge_reply_text()))


def run_app(mode: str, env: dict[str, str], *, whole: bool = False,
            timeout: float = 900) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    """This module in a process of its own, against the hostile server's 10 MB flood; `load`
    opens the stored session (store_huge_session first). Its JSON line; when it printed none
    (killed, or stuck past `timeout`), the peak memory seen from outside as `peak_mb`."""
    root = Path(__file__).resolve().parent.parent.parent
    peak = 0.0
    with HostileServer(flood(REPLY)) as server:
        argv = [sys.executable, "-m", "tests.faults.huge_reply_tui", mode, "--limit",
                str(timeout), *(["--whole"] if whole else []), "--base-url", server.base_url,
                "--model", "m", "--context-window", "20000000", "--response-reserve", "10000000"]
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=root)
        deadline = time.monotonic() + timeout + 30
        while True:
            try:
                out, err = child.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                peak = max(peak, _peak_mb(child.pid))
                if time.monotonic() > deadline:
                    child.kill()
                    out, err = child.communicate()
                    err += f"\nkilled after {timeout:g}s"
                    break
    done = subprocess.CompletedProcess(argv, child.returncode, out, err)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return done, (json.loads(lines[-1]) if lines else {"peak_mb": round(peak)})


def _peak_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def memory_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    found: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


async def until(pilot: Pilot, condition: Callable[[], object], what: str,
                limit_s: float = LIMIT_S) -> bool:
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            print(f"huge_reply_tui: never saw {what}", file=sys.stderr)
            return False
        await pilot.pause(0.05)
    return True


def reply_shown(app: JarvisApp) -> bool:
    chat = app.chat
    messages = chat.session.messages
    return (chat.reply.question is None and bool(messages) and messages[-1].role == "assistant"
            and messages[-1].status == "complete")


async def read_it_all(pilot: Pilot, out: dict[str, object]) -> None:
    """As the cut line says: Tab (the newest message is selected), V, End; what the view
    holds and its last row."""
    app = pilot.app
    await pilot.press("tab", "v")
    if not await until(pilot, lambda: app.screen.query("TextPager"), "the full-text view", 20):
        return
    pager = app.screen.query_one("TextPager")
    await pilot.press("end")
    await pilot.pause(0.2)
    text: str = pager.text  # type: ignore[attr-defined]
    last = pager.rows - 1  # type: ignore[attr-defined]
    out["viewer_chars"] = len(text)
    # Scrolled to the bottom, its last row ends where the text does.
    out["viewer_at_end"] = (pager.scroll_y >= pager.max_scroll_y and text.endswith(
        pager.row_text(last)) and pager.row_of(len(text) - 1) == last)  # type: ignore[attr-defined]
    out["viewer_mb"] = round(memory_mb()["VmRSS"])
    await pilot.press("escape")
    await until(pilot, lambda: not app.screen.query("TextPager"), "the view closed", 20)


async def hold_a_huge_reply(app: JarvisApp, mode: str, limit_s: float,
                            out: dict[str, object]) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        start = time.monotonic()
        if mode == "stream":
            await until(pilot, lambda: app.chat.is_mounted, "the chat screen")
            await pilot.press(*QUESTION)
            await pilot.press("enter")
        if not await until(pilot, lambda: reply_shown(app), "the reply, stored whole", limit_s):
            # What it held when the limit came: the app showing it whole may never get there.
            held = memory_mb()
            out["timed_out"] = round(time.monotonic() - start)
            out["held_mb"], out["peak_mb"] = round(held["VmRSS"]), round(held["VmHWM"])
            await pilot.press("ctrl+q")
            return
        await pilot.pause(0.5)  # drawn
        out["seconds"] = round(time.monotonic() - start, 1)
        out["stored_chars"] = len(app.chat.session.messages[-1].content)
        conversation = app.chat.query_one(Conversation)
        out["widgets"] = sum(1 for _ in conversation.walk_children())
        out["cut_markers"] = len(conversation.query(".cut"))
        held = memory_mb()
        out["held_mb"], out["peak_mb"] = round(held["VmRSS"]), round(held["VmHWM"])
        await read_it_all(pilot, out)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: not app.chat.session.messages, "the new session")
        await pilot.pause(2.5)  # the put-off full collection runs after a second without keys
        out["after_new_mb"] = round(memory_mb()["VmRSS"])
        await pilot.press("ctrl+q")


def main(argv: list[str]) -> int:
    mode, *args = argv
    limit_s = LIMIT_S
    if args[:1] == ["--limit"]:
        limit_s, args = float(args[1]), args[2:]
    if args and args[0] == "--whole":
        args = args[1:]
        from jarvis_tui.ui.widgets import huge_text

        huge_text.CUT_AT = sys.maxsize
    out: dict[str, object] = {"mode": mode}

    def run_under_pilot(app: JarvisApp, *_args: object, **_kwargs: object) -> None:
        asyncio.run(hold_a_huge_reply(app, mode, limit_s, out))

    JarvisApp.run = run_under_pilot  # type: ignore[method-assign]
    out["exit"] = cli.main(args)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
