"""Every action in ui/actions.py, as a user reaches it: its key, its /command, its palette entry
and its line on the F1 screen, in English and Chinese. The handlers are replaced by recorders on
the running screen, so what is checked is that the user's way in reaches that action."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from textual.command import CommandInput, CommandList
from textual.widgets import Static

from jarvis_tui.core.messages import Message
from jarvis_tui.ui.actions import (
    ACTIONS,
    REBINDABLE,
    help_keys,
    key_name,
    keys_problem,
    palette_entries,
)
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.help import HelpScreen
from jarvis_tui.ui.widgets.conversation import Conversation
from tests.ui.app_helpers import SIZE, make_app, prompt, type_and_send, wait_for

LANGS = ["en", "zh"]


def record(app: JarvisApp) -> list[tuple[str, tuple[object, ...]]]:
    """Swap every action's handler on the chat screen (and the app's quit) for a recorder."""
    ran: list[tuple[str, tuple[object, ...]]] = []
    screen = app.chat
    for action in ACTIONS:
        if not action.bound and not action.slash:
            continue
        owner = app if action.textual_action.startswith("app.") else screen
        name = action.textual_action.removeprefix("app.") or action.id

        def recorder(*args: object, _id: str = action.id) -> None:
            ran.append((_id, args))

        setattr(owner, f"action_{name}", recorder)
    return ran


@contextlib.asynccontextmanager
async def recording(fake_server, tmp_path, lang: str):  # type: ignore[no-untyped-def]
    """The app running, with every action's handler swapped for a recorder of its calls."""
    app = make_app(fake_server, tmp_path, language=lang)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot, record(app)


@pytest.mark.parametrize("lang", LANGS)
async def test_every_key_runs_its_action(fake_server, tmp_path, lang):
    async with recording(fake_server, tmp_path, lang) as (app, pilot, ran):
        # Esc stops only a reply in progress.
        app.chat.reply.question = Message("user", "on its way")
        for action in ACTIONS:
            if not action.bound or not action.keys:
                continue
            # A message action's key works where the message is selected: in the conversation.
            box = app.chat.query_one(Conversation) if action.scope == "message" else prompt(app)
            for key in action.keys.split(","):
                box.focus()
                await pilot.pause()
                ran.clear()
                await pilot.press(key)
                await pilot.pause()
                assert [i for i, _ in ran] == [action.id], (action.id, key)
        app.chat.reply.question = None


@pytest.mark.parametrize("lang", LANGS)
async def test_every_slash_command_runs_its_action(fake_server, tmp_path, lang):
    async with recording(fake_server, tmp_path, lang) as (app, pilot, ran):
        for action in ACTIONS:
            if not action.slash:
                continue
            ran.clear()
            typed = f"/{action.slash} some words" if action.arg else f"/{action.slash}"
            await type_and_send(pilot, typed)
            await pilot.pause()
            assert ran == [(action.id, ("some words",) if action.arg else ())], typed
        assert fake_server.requests == []  # none of them went to the model as a message


@pytest.mark.parametrize("lang", LANGS)
async def test_every_palette_entry_is_offered_and_runs_its_action(fake_server, tmp_path, lang):
    async with recording(fake_server, tmp_path, lang) as (app, pilot, ran):
        entries = palette_entries(lang, {})
        assert entries
        for action, title, _help in entries:
            ran.clear()
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: app.screen.query(CommandInput), "the palette")
            # Pasted rather than typed key by key: each key would search the whole palette
            # again, which is Textual's work, not ours; the search for the whole title is.
            app.screen.query_one(CommandInput).value = title
            await wait_for(pilot, lambda: app.screen.query(CommandList)
                           and app.screen.query_one(CommandList).option_count, title)
            await pilot.press("enter")
            await wait_for(pilot, lambda: ran, f"the palette running {title!r}")
            assert [i for i, _ in ran] == [action.id], title
            await wait_for(pilot, lambda: app.screen is app.chat, "the palette closed")


def help_rows(app: JarvisApp, section: str) -> list[tuple[str, str]]:
    return [tuple(str(s.content) for s in row.query(Static))  # type: ignore[misc]
            for row in app.screen.query(f".{section}-row")]


@pytest.mark.parametrize("lang", LANGS)
async def test_f1_lists_every_key_and_command(fake_server, tmp_path, lang):
    app = make_app(fake_server, tmp_path, language=lang)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        keys = help_rows(app, "keys")
        on_message = help_rows(app, "message")
        commands = help_rows(app, "commands")
    for action in ACTIONS:
        if action.keys and action.key_text:
            text = action.key_text[1] if lang == "zh" else action.key_text[0]
            rows = on_message if action.scope == "message" else keys
            assert (key_name(action.keys), text) in rows, action.id
        if action.slash and action.slash_text:
            text = action.slash_text[1] if lang == "zh" else action.slash_text[0]
            assert any(name.split()[0] == f"/{action.slash}" and desc == text
                       for name, desc in commands), action.id
    # The prompt's own keys, which no binding of ours runs, are there too.
    assert ("Ctrl+J / Alt+Enter", "New line in the message" if lang == "en" else "在消息中换行") \
        in keys


def test_readme_lists_the_actions_that_can_be_rebound():
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"Action ids for `\[keys\]`: (.*?)\.\n", readme, flags=re.S)
    assert found, "README's Configuration section lists the [keys] action ids"
    listed = re.findall(r"`([a-z_]+)` \(([^)]*)\)", found.group(1))
    assert [i for i, _ in listed] == REBINDABLE
    defaults = dict(help_keys("en", {}) + help_keys("en", {}, "message"))
    for action_id, keys in listed:
        action = next(a for a in ACTIONS if a.id == action_id)
        assert keys == key_name(action.keys), action_id
        assert key_name(action.keys) in defaults



def test_message_keys_may_be_letters_but_not_taken_twice_in_their_scope():
    assert keys_problem({"copy_code": "y"}) is None
    assert keys_problem({"copy_code": "f2"}) is None  # the screen's F2 waits behind the focus
    assert keys_problem({"copy_code": "down"}) == (
        '[keys] copy_code = "down": down would run both select_message and copy_code; give one '
        "of them another key")
    assert keys_problem({"copy_code": "ctrl+home"}) == (
        '[keys] copy_code = "ctrl+home": ctrl+home runs oldest everywhere, on a selected message '
        "too; pick another key")
    assert keys_problem({"summary": "y"}).startswith(
        "[keys] summary = \"y\": 'y' types a character into the prompt")
