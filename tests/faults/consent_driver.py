"""`jarvis-tui` as the user starts it (cli.main: its arguments, config file, session store and
tool servers), with the full-screen app under Textual's Pilot instead of a terminal, meeting the
tool approval dialog as a person does: they send a message whose reply calls a tool, then

    type  - keep typing the next message (TYPED), Enter included, from the moment the dialog
            appears; then deny with Esc and quit with Ctrl+Q once the round is over
    quit  - press Ctrl+Q while the dialog is open

    python -m tests.faults.consent_driver SCENARIO MESSAGE [jarvis-tui arguments...]

It prints what the user would see afterwards on stderr: `dialog: open|gone` once the typing is
done, `draft: '...'` (the prompt's text) before quitting. Exit status: cli.main's, or 3 if the
app never reached the step it waited for.
"""

from __future__ import annotations

import sys

from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.tool_approval import ToolApprovalScreen
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from tests.faults.tui_driver import run_cli_under_pilot, until

STEPS = 600  # pauses of 0.05 s at most per wait: a stuck app ends the run, not the test
SENTENCE = "my next message about a banana"
# What the user types: the sentence, a breath, then it again and Enter, so a dialog that only
# ignored keys for a moment would be answered by the second half.
TYPED = f"{SENTENCE} {SENTENCE}"


def tools_ready(app: JarvisApp) -> bool:
    hub = app.tools.hub if app.tools is not None else None
    return bool(hub is not None and hub.specs())


async def meet_the_dialog(app: JarvisApp, scenario: str, message: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: tools_ready(app), "the tool servers ready", STEPS)
        prompt = app.chat.query_one(PromptInput)
        prompt.load_text(message)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), "the dialog", STEPS)
        if scenario == "quit":
            await pilot.press("ctrl+q")
            return
        # One key at a time, as fingers do, from the moment the dialog is there.
        await pilot.press(*SENTENCE, "space")
        await pilot.pause(1.5)
        await pilot.press(*SENTENCE, "enter")
        await pilot.pause(0.5)
        shown = isinstance(app.screen, ToolApprovalScreen)
        print(f"dialog: {'open' if shown else 'gone'}", file=sys.stderr)
        if shown:
            await pilot.press("escape")
        await until(pilot, lambda: app.chat.reply.question is None, "the round's end", STEPS)
        await pilot.pause(0.2)
        print(f"draft: {app.chat.query_one(PromptInput).text!r}", file=sys.stderr)
        await pilot.press("ctrl+q")


def main(argv: list[str]) -> int:
    scenario, message, *args = argv
    return run_cli_under_pilot("consent_driver", args,
                               lambda app: meet_the_dialog(app, scenario, message))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
