"""/compact's preview: the summary editor on a summary that is not stored yet.

A summary replaces turns in every later request, and a wrong one misleads the model for the
rest of the conversation; here the user reads it before it replaces anything. Ctrl+S accepts it
(as edited); Esc discards it and the conversation stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import estimate
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.summary_editor import EDITOR_TEXTS, SummaryEditor

PROPOSAL_TEXTS = Texts(
    en={
        "title": "PROPOSED summary · not applied yet · /compact{focus}",
        "focus": " · focus: {focus}",
        "hint": "ctrl+s accept (with your edits) · Esc discard: nothing changes · ctrl+o "
                "show/hide the messages it would cover",
        "cover": "Accepting folds {n} more messages into the summary: the next request goes "
                 "from about {before:,} to about {after:,} tokens",
        "confirm": "Discard this proposed summary and your changes? Esc again to discard, "
                   "ctrl+s to accept",
        "save": "Accept",
        "cancel": "Discard",
    },
    zh={
        "title": "建议的摘要 · 尚未应用 · /compact{focus}",
        "focus": " · 重点：{focus}",
        "hint": "ctrl+s 接受（含你的修改）· Esc 放弃：不做任何改动 · "
                "ctrl+o 显示/隐藏将被涵盖的消息",
        "cover": "接受后将再把 {n} 条消息并入摘要：下一次请求从约 {before:,} 个 token 变为约 "
                 "{after:,} 个",
        "confirm": "放弃这份建议的摘要和你的修改？再按 Esc 放弃，按 ctrl+s 接受",
        "save": "接受",
        "cancel": "放弃",
    },
)


class ProposalEditor(SummaryEditor):
    """Dismisses with the text to store (edited or not), or None: discard the proposal."""

    DEFAULT_CSS = """
    ProposalEditor #title {
        color: $warning;
    }
    ProposalEditor #cover {
        color: $text-muted;
    }
    """

    def __init__(self, text: str, covers: list[Message], folding: int, before: int,
                 after: Callable[[str], int], max_tokens: int,
                 count: Callable[[str], int] = estimate, focus: str | None = None) -> None:
        super().__init__(None, covers, max_tokens, count)
        self.original = text
        self.folding = folding
        self.before = before
        self.after = after  # the request's tokens with the summary as it reads now
        self.focus = focus

    def _t(self, key: str, **values: object) -> str:
        table = PROPOSAL_TEXTS if key in PROPOSAL_TEXTS.tables["en"] else EDITOR_TEXTS
        return table(ui_language(self.app), key, **values)

    def _title(self) -> str:
        focus = self._t("focus", focus=self.focus) if self.focus else ""
        return self._t("title", focus=focus)

    def _head(self) -> ComposeResult:
        yield from super()._head()
        yield Static("", id="cover", markup=False)

    def _update_tokens(self) -> None:
        super()._update_tokens()
        after = self.after(self.editor.text.strip())
        self.query_one("#cover", Static).update(Content(self._t(
            "cover", n=self.folding, before=self.before, after=after)))

    def _result(self, text: str) -> str | None:
        return text  # unchanged is accepted too: the proposal is stored as it is
