"""Rebinding keys with the config file's [keys] table, through the real command line: the new key
runs the action, the old one no longer does, Footer and F1 show the new key; a bad table stops
the program with one line and exit status 2 before the app starts."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from textual import events
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.binding import Binding

from jarvis_tui import cli
from jarvis_tui.core.settings.keys import SENT_AS
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.help import HelpScreen
from jarvis_tui.ui.screens.sessions import SessionsScreen
from tests.cli.test_cli import run, write_config
from tests.faults import home_env
from tests.ui.app_helpers import SIZE, notices, screen_text, wait_for
from tests.ui.test_actions import help_rows


def test_a_rebound_key_runs_its_action_and_the_old_one_does_not(fake_server, tmp_path,
                                                                 monkeypatch):
    for name, value in home_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    config = write_config(tmp_path, 'language = "en"\n[keys]\nsummary = "f9"\n'
                                    'sessions = "ctrl+g,f8"\n')
    seen: dict[str, object] = {}

    async def use(app: JarvisApp) -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            seen["footer"] = screen_text(app)
            before = list(notices(app))
            await pilot.press("f2")  # summary's old key: nothing happens
            await pilot.pause()
            seen["f2 said"] = notices(app)[len(before):]
            await pilot.press("f9")
            await wait_for(pilot, lambda: any("No summary yet" in n for n in notices(app)),
                           "the summary action on F9")
            await pilot.press("ctrl+o")  # sessions' old key
            await pilot.pause()
            seen["ctrl+o opened sessions"] = isinstance(app.screen, SessionsScreen)
            await pilot.press("f8")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), "F8")
            await pilot.press("escape")
            await pilot.press("f1")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            seen["help"] = help_rows(app, "keys")

    def run_under_pilot(app: JarvisApp, *_args: object, **_kwargs: object) -> None:
        asyncio.run(use(app))

    monkeypatch.setattr(JarvisApp, "run", run_under_pilot)
    assert cli.main(["--config", str(config), "--base-url", fake_server.base_url,
                     "--model", "fake-model"]) == 0
    assert "f9" in seen["footer"] and "f2" not in seen["footer"]
    assert seen["f2 said"] == []
    assert seen["ctrl+o opened sessions"] is False
    assert ("F9", "Summary") in seen["help"]
    assert ("Ctrl+G / F8", "Sessions") in seen["help"]
    assert ("F2", "Summary") not in seen["help"]


@pytest.mark.parametrize(("table", "line"), [
    ('summary = "f66"', '[keys] summary = "f66": unknown key name \'f66\'; keys are written like '
                        "ctrl+n, f5, alt+enter"),
    ('sumary = "f6"', "[keys] sumary = \"f6\": unknown action 'sumary'; did you mean 'summary'?"),
    ('summary = "f1"', '[keys] summary = "f1": f1 would run both help and summary; give one of '
                       "them another key"),
    ('summary = "f9"\nsessions = "f9"', '[keys] sessions = "f9": f9 would run both summary and '
                                        "sessions; give one of them another key"),
    ("summary = 6", "[keys] summary = 6: expected a key in quotes"),
    ('summary = "f6"', '[keys] summary = "f6": the prompt, which has the focus, uses f6 itself'),
    ('summary = "ctrl+m"', '[keys] summary = "ctrl+m": a terminal sends ctrl+m as enter, so '
                           'summary would never run; pick another key, like "ctrl+g" or "f9"'),
])
def test_a_bad_keys_table_stops_with_one_line(home, tmp_path, fake_server, table, line):
    config = write_config(tmp_path, f"[keys]\n{table}\n")
    result = run(home, "--config", str(config), "--base-url", fake_server.base_url,
                 "--model", "fake-model")
    assert result.returncode == 2
    assert result.stderr.startswith(f"jarvis-tui: {config}: {line}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def read_by_textual(data: str) -> list[str]:
    """The keys Textual's terminal parser reads from these bytes, as a real terminal sends them."""
    parser = XTermParser()
    found = list(parser.feed(data))
    with contextlib.suppress(ParseError):  # the end of input flushes a lone Esc
        found += list(parser.feed(""))
    return [e.key for e in found if isinstance(e, events.Key)]


async def test_keys_refused_as_unsendable_never_reach_a_binding_and_their_byte_is_another_key():
    """The core's table (which cannot import Textual) against Textual itself: each refused key's
    byte is read as the key the table names, and a binding to the refused key never runs."""
    ran: list[str] = []

    class Bound(App[None]):
        BINDINGS = [Binding(key, f"ran({key!r})", priority=True) for key in SENT_AS] + [
            Binding("ctrl+@,ctrl+j", "ran('sendable')", priority=True)]

        def action_ran(self, key: str) -> None:
            ran.append(key)

    app = Bound()
    async with app.run_test() as pilot:
        for key, (data, arrives) in SENT_AS.items():
            assert read_by_textual(data) == [arrives], key
            app.post_message(events.Key(arrives, data))
            await pilot.pause()
        # Only what the bytes are read as ran: ctrl+@ for the three that send NUL.
        assert ran == ["sendable"] * 3
        assert read_by_textual("\n") == ["ctrl+j"]
