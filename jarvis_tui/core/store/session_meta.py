"""What a session learned about its server (a window limit, a calibration), kept for later ones.

What is learned holds in memory for this session anyway, so a database that is locked or full for
now neither stops the round nor holds up a streaming reply: writes give up quickly and silently.
"""

from __future__ import annotations

import contextlib

from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.store.store import Store

STREAM_SAVE_WAIT_S = 0.05  # a save while streaming waits this long for a lock, then tries later


class SessionMeta:
    def __init__(self, store: Store, conversation_id: int) -> None:
        self.store = store
        self.conversation_id = conversation_id

    def get(self, key: str) -> object:
        return self.store.get_meta(self.conversation_id, key)

    def remember(self, key: str, value: object) -> None:
        with contextlib.suppress(StoreError):
            self.store.set_meta(self.conversation_id, key, value, wait=STREAM_SAVE_WAIT_S)
