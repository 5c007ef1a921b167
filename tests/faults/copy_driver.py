"""`jarvis-tui` as the user starts it (cli.main), with the full-screen app under Textual's Pilot
instead of a terminal, copying the last reply out every way a user can: F4, then Tab and C
(its code block), then `/export FILE`. Then it quits like Ctrl+Q.

    python -m tests.faults.copy_driver OUT [jarvis-tui arguments...]

Into the folder OUT it writes what left the app: `f4.osc52` and `code.osc52`, the bytes the app
wrote to the terminal for each copy (every OSC 52 sequence whole, as a terminal would read it),
`f4.txt` and `code.txt`, copied.txt after each copy, and the export at `export.md`.

Exit status: cli.main's, or 3 if a copy never arrived.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from jarvis_tui.ui.app import JarvisApp
from tests.faults.tui_driver import run_cli_under_pilot, until

OSC52 = re.compile(r"\x1b\]52;[^\x07\x1b]*(?:\x07|\x1b\\)")

written: list[str] = []  # what the app wrote to its (headless) terminal


async def copy_with(pilot: Pilot, app: JarvisApp, out: Path, name: str, *keys: str) -> None:
    """Press `keys`, wait for the copy file, and keep the OSC 52 writes and the file."""
    app.copy_file.unlink(missing_ok=True)
    written.clear()
    await pilot.press(*keys)
    await until(pilot, app.copy_file.exists, f"copied.txt after {' '.join(keys)}")
    (out / f"{name}.osc52").write_bytes("".join(OSC52.findall("".join(written))).encode())
    (out / f"{name}.txt").write_bytes(app.copy_file.read_bytes())


async def copy_everything(app: JarvisApp, out: Path) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.session.last_reply() is not None, "the stored reply")
        await pilot.pause()
        await copy_with(pilot, app, out, "f4", "f4")
        await copy_with(pilot, app, out, "code", "tab", "c")
        await pilot.press("escape")
        export = out / "export.md"
        await pilot.press(*f"/export {export}", "enter")
        await until(pilot, export.exists, "the export")
        for note in app._notifications:
            print(f"notice: {note.message}", file=sys.stderr)
        await pilot.press("ctrl+q")


def main(argv: list[str]) -> int:
    out, *args = argv
    record = HeadlessDriver.write

    def write(self: HeadlessDriver, data: str) -> None:
        written.append(data)
        record(self, data)

    HeadlessDriver.write = write  # type: ignore[method-assign]
    return run_cli_under_pilot("copy_driver", args, lambda app: copy_everything(app, Path(out)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
