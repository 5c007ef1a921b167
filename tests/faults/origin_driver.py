"""`jarvis-tui` as the user starts it (cli.main: its arguments, config file and session store), with
the full-screen app under Textual's Pilot instead of a terminal, doing what the memory's inbox is
fed by, then reading it in F6 (Memory). It prints every notice (`notice: ...`) and every row F6
shows (`F6: ...`, a row's lines joined by " | ") to stderr, then quits like Ctrl+Q.

    python -m tests.faults.origin_driver paste QUESTION DOC [jarvis-tui arguments...]
        types QUESTION, Ctrl+J, pastes DOC as a terminal does (a bracketed paste reaches the
        app as one Paste event), types a line after it and sends; then sends filler turns
        until a compaction folds that turn in.
    python -m tests.faults.origin_driver forget QUESTION [jarvis-tui arguments...]
    python -m tests.faults.origin_driver accept-forget QUESTION [jarvis-tui arguments...]
        in the session the app opens: (accept-forget: Y on the first suggestion in F6, then)
        select QUESTION in the conversation and press x (exclude the turn).

Exit status: cli.main's, or 3 if something waited for never came.
"""

from __future__ import annotations

import sys

from textual import events
from textual.pilot import Pilot
from textual.widgets import OptionList

from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.memory import MemoryScreen
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from tests.faults.tui_driver import run_cli_under_pilot, until
from tests.faults.turns_driver import notices, select

AFTER_PASTE = "Please sum it up for me."
FILLER = "Question {i}: explain concept {i} of the deploy tool. " + "detail " * 150
MAX_FILLERS = 8


async def send(pilot: Pilot, app: JarvisApp) -> None:
    """Enter, then wait for the round to end."""
    before = len(app.chat.session.messages)
    await pilot.press("enter")
    await until(pilot, lambda: app.chat.reply.question is None
                and len(app.chat.session.messages) > before, "the reply")
    await pilot.pause()


async def paste_then_fold(pilot: Pilot, app: JarvisApp, question: str, doc: str) -> None:
    prompt = app.chat.query_one(PromptInput)
    prompt.focus()
    await pilot.press(*question)  # typed, key by key
    await pilot.press("ctrl+j")
    app.post_message(events.Paste(doc))  # where the terminal's bracketed paste arrives
    await until(pilot, lambda: doc.strip() in prompt.text, "the paste in the prompt")
    await pilot.press(*AFTER_PASTE)
    await send(pilot, app)
    asked = next(m.id for m in app.chat.session.messages if m.role == "user")

    def folded() -> bool:  # the session's records are read again after a compaction
        return any(m.covered for m in app.chat.session.messages if m.id == asked)

    for i in range(MAX_FILLERS):
        if folded():
            break
        prompt.insert(FILLER.format(i=i))  # filler: no sentence in it is worth remembering
        await send(pilot, app)
        await until(pilot, lambda: not app.chat.compaction_work.running, "the compaction to end")
    await until(pilot, folded, "a compaction folding the pasted turn in")


async def forget(pilot: Pilot, app: JarvisApp, question: str, accept: bool) -> None:
    if accept:
        screen = await open_memory(pilot)
        options = screen.query_one(OptionList)
        first = next(e for e in screen.entries if e.state == "suggested")
        options.highlighted = options.get_option_index(str(first.id))
        await pilot.press("y")
        await until(pilot, lambda: any(e.id == first.id and e.state == "active"
                                       for e in screen.entries), "the suggestion accepted")
        print(f"accepted: {first.text}", file=sys.stderr)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, MemoryScreen), "F6 closed")
    await select(pilot, app, question)
    await pilot.press("x")
    await until(pilot, lambda: any(m.excluded for m in app.chat.session.messages
                                   if m.content == question), "the turn excluded")
    await pilot.pause()


async def open_memory(pilot: Pilot) -> MemoryScreen:
    await pilot.press("f6")
    await until(pilot, lambda: isinstance(pilot.app.screen, MemoryScreen), "the Memory screen")
    await pilot.pause()
    return pilot.app.screen  # type: ignore[return-value]


async def report_memory(pilot: Pilot, app: JarvisApp) -> None:
    seen: list[str] = []
    notices(app, seen)
    for text in seen:
        print(f"notice: {text}", file=sys.stderr)
    screen = await open_memory(pilot)
    options = screen.query_one(OptionList)
    for i in range(options.option_count):
        shown = str(options.get_option_at_index(i).prompt)
        print("F6: " + " | ".join(shown.splitlines()), file=sys.stderr)
    await pilot.press("escape")


def scenario(mode: str, question: str, doc: str):  # type: ignore[no-untyped-def]
    async def run(app: JarvisApp) -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            if mode == "paste":
                await paste_then_fold(pilot, app, question, doc)
            else:
                await forget(pilot, app, question, accept=mode == "accept-forget")
            await report_memory(pilot, app)
            app.chat.query_one(Conversation)  # still there: the app did not fall over
            await pilot.press("ctrl+q")
    return run


def main(argv: list[str]) -> int:
    mode, question, *rest = argv
    if mode not in ("paste", "forget", "accept-forget"):
        print(f"origin_driver: no mode {mode!r}", file=sys.stderr)
        return 2
    doc, args = (rest[0], rest[1:]) if mode == "paste" else ("", rest)
    return run_cli_under_pilot("origin_driver", args, scenario(mode, question, doc))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
