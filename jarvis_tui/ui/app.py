"""The Textual app. Until the chat screens land, a holding screen that shows the settings in use
and points to the command-line mode, which already runs the full engine."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Footer, Header, Static

from jarvis_tui.core.budget import Budget, resolve_context_window
from jarvis_tui.core.config import Settings


class JarvisApp(App[None]):
    TITLE = "jarvis-tui"
    BINDINGS = [Binding("q", "quit", "Quit"), Binding("ctrl+q", "quit", "Quit", show=False)]
    CSS = "#info { padding: 1 2; }"

    def __init__(self, settings: Settings):
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        window, source = resolve_context_window(s.context_window, s.model)
        budget = Budget(window, s.response_reserve, s.system_reserve, s.compact_threshold)
        yield Header()
        with Vertical(id="info"):
            yield Static("The full-screen chat is on its way. Meanwhile the whole engine "
                         "(windowing, compaction, retries) runs from the command line:",
                         markup=False)
            yield Static('  jarvis-tui ask "your message"     (jarvis-tui --help for more)\n',
                         markup=False)
            yield Static(f"model        {s.model}\nbase URL     {s.base_url}\n"
                         f"window       {window} tokens ({source})\n"
                         f"budget       {budget.tokens} tokens, compacting at "
                         f"{int(s.compact_threshold * 100)}%", markup=False, id="settings")
        yield Footer()
