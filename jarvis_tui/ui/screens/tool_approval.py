"""Asking the user before a tool runs: which server, which tool, with what arguments.

An answer takes a deliberate act. The dialog appears while the user may be typing their next
message, so it takes no key text contains: letters, spaces and Enter go on into the prompt's
draft underneath (nothing typed is lost, nothing typed answers). Tab (which the prompt uses to
leave itself, never to type) focuses the buttons; then y allows this call once, a always
allows this server's tool for the session, n denies, and Enter presses the focused button. A
click on a button answers at any time, and so does Esc, which denies (refusing is the safe side,
and Esc is no text).

Dismisses with the engine's decision: ONCE, ALWAYS or DENY. `ask_approval` is the `approve`
callback the session is given: the engine awaits it from inside the chat worker, so it pushes
the dialog and waits on a future the dialog's answer resolves (the worker runs in the app's own
loop; waiting there never blocks the screen).
"""

from __future__ import annotations

import asyncio

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.core.tools.specs import ALWAYS, DENY, ONCE
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css
from jarvis_tui.ui.widgets.prompt_input import NEWLINE_KEYS, PromptInput
from jarvis_tui.ui.widgets.tool_block import pretty

APPROVAL_TEXTS = Texts(
    en={
        "title": "Run a tool?",
        "asks": "The model wants to run {tool} on the tool server {server}.",
        "asks_no_server": "The model wants to run {tool}.",
        "arguments": "Arguments",
        "description": "What the server says the tool does",
        "no_description": "(the server gives no description)",
        "once": "Allow once (y)",
        "always": "Always allow {tool} of {server} this session (a)",
        "always_no_server": "Always allow {tool} this session (a)",
        "deny": "Deny (n / Esc)",
        "keys": "Typing goes on into your message. To answer: Tab, then y, a or n (or click).",
        "armed": "y: allow once · a: always · n or Esc: deny · Enter: the button in focus",
        "typed": "Your typing went into your message, not here. To answer: Tab, then y, a "
                 "or n (or click).",
    },
    zh={
        "title": "运行工具？",
        "asks": "模型想在工具服务器 {server} 上运行 {tool}。",
        "asks_no_server": "模型想运行 {tool}。",
        "arguments": "参数",
        "description": "服务器对该工具的说明",
        "no_description": "（服务器没有提供说明）",
        "once": "允许一次（y）",
        "always": "本会话中始终允许 {server} 的 {tool}（a）",
        "always_no_server": "本会话中始终允许 {tool}（a）",
        "deny": "拒绝（n / Esc）",
        "keys": "继续输入的文字会进入你的消息。要回答：先按 Tab，再按 y、a 或 n（或点击）。",
        "armed": "y：允许一次 · a：始终允许 · n 或 Esc：拒绝 · Enter：当前按钮",
        "typed": "你输入的文字已进入你的消息，而不是这里。要回答：先按 Tab，再按 y、a 或 n"
                 "（或点击）。",
    },
)


ANSWERS = {"y": ONCE, "a": ALWAYS, "n": DENY}  # once a button has the focus


class ToolApprovalScreen(ModalScreen[str]):
    # Esc is never text, and denying is the safe side: it answers at any time. y, a and n
    # answer only once a button has the focus (`armed`): until then they are text (on_key).
    BINDINGS = [Binding("escape", "deny", "Deny", show=False)]
    AUTO_FOCUS = ""  # no widget: the focus stays off the buttons until the user moves it (Tab)

    DEFAULT_CSS = dialog_css("ToolApprovalScreen", max_width=100, max_height=34,
                             height="auto") + """
    ToolApprovalScreen #asks { text-style: bold; margin: 0 0 1 0; }
    ToolApprovalScreen .heading { color: $text-muted; }
    ToolApprovalScreen #args-scroll { height: auto; max-height: 12; background: $boost;
                                      margin: 0 0 1 0; }
    ToolApprovalScreen #args { padding: 0 1; }
    ToolApprovalScreen #description-scroll { height: auto; max-height: 6; margin: 0 0 1 0; }
    ToolApprovalScreen #buttons { height: auto; }
    ToolApprovalScreen Button { margin: 0 1 0 0; }
    ToolApprovalScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    ToolApprovalScreen #keys.-typed { color: $warning; text-style: bold; }
    """

    def __init__(self, call: ToolCall, spec: ToolSpec | None,
                 prompt: PromptInput | None = None) -> None:
        super().__init__()
        self.call = call
        self.spec = spec
        self.prompt = prompt  # where typing goes while the dialog is up

    def _t(self, key: str, **values: object) -> str:
        return APPROVAL_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        spec = self.spec
        tool = visible(spec.tool or spec.name if spec is not None else self.call.name)
        server = visible(spec.server) if spec is not None else ""
        asks = (self._t("asks", tool=tool, server=server) if server
                else self._t("asks_no_server", tool=tool))
        always = (self._t("always", tool=tool, server=server) if server
                  else self._t("always_no_server", tool=tool))
        description = visible(spec.description).strip() if spec is not None else ""
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield Static(Content(asks), id="asks")
            yield Static(self._t("arguments"), classes="heading", markup=False)
            # Not in the focus chain: Tab goes straight to the buttons (the wheel scrolls).
            with VerticalScroll(id="args-scroll") as scroll:
                scroll.can_focus = False
                yield Static(Content(pretty(self.call.arguments)), id="args")
            yield Static(self._t("description"), classes="heading", markup=False)
            with VerticalScroll(id="description-scroll") as scroll:
                scroll.can_focus = False
                yield Static(Content(description or self._t("no_description")),
                             id="description")
            with Horizontal(id="buttons"):
                yield Button(Content(self._t("once")), id="once", variant="primary")
                yield Button(Content(always), id="always")
                yield Button(Content(self._t("deny")), id="deny", variant="error")
            yield Static(self._t("keys"), id="keys", markup=False)

    @property
    def armed(self) -> bool:
        """The user moved the focus to the buttons: from now on keys answer."""
        return self.focused is not None

    def on_descendant_focus(self) -> None:
        keys = self.query_one("#keys", Static)
        keys.update(self._t("armed"))
        keys.remove_class("-typed")

    def on_key(self, event: events.Key) -> None:
        """Every key reaches this before the bindings do: an answer once armed, else the
        user's typing, which goes on into the prompt's draft."""
        if self.armed and event.key in ANSWERS:
            event.stop()
            self.dismiss(ANSWERS[event.key])
            return
        if self.armed and event.key == "enter":
            return  # the focused button's own key presses it
        prompt = self.prompt
        if event.key == "enter":
            pass  # the end of a typed message: it neither answers nor sends from here
        elif prompt is None or not prompt.is_attached:
            return
        elif event.is_printable and event.character:
            prompt.insert(event.character)
        elif event.key in NEWLINE_KEYS:
            prompt.insert("\n")
        elif event.key == "backspace":
            prompt.action_delete_left()
        else:
            return
        event.stop()
        event.prevent_default()
        if not self.armed:
            keys = self.query_one("#keys", Static)
            keys.update(self._t("typed"))
            keys.add_class("-typed")

    def on_paste(self, event: events.Paste) -> None:
        if self.prompt is not None and self.prompt.is_attached and event.text:
            self.prompt.insert(event.text)
            event.stop()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id or DENY)

    def action_deny(self) -> None:
        self.dismiss(DENY)

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

    # The prompt beneath (the chat's, under any dialog already open), where typing goes on
    # while this one is up.
    prompts = [p for under in reversed(app.screen_stack) for p in under.query(PromptInput)]
    screen = ToolApprovalScreen(call, spec, prompts[0] if prompts else None)
    app.push_screen(screen, decided)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            app.pop_screen()
        raise
