"""The next request as the model will receive it (F7, /request): each part in order with its
tokens, and the total against the budget; a part opens to its full text.

The report comes from ChatSession.next_request, which plans the request with the code the
round sends it with; this screen only draws it. Texts are the model's and the user's: shown
as plain text (never markup), control sequences removed, and a part's text is drawn only once
it is opened, so a window of long pastes opens at once.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Collapsible, Static

from jarvis_tui.core.next_request import NextRequest, RequestPart
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.texts.i18n import Texts, plural_s
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css
from jarvis_tui.ui.widgets.text_pager import TextPager

PAGED_FROM = 20_000  # characters: a longer part scrolls in a pager of its own

NEXT_REQUEST_TEXTS = Texts(
    en={"title": "Next request, as the model will receive it",
        "total": "{tokens} of {budget} tokens ({share}) · {messages} message{s}",
        "compacts": "Past the compaction threshold: the next round summarises older turns "
                    "first, so its front will differ from this.",
        "hint": "Enter opens or closes a part · c copies the request as JSON · Esc closes",
        "system": "System prompt", "memory": "Memory", "summary": "Summary",
        "ledger": "Details ledger", "recalled": "Recalled turns (sent with your new message)",
        "tools": "Tool definitions", "typed": "your new message",
        "user": "You", "assistant": "Jarvis", "tool": "Tool",
        "state_verbatim": "verbatim", "state_cut": "cut (head and tail)",
        "state_pinned": "pinned", "state_stubbed": "stub",
        "tokens": "{n} token{s}", "empty": "(empty)"},
    zh={"title": "下一次请求：模型将收到的内容",
        "total": "{tokens} / {budget} 个 token（{share}）· {messages} 条消息",
        "compacts": "已超过压缩阈值：下一轮会先把较早的对话压缩成摘要，因此请求开头会与此不同。",
        "hint": "Enter 展开或收起一项 · c 以 JSON 复制请求 · Esc 关闭",
        "system": "系统提示词", "memory": "记忆", "summary": "摘要",
        "ledger": "细节清单", "recalled": "召回的对话（随你的新消息发送）",
        "tools": "工具定义", "typed": "你的新消息",
        "user": "你", "assistant": "Jarvis", "tool": "工具",
        "state_verbatim": "原文", "state_cut": "截断（保留首尾）",
        "state_pinned": "已固定", "state_stubbed": "摘要行",
        "tokens": "{n} 个 token", "empty": "（空）"},
)


class NextRequestScreen(ModalScreen[str | None]):
    """Dismissed with "copy" when the user asks for the request as JSON (the chat screen
    copies it, as it copies everything, through one sanitiser), else None."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("c", "copy", "Copy JSON")]

    DEFAULT_CSS = dialog_css("NextRequestScreen", max_width=110, max_height=44) + """
    NextRequestScreen #total { color: $text; text-style: bold; height: auto; }
    NextRequestScreen #compacts { color: $text-warning; height: auto; }
    NextRequestScreen #parts { height: 1fr; }
    NextRequestScreen Collapsible { padding: 0; border-top: none; }
    NextRequestScreen .part-text { color: $text; padding: 0 0 0 2; }
    NextRequestScreen TextPager { height: 20; }
    NextRequestScreen #hint { color: $text-muted; height: 1; }
    """

    def __init__(self, report: NextRequest) -> None:
        super().__init__()
        self.report = report

    def _t(self, key: str, **values: object) -> str:
        return NEXT_REQUEST_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        report = self.report
        share = report.tokens / report.budget if report.budget else 0.0
        messages = sum(p.kind == "message" for p in report.parts)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield Static(self._t("total", tokens=f"{report.tokens:,}", budget=f"{report.budget:,}",
                                 share=f"{share:.0%}", messages=f"{messages:,}",
                                 s=plural_s(messages)),
                         markup=False, id="total")
            if report.compacts_first:
                yield Static(self._t("compacts"), markup=False, id="compacts")
            with VerticalScroll(id="parts"):
                for i, part in enumerate(report.parts):
                    yield Collapsible(title=self._title(part), collapsed=True, id=f"part-{i}")
            yield Static(self._t("hint"), markup=False, id="hint")

    def on_mount(self) -> None:
        first = self.query(Collapsible).first(Collapsible) if self.report.parts else None
        if first is not None:
            first.query_one("CollapsibleTitle").focus()

    def _title(self, part: RequestPart) -> str:
        tokens = self._t("tokens", n=f"{part.tokens:,}", s=plural_s(part.tokens))
        if part.kind != "message":
            return f"{self._t(part.kind)} · {tokens}"
        who = self._t(part.role) if part.role in ("user", "assistant", "tool") else part.role
        state = self._t("typed") if part.message_id is None else self._t(f"state_{part.state}")
        return " · ".join((who, state, tokens))

    @on(Collapsible.Expanded)
    def _opened(self, event: Collapsible.Expanded) -> None:
        """A part's text is drawn the first time it is opened."""
        collapsible = event.collapsible
        contents = collapsible.query_one(Collapsible.Contents)
        if contents.children:
            return
        index = int((collapsible.id or "part-0").removeprefix("part-"))
        text = terminal_safe(self.report.parts[index].text) or self._t("empty")
        body = (TextPager(text, classes="part-text") if len(text) > PAGED_FROM
                else Static(text, markup=False, classes="part-text"))
        contents.mount(body)

    def action_copy(self) -> None:
        self.dismiss("copy")

    def action_close(self) -> None:
        self.dismiss(None)
