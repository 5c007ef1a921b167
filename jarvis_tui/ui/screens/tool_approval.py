"""Asking the user before a tool runs: which server, which tool, with what arguments.

Dismisses with the engine's decision: ONCE (Enter, y), ALWAYS for this tool this session (a),
DENY (n, Esc). `ask_approval` is the `approve` callback the session is given: the engine awaits
it from inside the chat worker, so it pushes the dialog and waits on a future the dialog's
answer resolves (the worker runs in the app's own loop; waiting there never blocks the screen).
"""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from jarvis_tui.core.textsafe import visible
from jarvis_tui.core.tools import ALWAYS, DENY, ONCE, ToolCall, ToolSpec
from jarvis_tui.ui.i18n import Texts, ui_language
from jarvis_tui.ui.screens.dialog import dialog_css
from jarvis_tui.ui.widgets.tool_block import pretty

T = Texts(
    en={
        "title": "Run a tool?",
        "asks": "The model wants to run {tool} on the tool server {server}.",
        "asks_no_server": "The model wants to run {tool}.",
        "arguments": "Arguments",
        "description": "What the server says the tool does",
        "no_description": "(the server gives no description)",
        "once": "Allow once (Enter / y)",
        "always": "Always allow {tool} this session (a)",
        "deny": "Deny (n / Esc)",
    },
    zh={
        "title": "运行工具？",
        "asks": "模型想在工具服务器 {server} 上运行 {tool}。",
        "asks_no_server": "模型想运行 {tool}。",
        "arguments": "参数",
        "description": "服务器对该工具的说明",
        "no_description": "（服务器没有提供说明）",
        "once": "允许一次（Enter / y）",
        "always": "本会话中始终允许 {tool}（a）",
        "deny": "拒绝（n / Esc）",
    },
)


class ToolApprovalScreen(ModalScreen[str]):
    BINDINGS = [
        Binding("y", "decide('once')", "Allow once", show=False),
        Binding("a", "decide('always')", "Always", show=False),
        Binding("n", "decide('deny')", "Deny", show=False),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    DEFAULT_CSS = dialog_css("ToolApprovalScreen", max_width=100, max_height=32,
                             height="auto") + """
    ToolApprovalScreen #asks { text-style: bold; margin: 0 0 1 0; }
    ToolApprovalScreen .heading { color: $text-muted; }
    ToolApprovalScreen #args-scroll { height: auto; max-height: 12; background: $boost;
                                      margin: 0 0 1 0; }
    ToolApprovalScreen #args { padding: 0 1; }
    ToolApprovalScreen #description-scroll { height: auto; max-height: 6; margin: 0 0 1 0; }
    ToolApprovalScreen #buttons { height: auto; }
    ToolApprovalScreen Button { margin: 0 1 0 0; }
    """

    def __init__(self, call: ToolCall, spec: ToolSpec | None) -> None:
        super().__init__()
        self.call = call
        self.spec = spec

    def _t(self, key: str, **values: object) -> str:
        return T(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        spec = self.spec
        tool = visible(spec.tool or spec.name if spec is not None else self.call.name)
        server = visible(spec.server) if spec is not None else ""
        asks = (self._t("asks", tool=tool, server=server) if server
                else self._t("asks_no_server", tool=tool))
        description = visible(spec.description).strip() if spec is not None else ""
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield Static(Content(asks), id="asks")
            yield Static(self._t("arguments"), classes="heading", markup=False)
            with VerticalScroll(id="args-scroll"):
                yield Static(Content(pretty(self.call.arguments)), id="args")
            yield Static(self._t("description"), classes="heading", markup=False)
            with VerticalScroll(id="description-scroll"):
                yield Static(Content(description or self._t("no_description")),
                             id="description")
            with Horizontal(id="buttons"):
                yield Button(Content(self._t("once")), id="once", variant="primary")
                yield Button(Content(self._t("always", tool=tool)), id="always")
                yield Button(Content(self._t("deny")), id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id or DENY)

    def action_decide(self, decision: str) -> None:
        self.dismiss(decision if decision in (ONCE, ALWAYS, DENY) else DENY)


async def ask_approval(app: App[object], call: ToolCall, spec: ToolSpec) -> str:
    """The engine's `approve`: the user's decision on `call`. Cancelled (Esc stopped the
    round, the session switched), the dialog goes away with the round."""
    if not app.is_running:
        return DENY
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def decided(decision: str | None) -> None:
        if not answer.done():
            answer.set_result(decision or DENY)

    screen = ToolApprovalScreen(call, spec)
    app.push_screen(screen, decided)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            app.pop_screen()
        raise
