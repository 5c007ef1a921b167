"""What the chat screen and the tool servers' view use of the app, as Protocols: ui/app.py's
JarvisApp is the one host, and it imports them, so they must not import it back (a circle
that made every screen load the whole app)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen

    from jarvis_tui.core.session import ChatSession
    from jarvis_tui.core.settings.config import Settings
    from jarvis_tui.ui.local_model import LocalModel


class ChatView(Protocol):
    """The chat screen as the tool servers speak through it."""

    session: ChatSession

    async def say(self, text: str, kind: str = "info") -> None: ...

    def update_gauge(self) -> None: ...


class ServerList(Protocol):
    """The tool servers as F5's list reads them."""

    def statuses(self) -> list[Any]: ...


class AppHost(Protocol):
    settings: Settings
    language: str
    copy_file: Path  # where copies go besides the clipboard
    local: LocalModel | None  # the demo model's server, while the app loads or runs it
    tools: ServerList | None

    @property
    def session(self) -> ChatSession: ...

    @property
    def chat(self) -> ChatView: ...

    # Textual's App gives these; the tool servers' view hands work to the app's loop.
    @property
    def screen(self) -> Screen[Any]: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any,
                         **kwargs: Any) -> Any: ...

    def action_settings(self) -> None: ...

    def action_sessions(self) -> None: ...

    async def open_session(self, conversation_id: int | None) -> None: ...

    async def relocalize(self) -> None: ...
