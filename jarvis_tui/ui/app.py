"""The Textual app: sessions, settings, themes and the command palette around the chat screen."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.providers.local_server import LocalServer
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.session import ChatSession, ProviderFactory, Store, StoreError
from jarvis_tui.core.settings.config import ConfigError, Settings, config_path, update_settings_file
from jarvis_tui.texts.app_texts import APP_TEXTS
from jarvis_tui.texts.i18n import resolve_language
from jarvis_tui.ui import full_gc
from jarvis_tui.ui.actions import keymap, palette_entries
from jarvis_tui.ui.clipboard import copy_file_path
from jarvis_tui.ui.local_model import LOCAL_MODEL_TEXTS, LocalModel
from jarvis_tui.ui.screens.chat.screen import ChatScreen
from jarvis_tui.ui.themes import register_themes
from jarvis_tui.ui.tool_servers import HubFactory, ToolServers, make_hub

FALLBACK_THEME = "jarvis-dark"


class JarvisApp(App[None]):
    TITLE = "jarvis-tui"
    CSS_PATH = "app.tcss"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False, priority=True)]

    def __init__(self, settings: Settings, store: Store, *, config_file: Path | None = None,
                 provider_factory: ProviderFactory = make_provider,
                 theme_dirs: list[Path] | None = None, warnings: list[str] | None = None,
                 local_server: LocalServer | None = None, first_run: bool = False,
                 window_given: bool = False, hub_factory: HubFactory = make_hub,
                 copy_file: Path | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.config_file = config_file
        # Opened in on_mount, once the app runs: the store may have notices to show by then.
        self._open = lambda: ChatSession(settings, store, provider_factory,
                                         forget_learned_limit=window_given)
        self._session: ChatSession | None = None
        self.language = resolve_language(settings.language)
        self._theme_dirs = theme_dirs
        self._warnings = warnings or []
        self._persist_theme = False
        self._chat: ChatScreen | None = None
        # The demo model's server, not started yet: the app starts it so its loading shows.
        self.local = LocalModel(local_server) if local_server is not None else None
        self._first_run = first_run
        self._theme_problems: list[str] = []
        # The tool servers (MCP) of the settings; made and started once the app runs.
        self.hub_factory = hub_factory
        self.tools: ToolServers | None = None
        # Where copies go besides the clipboard, which the terminal may not have taken.
        self.copy_file = copy_file or copy_file_path()
        self.set_keymap(keymap(settings.keys))  # [keys] of the config file, checked by the CLI

    @property
    def session(self) -> ChatSession:
        assert self._session is not None, "the session is open once the app is mounted"
        return self._session

    @property
    def chat(self) -> ChatScreen:
        assert self._chat is not None, "the chat screen exists once the app is mounted"
        return self._chat

    def copy_to_clipboard(self, text: str) -> None:
        # Every OSC 52 write (F4, C, a link, a mouse selection) is pasted somewhere later: none
        # may carry a sequence the terminal would obey then (ui/clipboard.py says which).
        super().copy_to_clipboard(terminal_safe(text))

    def on_load(self) -> None:
        # The theme before any screen: setting it restyles every widget there is, so set after
        # the chat screen (and a page of a long session) had mounted, it cost a second restyle.
        self._theme_problems = register_themes(self, self._theme_dirs)
        self.use_theme(self.settings.theme)

    async def on_mount(self) -> None:
        for line in self._warnings:
            self.notify(line, severity="warning", markup=False, timeout=15)
        for problem in self._theme_problems:
            self.notify(problem, title=APP_TEXTS(self.language, "theme_problem"),
                        severity="warning",
                        markup=False, timeout=10)
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._session = self._open()
        self._chat = ChatScreen(self._session)
        await self.push_screen(self._chat)
        self._persist_theme = True
        if self.local is not None:
            self.load_local_model()
        self.tools = ToolServers(self, self.hub_factory)
        if self.tools.create() is not None:
            self.start_tool_servers()
        if self._first_run:
            from jarvis_tui.ui.screens.first_run import FirstRunScreen

            self.push_screen(FirstRunScreen(self.config_file or config_path()),
                             self._first_run_closed)

    def _first_run_closed(self, choice: str | None) -> None:
        if choice == "settings":
            self.action_settings()

    @work(group="local", exclusive=True, exit_on_error=False)
    async def load_local_model(self) -> None:
        local = self.local
        assert local is not None
        try:
            await local.start(lambda seconds: self.chat.show_local_progress(seconds))
        except Exception:  # LocalServerError, or anything else: the app stays up
            await self.chat.say(LOCAL_MODEL_TEXTS(self.chat.lang, "failed", why=local.error),
                                "error")
        else:
            ready = LOCAL_MODEL_TEXTS(self.chat.lang, "ready", model=local.name,
                                      window=self.settings.context_window, seconds=local.seconds)
            await self.chat.say(ready, "info")
        self.chat.local_settled()

    @work(group="mcp", exclusive=True, exit_on_error=False)
    async def start_tool_servers(self) -> None:
        if self.tools is not None:
            await self.tools.start()

    def tool_server(self, name: str) -> str:
        """The server offering tool `name` ("" when none does now), for the tool blocks."""
        return self.tools.server_of(name) if self.tools is not None else ""

    def use_theme(self, name: str) -> None:
        if name in self.available_themes:
            self.theme = name
        else:
            self.theme = FALLBACK_THEME
            self.notify(APP_TEXTS(self.language, "no_theme", name=name, fallback=FALLBACK_THEME),
                        severity="warning", markup=False)

    async def open_session(self, conversation_id: int | None) -> None:
        """Switch the chat screen to a stored session, or to a new one (None)."""
        try:
            self.session.open(conversation_id)
        except (StoreError, ValueError) as err:
            self.notify(str(err), severity="error", markup=False)
            return
        await self.chat.load_session()

    # -- settings -------------------------------------------------------------------------

    def action_settings(self) -> None:
        from jarvis_tui.ui.screens.settings import SettingsScreen

        self._persist_theme = False  # the settings screen previews themes; Save decides
        self.push_screen(SettingsScreen(self.settings, self.config_file,
                                        sorted(self.available_themes),
                                        self.session.branches.pinned_usage()),
                         self._settings_closed)

    async def _settings_closed(self, settings: Settings | None) -> None:
        self._persist_theme = True
        if settings is not None:
            await self.apply_settings(settings)

    async def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        await self.session.apply_settings(settings)
        self.use_theme(settings.theme)
        language = resolve_language(settings.language)
        if language != self.language:
            self.language = language
            self.chat.relocalize_when_idle()
        self.chat.update_gauge()
        self.notify(APP_TEXTS(self.language, "settings_saved"), markup=False)

    def _theme_changed(self, theme: object) -> None:
        name = getattr(theme, "name", "")
        if not self._persist_theme or not name or name == self.settings.theme:
            return
        self.settings.theme = name
        try:
            update_settings_file(self.config_file, {"theme": name})
        except (ConfigError, OSError) as err:
            self.notify(APP_TEXTS(self.language, "theme_not_saved", why=str(err)),
                        severity="warning",
                        markup=False)

    # -- sessions and the palette ---------------------------------------------------------

    def action_sessions(self) -> None:
        from jarvis_tui.ui.screens.sessions import SessionsScreen

        try:
            conversations = self.session.list_sessions()
        except StoreError as err:
            self.notify(str(err), severity="error", markup=False)
            return
        self.push_screen(SessionsScreen(conversations, self.chat.cid), self._session_chosen)

    async def _session_chosen(self, conversation_id: int | None) -> None:
        if conversation_id is None or conversation_id == self.chat.cid:
            return
        await self.open_session(conversation_id or None)  # 0 = a new session

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, ChatScreen):  # the screen under the palette, not the palette
            return
        for action, title, help_text in palette_entries(self.language, self.settings.keys):
            yield SystemCommand(title, help_text, partial(screen.run_command, action.id))

    async def relocalize(self) -> None:
        """A new chat screen in the new language, same session and draft (a rebuild in place
        races the widgets' own timers)."""
        from jarvis_tui.ui.widgets.prompt_input import PromptInput

        old = self.chat
        if self.screen is not old:  # a dialog is open over it: again when it closes
            old.relocalize_pending = True
            return
        prompt = old.query_one(PromptInput)
        self._chat = ChatScreen(old.session, draft=prompt.text, draft_pasted=prompt.pasted)
        self._chat.attached = old.attached  # shown once the new screen is mounted
        await self.switch_screen(self._chat)

    async def on_unmount(self) -> None:
        full_gc.give_back()
        if self.local is not None:
            self.local.stop()  # also on errors: the CLI stops it again, which is harmless
        self.workers.cancel_group(self, "mcp")
        if self.tools is not None:
            await self.tools.aclose()
        if self._session is not None:
            await self._session.aclose()
