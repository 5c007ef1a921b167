"""Fault-matrix cases for time and size limits (issue 13, items 6 and 7): servers that never
answer, trickle, stream without end or ignore max_tokens, and replies of tens of megabytes."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from tests.faults import Proc, ProcCase, ProcOutcome, Trial, command
from tests.hostile_server import (
    HostileServer,
    Play,
    endless,
    flood,
    keepalive_forever,
    one_line,
    past_max_tokens,
    silent,
    trickle_headers,
)

# Small deadlines, so each case ends in seconds; the defaults are minutes (README).
DEADLINES = """request_timeout = 1.5
first_token_timeout = 2.5
reply_timeout = 4.0
retry_base_delay = 0.1
retry_max_delay = 0.2
"""


def _bounded(item: int, name: str, play: Play, said: str, *, reply_kept: str | None = None,
             extra: tuple[str, ...] = ()) -> ProcCase:
    """A server that would keep `ask` waiting forever: it must end within a few seconds with
    exit 1 and a line saying which limit stopped it, keeping the question (and `reply_kept`)."""
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(item, name, tmp)
        t.write_config(DEADLINES)
        question = f"question for a server that misbehaves ({name})"
        with HostileServer(play) as server:
            ask = t.run("--base-url", server.base_url, "--model", "m", *extra, "ask", question,
                        timeout=30)
        t.expect(ask.returncode == 1, f"exit {ask.returncode}")
        t.expect(said in ask.stderr, f"no {said!r} in: {ask.stderr.strip()[-120:]!r}")
        t.keeps([question] + ([reply_kept] if reply_kept else []))
        return t.outcome(f"{ask.seconds:.1f}s: " + ask.stderr.strip().splitlines()[-1][:90]
                         if ask.stderr.strip() else "")
    return ProcCase(item, name, run)


def _huge(item: int, name: str, play: Play, size: int) -> ProcCase:
    """A reply of `size` characters: streamed, printed and stored whole in bounded time, with
    the peak memory of the process in the result."""
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(item, name, tmp)
        with HostileServer(play) as server:
            # A window and reply limit as large as the reply: this server is not runaway.
            ask, peak_mb = _measured(t, tmp, "--base-url", server.base_url, "--model", "m",
                                     "--context-window", "20000000", "--response-reserve",
                                     "10000000", "ask", "send me everything")
        t.expect(ask.returncode == 0, f"exit {ask.returncode}: {ask.stderr.strip()[-100:]}")
        printed = (tmp / "stdout").stat().st_size
        t.expect(printed >= size, f"printed {printed} of {size} characters")
        stored = [m for m in t.messages() if m.role == "assistant"]
        got = len(stored[-1].content) if stored else 0
        if not t.expect(got >= size and stored[-1].status == "complete",
                        f"stored {got} of {size} characters"):
            t.lost += 1
        return t.outcome(f"{size / 1e6:.0f} MB in {ask.seconds:.1f}s, peak {peak_mb:.0f} MB")
    return ProcCase(item, name, run)


def _measured(t: Trial, tmp: Path, *args: str, timeout: float = 240) -> tuple[Proc, float]:
    """Run with stdout to a file (tens of MB); the child's own peak memory in MB beside it."""
    out, err = tmp / "stdout", tmp / "stderr"
    start = time.monotonic()
    with out.open("wb") as o, err.open("wb") as e:
        child = subprocess.Popen(command(*args), env=t.env, stdout=o, stderr=e)
        killer = threading.Timer(timeout, child.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    t.expect(child.returncode >= 0, f"killed after {timeout:g}s")
    proc = Proc(list(args), child.returncode, "", err.read_text("utf-8", "replace"),
                time.monotonic() - start)
    return t.add(proc), usage.ru_maxrss / 1024


CASES: list[ProcCase] = [
    _bounded(6, "server accepts and never answers", silent, "(read timeout"),
    _bounded(6, "headers trickled a byte at a time", trickle_headers, "first_token_timeout"),
    _bounded(6, "keep-alives without end, never a token", keepalive_forever,
             "first_token_timeout"),
    _bounded(6, "a stream that never ends", endless, "reply_timeout", reply_kept="word0 word1"),
    _bounded(6, "a reply far past max_tokens", past_max_tokens, "past the reply limit",
             reply_kept="and more words", extra=("--response-reserve", "64")),
    _huge(7, "a 30 MB reply", flood(30_000_000), 30_000_000),
    _huge(7, "a 40 MB single stream line", one_line(40_000_000), 40_000_000),
]
