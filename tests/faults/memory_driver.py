"""`jarvis-tui` as the user starts it (cli.main: its arguments, config file and session store), with
the full-screen app under Textual's Pilot instead of a terminal, meeting its memory the way a user
does: F6, Y on the first suggestion waiting there, Esc; then `/remember TEXT`, and one message
sent. Then it quits like Ctrl+Q.

    python -m tests.faults.memory_driver TEXT MESSAGE [jarvis-tui arguments...]

It prints what the user saw, one a line, to stderr: `row: ...` for each line of F6's list before
the yes, `accepted: ...` after it, `note: ...` for F6's note line, `notice: ...` for each notice
in the conversation. Exit status: cli.main's, or 3 if the app never reached a step it waited for.
"""

from __future__ import annotations

import sys

from textual.widgets import OptionList, Static

from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.memory import MemoryScreen
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from tests.faults.tui_driver import NotOffered, run_cli_under_pilot, until
from tests.faults.turns_driver import notices


def shown_rows(screen: MemoryScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [line for i in range(options.option_count)
            for line in str(options.get_option_at_index(i).prompt).splitlines()]


def note(screen: MemoryScreen) -> str:
    found = screen.query("#memory_note")  # an older app has no such line
    return str(found.first(Static).render()) if found else ""


async def meet_the_memory(app: JarvisApp, text: str, message: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, MemoryScreen), "the Memory screen")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        for line in shown_rows(screen):
            print(f"row: {line}", file=sys.stderr)
        waiting = [e for e in screen.entries if e.state == "suggested"]
        if not waiting:
            raise NotOffered("a suggestion in F6")
        options = screen.query_one(OptionList)
        options.highlighted = options.get_option_index(str(waiting[0].id))
        await pilot.press("y")
        await until(pilot, lambda: any(e.id == waiting[0].id and e.state == "active"
                                       for e in screen.entries), "the suggestion accepted")
        for line in shown_rows(screen):
            print(f"accepted: {line}", file=sys.stderr)
        print(f"note: {note(screen)}", file=sys.stderr)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, MemoryScreen), "F6 closed")
        seen: list[str] = []
        prompt = app.chat.query_one(PromptInput)
        prompt.load_text(f"/remember {text}")
        await pilot.press("enter")

        def remembered() -> bool:
            notices(app, seen)
            return any(line.startswith(("🧠", "✖")) for line in seen)
        await until(pilot, remembered, "the line saying what /remember did")
        prompt.load_text(message)
        await pilot.press("enter")

        def answered() -> bool:
            said = app.chat.session.messages
            return not app.chat.reply.on_its_way and len(said) >= 2 \
                and said[-1].role == "assistant" and said[-2].role == "user" \
                and said[-2].content == message
        await until(pilot, answered, "the reply")
        await pilot.pause()
        notices(app, seen)
        for line in seen:
            print(f"notice: {line}", file=sys.stderr)
        await pilot.press("ctrl+q")


def main(argv: list[str]) -> int:
    text, message, *args = argv
    return run_cli_under_pilot("memory_driver", args,
                               lambda app: meet_the_memory(app, text, message))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
