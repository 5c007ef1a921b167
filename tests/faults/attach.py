"""Fault-matrix rows of issue 42's bad input: each path `ask --attach` is handed stops the
command with one line, in bounded time, before a session or request is made, and what came on
standard input is kept. (A file the user cannot read is tests/core/attach/test_read.py's: the
matrix runs as root here, and root reads everything.)"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial
from tests.images import bomb, image

QUESTION = "what is in this file? (piped in: kept when the file is refused)"


def _huge(tmp: Path) -> str:
    path = tmp / "huge.log"
    with open(path, "wb") as f:
        f.truncate(2 * 1024**3)  # sparse: 2 GB said by its size, none of it written
    return str(path)


def _fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "pipe")
    return str(tmp / "pipe")


def _named(tmp: Path) -> str:
    path = tmp / "report\u202etxt.exe"
    path.write_text("x", encoding="utf-8")
    return str(path)


def _loop(tmp: Path) -> str:
    (tmp / "a").symlink_to(tmp / "b")
    (tmp / "b").symlink_to(tmp / "a")
    return str(tmp / "a")


def _liar(tmp: Path) -> str:
    (tmp / "photo.png").write_text("<html>not a picture</html>", encoding="utf-8")
    return str(tmp / "photo.png")


def _bomb_file(tmp: Path) -> str:
    (tmp / "bomb.png").write_bytes(bomb(100_000, 100_000))
    return str(tmp / "bomb.png")


ROWS: list[tuple[int, str, Callable[[Path], str], str]] = [
    (1, "--attach a 2 GB file", _huge, "is 2.0 GB, over the 16.0 MB an attachment may be"),
    (2, "--attach a FIFO", _fifo, "is a fifo, not a file"),
    (3, "--attach /dev/zero", lambda tmp: "/dev/zero", "is a character device, not a file"),
    (4, "--attach a name with a bidi mark", _named, "holds control characters or invisible"),
    (5, "--attach a symlink loop", _loop, "is a symbolic link that leads back to itself"),
    (6, "--attach a .png that is HTML", _liar, "is named as a PNG image but holds text"),
    (7, "--attach a decompression bomb", _bomb_file, "a decompression bomb"),
]


def _row(item: int, name: str, make: Callable[[Path], str], said: str) -> ProcCase:
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(item, name, tmp, issue=42)
        path = make(tmp)
        with FakeProvider() as fake:
            flags = ("--base-url", fake.base_url, "--model", "m")
            done = t.run(*flags, "ask", "--attach", path, QUESTION, timeout=30)
            piped = t.run(*flags, "ask", "--attach", path, "-", stdin=QUESTION, timeout=30)
            t.expect(fake.chat_requests == [], "a request was made")
        for proc in (done, piped):
            t.expect(proc.returncode == 2, f"exit {proc.returncode}")
            t.expect(said in proc.stderr, f"said: {proc.stderr.strip()[-120:]!r}")
            t.expect(proc.seconds < 20, f"took {proc.seconds:.1f} s")
        t.expect(len(done.stderr.strip().splitlines()) == 1, "more than one line")
        t.keeps([QUESTION])  # from standard input: kept, unanswered
        return t.outcome(done.stderr.strip().removeprefix("jarvis-tui: "))
    return ProcCase(item, name, run, issue=42)


def _no_vision(tmp: Path) -> ProcOutcome:
    """An image to a model whose server reads none: one line, not a retried 400, the question
    kept; the next image to it is refused before any request, its piped words kept too."""
    t = Trial(8, "--attach an image to a model without vision", tmp, issue=42)
    (tmp / "shot.png").write_bytes(image(640, 480))
    with FakeProvider(vision=False) as fake:
        flags = ("--base-url", fake.base_url, "--model", "m")
        first = t.run(*flags, "ask", "--attach", str(tmp / "shot.png"), QUESTION, timeout=30)
        sent = len(fake.chat_requests)
        again = t.run(*flags, "ask", "--attach", str(tmp / "shot.png"), "-",
                      stdin=QUESTION + " again", timeout=30)
        t.expect(len(fake.chat_requests) == sent == 1,
                 f"{len(fake.chat_requests)} requests (one, refused once)")
    said = [line for line in first.stderr.splitlines() if "takes no images" in line]
    t.expect(first.returncode == 1 and len(said) == 1, f"first: exit {first.returncode}, "
             f"{first.stderr.strip()[-120:]!r}")
    t.expect(again.returncode == 2 and "Not attached: m takes no images" in again.stderr,
             f"again: exit {again.returncode}, {again.stderr.strip()[-120:]!r}")
    for proc in (first, again):
        t.expect(proc.seconds < 20, f"took {proc.seconds:.1f} s")
    t.keeps([QUESTION, QUESTION + " again"])
    return t.outcome(said[0].removeprefix("jarvis-tui: ") if said else "")


CASES: list[ProcCase] = [*(_row(*row) for row in ROWS),
                         ProcCase(8, "--attach an image to a model without vision", _no_vision,
                                  issue=42)]
