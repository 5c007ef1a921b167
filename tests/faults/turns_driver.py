"""`jarvis-tui` as the user starts it (cli.main: its arguments, config file and session store), with
the full-screen app under Textual's Pilot instead of a terminal, answering an earlier question
again the way a user does: Tab into the conversation, Home, Down to the question, `r`; once the
answer is in, `<` on the question (back to the version before). Then it quits like Ctrl+Q,
having printed every notice and the messages shown, one a line, to stderr.

    python -m tests.faults.turns_driver QUESTION [jarvis-tui arguments...]

Exit status: cli.main's, or 3 if the question was never shown or never answered. With
TURNS_DRIVER_PRESSED=PATH in its environment, it creates PATH once `r` was pressed and the app
said it waits for another process answering in the session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.widgets.conversation import Conversation, Notice
from tests.faults.tui_driver import NotOffered, run_cli_under_pilot, until
from tests.faults.turns import PRESSED, WAITS


async def select(pilot: Pilot, app: JarvisApp, text: str) -> None:
    conversation = app.chat.query_one(Conversation)
    if not conversation.has_focus:
        await pilot.press("tab")
    await pilot.press("home")
    for _ in range(40):
        view = conversation.selected_view
        if view is not None and view.message.content == text:
            return
        await pilot.press("down")
        await pilot.pause()
    raise NotOffered(f"the question {text!r} to select")


def notices(app: JarvisApp, seen: list[str]) -> None:
    """Every notice shown so far, each once: a later view of the session replaces them."""
    conversation = app.chat.query_one(Conversation)
    shown = [str(n.content) for n in conversation.query_children(Notice)]
    shown += [str(note.message) for note in app._notifications]
    seen.extend(text for text in shown if text not in seen)


async def watching(pilot: Pilot, seen: list[str], condition: Callable[[], object],
                   what: str) -> None:
    app: JarvisApp = pilot.app  # type: ignore[assignment]

    def noted() -> object:
        notices(app, seen)
        return condition()
    await until(pilot, noted, what)


def report(app: JarvisApp, seen: list[str], when: str) -> None:
    notices(app, seen)
    for text in seen:
        print(f"notice: {text}", file=sys.stderr)
    seen.clear()
    for view in app.chat.query_one(Conversation).views():
        print(f"{when}: {view.message.role}: {view.message.content}", file=sys.stderr)


async def answer_again(app: JarvisApp, question: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        seen: list[str] = []
        await select(pilot, app, question)
        await pilot.press("r")
        if os.environ.get(PRESSED):  # the case holds the other reply until the app waits for it
            await watching(pilot, seen, lambda: any(WAITS in text for text in seen),
                           "the notice that the retry waits for the other process")
            Path(os.environ[PRESSED]).touch()
        shown = app.chat.session
        await watching(pilot, seen, lambda: app.chat.reply.question is None and shown.messages
                       and shown.messages[-1].role == "assistant"
                       and question in shown.messages[-1].content,
                       "the answer to the question asked again")
        await pilot.pause()
        report(app, seen, "answered")
        await select(pilot, app, question)
        await pilot.press("less_than_sign")
        await pilot.pause()
        report(app, seen, "after <")
        await pilot.press("ctrl+q")


def main(argv: list[str]) -> int:
    question, *args = argv
    return run_cli_under_pilot("turns_driver", args, lambda app: answer_again(app, question))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
