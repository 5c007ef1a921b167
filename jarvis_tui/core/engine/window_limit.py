"""The context window a session's requests are fitted to, and where that number came from.

Configured, or the known model table; then what the server says when asked (context_window 0, or
a server that cuts instead of refusing), and what its refusals teach, which is kept for the
session's later runs unless it looks like a misbehaving proxy's error.
"""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import resolve_context_window
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.session_meta import SessionMeta

META_LIMIT = "context_limit"
META_SUSPECT = "context_limit_suspect"  # a limit that looked wrong, seen once
# The window configured when the limit was learned: a limit holds until the user configures
# another window, not each time the same one is given again.
META_UNDER = "context_limit_configured"
LEARNED = "learned from the server"
DETECTED = "detected from the server"
SERVERS_WORD = (LEARNED, DETECTED)  # sources where the server itself named the window
# A learned limit this small, or this many times below the configured window, is more likely a
# misbehaving proxy's error than the model's window: it is kept only once seen twice.
SANE_LIMIT = 1024
FAR_BELOW = 8


class WindowLimit:
    def __init__(self, settings: Settings, meta: SessionMeta) -> None:
        self.settings = settings
        self.meta = meta
        self.size = 0
        self.source = ""
        self.detected = False  # the server was asked for its window (setting 0) once
        self.resolve()

    def resolve(self) -> None:
        self.size, self.source = resolve_context_window(self.settings.context_window,
                                                        self.settings.model)
        under = self.meta.get(META_UNDER)
        if under is not None and under != self.settings.context_window:
            # Learned under another configured window (a config file or variable changed
            # since): what the server has now is news, as with --context-window.
            self.forget()
        learned = self.meta.get(META_LIMIT)
        if isinstance(learned, int) and 0 < learned < self.size:
            self.size, self.source = learned, LEARNED

    def forget(self) -> None:
        self.meta.remember(META_LIMIT, None)
        self.meta.remember(META_SUSPECT, None)
        self.meta.remember(META_UNDER, None)

    def window_given(self) -> None:
        """The window was given now (on the command line): it says what the server has, so a
        limit learned under another configured window is dropped. Under the same one it
        stands: giving the same --context-window on every call is not news, and dropping the
        limit each time would meet the same overflow again on every call."""
        under = self.meta.get(META_UNDER)
        if self.meta.get(META_LIMIT) is None or under != self.settings.context_window:
            # A limit kept before the window it was learned under was (None) is dropped too.
            self.forget()
            self.resolve()

    def learn(self, limit: int) -> ev.ContextLimitLearned:
        """Adopt a limit a server named or implied for this session; keep it for later ones
        unless it looks wrong and has not been seen before."""
        previous, self.size, self.source = self.size, limit, LEARNED
        configured = self.settings.context_window
        suspect = limit < SANE_LIMIT or (configured > 0 and limit * FAR_BELOW < configured)
        if suspect and self.meta.get(META_SUSPECT) != limit:
            self.meta.remember(META_SUSPECT, limit)
            return ev.ContextLimitLearned(limit, previous, suspect=True)
        self.meta.remember(META_LIMIT, limit)
        self.meta.remember(META_UNDER, configured)
        self.meta.remember(META_SUSPECT, None)
        return ev.ContextLimitLearned(limit, previous)

    def apply(self, settings: Settings) -> None:
        """New settings: a window the user sets says what the server has now (a bigger server,
        a new model), so a limit learned from the old one's errors no longer holds; and a new
        model or address may run with another window, so it is asked again."""
        if settings.context_window != self.settings.context_window:
            self.forget()
        self.settings = settings
        self.resolve()
        self.detected = False

    async def detect(self, provider: Provider) -> ev.WindowDetected | None:
        """With context_window 0, ask the server once what window it runs the model with.

        A limit the server already taught us by refusing a request is smaller and stays."""
        silent = provider.truncates_silently
        # A server that cuts instead of refusing is asked even when a window is configured:
        # it would quietly run the model with its own smaller one.
        if self.detected or (self.settings.context_window > 0 and not silent):
            return None
        self.detected = True
        size = await provider.detect_context_window(self.settings.model)
        if not size or size <= 0:
            return None
        if self.source in (LEARNED, "configured") and self.size <= size:
            return None
        self.size, self.source = size, DETECTED
        return ev.WindowDetected(size)
