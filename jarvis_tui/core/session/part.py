"""The facades ChatSession hands its callers by what they do: the part every one stands on."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from jarvis_tui.core.messages import Message
from jarvis_tui.core.settings.config import Settings, known_secrets
from jarvis_tui.core.store.store import Store

if TYPE_CHECKING:
    from jarvis_tui.core.engine.engine import Engine


class Part:
    """What a facade acts on: the open session's engine (a new one when the user switches
    sessions, so read at each use), the store, and the settings in force."""

    def __init__(self, engine: Callable[[], Engine], store: Store,
                 settings: Callable[[], Settings]) -> None:
        self._engine_of = engine
        self._store = store
        self._settings = settings

    @property
    def _engine(self) -> Engine:
        return self._engine_of()

    @property
    def id(self) -> int:
        return self._engine.conversation.id

    @property
    def messages(self) -> list[Message]:
        return self._engine.messages

    def _secrets(self) -> list[str]:
        return known_secrets(self._settings())
