"""`jarvis-tui` as the user starts it (cli.main: its arguments, config file and session store), with
the full-screen app under Textual's Pilot instead of a terminal, changing the theme the way a
user does: Ctrl+P, "theme", Enter, the theme's name, Enter. Then it quits like Ctrl+Q.

    python -m tests.faults.tui_driver THEME [jarvis-tui arguments...]

Exit status: cli.main's, or 3 if the palette never offered what was typed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from textual.command import CommandList
from textual.pilot import Pilot

from jarvis_tui import cli
from jarvis_tui.ui.app import JarvisApp

STEPS = 400  # pauses of 0.05 s at most per wait: a stuck palette ends the run, not the test


class NotOffered(Exception):
    """What a driver waited for never came (the palette's entry, a dialog, a copy)."""


async def until(pilot: Pilot, condition: Callable[[], object], what: str,
                steps: int = STEPS) -> None:
    for _ in range(steps):
        if condition():
            return
        await pilot.pause(0.05)
    raise NotOffered(what)


def offered(app: JarvisApp) -> int:
    found = app.screen.query(CommandList)
    return found.first().option_count if found else 0


async def choose_in_palette(pilot: Pilot, text: str) -> None:
    await pilot.press(*text)
    await until(pilot, lambda: offered(pilot.app), f"the palette offering {text!r}")
    await pilot.press("enter")
    await pilot.pause()


async def change_theme(app: JarvisApp, theme: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await choose_in_palette(pilot, "theme")
        await choose_in_palette(pilot, theme)
        await until(pilot, lambda: app.theme == theme, f"the theme becoming {theme}")
        for note in app._notifications:  # what the user would have read, e.g. "not saved"
            print(f"notice: {note.message}", file=sys.stderr)
        await pilot.press("ctrl+q")


def run_cli_under_pilot(name: str, args: list[str],
                        scenario: Callable[[JarvisApp], Coroutine[Any, Any, None]]) -> int:
    """cli.main(args) as the user starts it, with the full-screen app driven by `scenario`
    under Pilot instead of a terminal: cli.main's exit status, or 3 (and a line naming the
    driver) when something the scenario waited for never came."""
    def run_under_pilot(app: JarvisApp, *_args: object, **_kwargs: object) -> None:
        asyncio.run(scenario(app))

    JarvisApp.run = run_under_pilot  # type: ignore[method-assign]
    try:
        return cli.main(args)
    except NotOffered as gone:
        print(f"{name}: never saw {gone}", file=sys.stderr)
        return 3


def main(argv: list[str]) -> int:
    theme, *args = argv
    return run_cli_under_pilot("tui_driver", args, lambda app: change_theme(app, theme))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
