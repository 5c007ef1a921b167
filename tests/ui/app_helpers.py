"""Running the real app against the fake provider server, and waiting for it to get somewhere."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from textual.pilot import Pilot

from jarvis_tui.core.providers.local_server import LocalServer
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.app import JarvisApp
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.screens.proposal_editor import ProposalEditor
from jarvis_tui.ui.themes import builtin_theme_dir
from jarvis_tui.ui.widgets.conversation import Conversation, Notice
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from tests.engine_helpers import BASE
from tests.fakeserver import FakeProvider

SIZE = (120, 40)


def make_app(fake: FakeProvider | str, tmp_path: Path, *, store: Store | None = None,
             config_text: str | None = None, local_server: LocalServer | None = None,
             first_run: bool = False, window_given: bool = False,
             **changes: object) -> JarvisApp:
    base_url = fake if isinstance(fake, str) else fake.base_url
    changes = {"language": "en", **changes}
    settings: Settings = replace(BASE, base_url=base_url, **changes)
    config = tmp_path / "config.toml"
    if config_text is not None:
        config.write_text(config_text, encoding="utf-8")
    # The user's own theme folder is a temporary one, so a test never reads the real ~/.config.
    dirs = [d for d in (builtin_theme_dir(), tmp_path / "themes") if d is not None]
    return JarvisApp(settings, store or Store(tmp_path / "sessions.db"), config_file=config,
                     theme_dirs=dirs, local_server=local_server, first_run=first_run,
                     window_given=window_given, copy_file=tmp_path / "cache" / "copied.txt")


async def wait_for(pilot: Pilot, condition: Callable[[], object], what: str,
                   limit_s: float = 15.0) -> None:
    """Let the app run until `condition()` holds; fail with `what` if it never does."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for: {what}")
        await pilot.pause(0.02)


def chat(app: JarvisApp) -> ChatScreen:
    screen = app.screen
    assert isinstance(screen, ChatScreen), f"expected the chat screen, got {screen!r}"
    return screen


def views(app: JarvisApp) -> list[MessageView]:
    return app.chat.query_one(Conversation).views()


def notices(app: JarvisApp) -> list[str]:
    return [str(n.content) for n in app.chat.query_one(Conversation).query_children(Notice)]


def prompt(app: JarvisApp) -> PromptInput:
    return app.chat.query_one(PromptInput)


async def type_and_send(pilot: Pilot, text: str) -> None:
    box = prompt(pilot.app)  # type: ignore[arg-type]
    box.focus()
    box.load_text(text)
    await pilot.press("enter")


def submit(app: JarvisApp, text: str) -> None:
    """Send `text` as Enter would, without waiting. (pilot.press("enter") waits for the app to
    be idle, which it is not until a streaming reply ends.)"""
    box = prompt(app)
    box.load_text(text)
    box.action_submit()


async def send_and_wait(pilot: Pilot, text: str, limit_s: float = 15.0) -> None:
    """Send one message and wait until its round is over (reply or error)."""
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    before = len(app.chat.session._engine.messages)
    await type_and_send(pilot, text)
    await wait_for(pilot, lambda: app.chat.reply.question is None
                   and len(app.chat.session._engine.messages) > before,
                   f"the reply to {text[:30]!r}", limit_s)
    await pilot.pause()


async def talk_then_compact(pilot: Pilot, lines: list[str], command: str = "/compact") -> None:
    """A few rounds, then a manual compaction whose proposed summary is accepted as it is
    (Ctrl+S), waited for until the summary is stored."""
    for line in lines:
        await send_and_wait(pilot, line)
    await propose(pilot, command)
    await accept(pilot)


async def propose(pilot: Pilot, command: str = "/compact") -> ProposalEditor:
    """Run /compact and wait for its proposed summary to open in the editor."""
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    await type_and_send(pilot, command)
    await wait_for(pilot, lambda: isinstance(app.screen, ProposalEditor), "the proposed summary")
    await pilot.pause()
    assert isinstance(app.screen, ProposalEditor)
    return app.screen


async def accept(pilot: Pilot) -> None:
    """Ctrl+S in the open proposal, waited for until its summary is stored."""
    app: JarvisApp = pilot.app  # type: ignore[assignment]
    before = app.chat.session.summary
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: app.chat.compaction_work.proposal is None,
                   "the proposal to be stored")
    assert app.chat.session.summary is not before, "the accepted summary was not stored"


def screen_text(app: JarvisApp) -> str:
    """The screen as a person sees it: the text of an SVG screenshot."""
    import html
    import re

    svg = app.export_screenshot()
    lines = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return "\n".join(html.unescape(line).replace("\xa0", " ") for line in lines)
