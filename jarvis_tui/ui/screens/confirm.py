"""A yes-or-no question before something the user may not have meant (forking a session to
edit a summarised message): Enter or Y says yes, Esc or N no."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.screens.dialog import dialog_css

CONFIRM_TEXTS = Texts(en={"yes": "Yes (Enter)", "no": "No (Esc)"}, zh={"yes": "是（Enter）",
                                                                       "no": "否（Esc）"})


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = dialog_css("ConfirmScreen", max_width=72, max_height=16, height="auto") + """
    ConfirmScreen #dialog { height: auto; }
    ConfirmScreen #question { margin: 1 0; }
    ConfirmScreen #buttons { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape,n", "answer(False)", show=False),
                Binding("enter,y", "answer(True)", show=False)]

    def __init__(self, title: str, question: str, lang: str = "en") -> None:
        super().__init__()
        self._title, self._question, self._lang = title, question, lang

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(self._question, id="question", markup=False)
            with Horizontal(id="buttons"):
                yield Button(CONFIRM_TEXTS(self._lang, "no"), id="no")
                yield Button(CONFIRM_TEXTS(self._lang, "yes"), id="yes", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
