"""/recall QUERY: the earlier turns that match, best first, with their dates; Enter pins one.
/recall --all QUERY: every session's, each under its session; only this session's can be pinned
(a pin is this session's request's), so Enter on another's says so instead.

A pinned turn is always sent verbatim from then on, even one the summary had folded away, so a
detail the summary lost (a name, a figure, an error message) stays in front of the model.
Dismisses with the turn to pin or unpin, or None.
"""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from jarvis_tui.core.messages import Message
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.texts.i18n import Texts, plural_s
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

PREVIEW_CHARS = 160

RECALL_TEXTS = Texts(
    en={
        "title": "Recall: “{query}”",
        "none": "Nothing earlier in this session matches “{query}”.",
        "count": "{n} matching turn{s}, best first",
        "in_summary": "in the summary",
        "pinned": "📌 pinned",
        "hint": "Enter pin / unpin (always sent verbatim) · ↑↓ move · Esc close",
        "title_all": "Recall in every session: “{query}”",
        "none_all": "Nothing in any session matches “{query}”.",
        "this_session": "this session",
        "not_here": "A turn of another session cannot be pinned here: open that session (its "
                    "number is beside its title) to pin it.",
    },
    zh={
        "title": "找回：“{query}”",
        "none": "本会话中没有与“{query}”匹配的早期对话。",
        "count": "{n} 轮匹配的对话，最相关的在前",
        "in_summary": "已在摘要中",
        "pinned": "📌 已固定",
        "hint": "Enter 固定 / 取消固定（始终原文发送）· ↑↓ 移动 · Esc 关闭",
        "title_all": "在所有会话中找回：“{query}”",
        "none_all": "所有会话中都没有与“{query}”匹配的对话。",
        "this_session": "本会话",
        "not_here": "其他会话的对话不能在这里固定：请打开那个会话（编号在标题旁）再固定。",
    },
)


class RecallScreen(ModalScreen[list[Message] | None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    DEFAULT_CSS = dialog_css("RecallScreen", max_width=110, max_height=36) + """
    RecallScreen #count { color: $text-muted; }
    RecallScreen OptionList { height: 1fr; border: none; }
    RecallScreen #hint { color: $text-muted; }
    """

    def __init__(self, query: str, turns: list[list[Message]],
                 sources: list[str] | None = None) -> None:
        """`sources`: for /recall --all, per turn its session's label ("": this session)."""
        super().__init__()
        self.search_text = query
        self.turns = turns
        self.sources = sources

    def _t(self, key: str, **values: object) -> str:
        return RECALL_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        query = terminal_safe(self.search_text)
        with Vertical(id="dialog") as dialog:
            everywhere = self.sources is not None
            dialog.border_title = self._t("title_all" if everywhere else "title", query=query)
            if not self.turns:
                yield Static(self._t("none_all" if everywhere else "none", query=query),
                             id="count", markup=False)
            else:
                yield Static(self._t("count", n=len(self.turns), s=plural_s(len(self.turns))),
                             id="count", markup=False)
                yield OptionList(*(Option(self._label(turn, i), id=str(i))
                                   for i, turn in enumerate(self.turns)))
            yield Static(self._t("hint"), id="hint", markup=False)

    def _label(self, turn: list[Message], i: int) -> Content:
        first = turn[0]
        marks = [time.strftime("%Y-%m-%d %H:%M", time.localtime(first.created_at))]
        if self.sources is not None:
            marks.insert(0, terminal_safe(self.sources[i]) or self._t("this_session"))
        if any(m.covered for m in turn):
            marks.append(self._t("in_summary"))
        if any(m.pinned for m in turn):
            marks.append(self._t("pinned"))
        lines = [Content.styled(" · ".join(marks), "bold $text-accent")]
        for msg in turn:
            text = " ".join(terminal_safe(msg.content).split())
            if len(text) > PREVIEW_CHARS:
                text = text[:PREVIEW_CHARS - 1] + "…"
            lines.append(Content(f"{msg.role}: {text}"))  # Content: text, never markup
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        for options in self.query(OptionList):
            options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        i = int(event.option.id or 0)
        if self.sources is not None and self.sources[i]:
            self.query_one("#hint", Static).update(self._t("not_here"))
            return
        self.dismiss(self.turns[i])

    def action_close(self) -> None:
        self.dismiss(None)
