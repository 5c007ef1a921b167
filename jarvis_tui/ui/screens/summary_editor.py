"""The summary editor (F2): read, correct and save the summary that stands in for old messages.

The summary is sent with every request, so an error in it misleads the model for the rest of the
conversation; this is where the user fixes that, with the originals at hand to check against.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from jarvis_tui.core.messages import Message
from jarvis_tui.core.session import Summary
from jarvis_tui.core.window.tokens import estimate
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

# Below this many columns the originals replace the editor instead of sitting next to it: two
# panes of under 50 columns each are too narrow to read either.
SIDE_BY_SIDE_MIN_WIDTH = 100
TIME_FORMAT = "%Y-%m-%d %H:%M"

EDITOR_TEXTS = Texts(
    en={
        "title": "Summary · {kind} · {created} · covers {count} messages",
        "kind.auto": "automatic",
        "kind.manual": "manual (/compact)",
        "kind.edited": "edited",
        "hint": "ctrl+s save · Esc cancel · ctrl+o show/hide the original messages",
        "tokens": "About {n} tokens (summary budget {max})",
        "tokens.plain": "About {n} tokens",
        "tokens.over": "About {n} tokens: longer than the summary budget of {max} tokens; "
                       "it costs context on every request",
        "empty": "A summary cannot be empty; press Esc to cancel",
        "confirm": "Discard your changes? Esc again to discard, ctrl+s to save",
        "save": "Save",
        "cancel": "Cancel",
        "show": "Show originals",
        "hide": "Hide originals",
        "originals.title": "Original messages ({n})",
        "originals.none": "The original messages are not loaded",
        "role.user": "You",
        "role.assistant": "Assistant",
        "role.system": "System",
        "role.tool": "Tool",
    },
    zh={
        "title": "摘要 · {kind} · {created} · 涵盖 {count} 条消息",
        "kind.auto": "自动",
        "kind.manual": "手动（/compact）",
        "kind.edited": "已编辑",
        "hint": "ctrl+s 保存 · Esc 取消 · ctrl+o 显示/隐藏原始消息",
        "tokens": "约 {n} 个 token（摘要预算 {max}）",
        "tokens.plain": "约 {n} 个 token",
        "tokens.over": "约 {n} 个 token：超出摘要预算 {max} 个 token，每次请求都会占用上下文",
        "empty": "摘要不能为空；按 Esc 取消",
        "confirm": "放弃修改？再按 Esc 放弃，按 ctrl+s 保存",
        "save": "保存",
        "cancel": "取消",
        "show": "显示原始消息",
        "hide": "隐藏原始消息",
        "originals.title": "原始消息（{n} 条）",
        "originals.none": "原始消息未加载",
        "role.user": "你",
        "role.assistant": "助手",
        "role.system": "系统",
        "role.tool": "工具",
    },
)


def _local_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime(TIME_FORMAT)


class SummaryEditor(ModalScreen[str | None]):
    """Edit a summary. Dismisses with the new text (stripped), or None when nothing changed or
    the user cancelled; the caller stores a new 'edited' summary only for a string."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+o", "toggle_originals", "Originals"),
        Binding("escape", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = dialog_css("SummaryEditor", max_width=140, max_height=48,
                             border_title=False) + """
    SummaryEditor #title {
        text-style: bold;
        color: $primary;
    }
    SummaryEditor #hint {
        color: $text-muted;
    }
    SummaryEditor #body {
        height: 1fr;
    }
    SummaryEditor #editor {
        width: 1fr;
        height: 100%;
    }
    SummaryEditor #originals {
        display: none;
        width: 1fr;
        height: 100%;
        margin-left: 1;
        border: round $secondary;
        border-title-color: $secondary;
        background: $boost;
        padding: 0 1;
    }
    SummaryEditor.-originals #originals {
        display: block;
    }
    SummaryEditor.-narrow #originals {
        margin-left: 0;
    }
    SummaryEditor.-narrow.-originals #editor {
        display: none;
    }
    SummaryEditor #originals-text.-empty {
        color: $text-muted;
        text-style: italic;
    }
    SummaryEditor #tokens {
        color: $text-muted;
    }
    SummaryEditor #tokens.-over {
        color: $warning;
    }
    SummaryEditor #notice {
        display: none;
    }
    SummaryEditor #notice.-error {
        display: block;
        color: $error;
    }
    SummaryEditor #notice.-confirm {
        display: block;
        color: $warning;
        text-style: bold;
    }
    SummaryEditor #buttons {
        height: auto;
        align-horizontal: right;
    }
    SummaryEditor #buttons Button {
        margin-left: 1;
    }
    """

    def __init__(self, summary: Summary | None, covered: list[Message], max_tokens: int,
                 count: Callable[[str], int] = estimate) -> None:
        super().__init__()
        self.summary = summary  # None only for a subclass that edits a text not stored yet
        self.original = summary.content if summary is not None else ""
        self.covered = covered
        self.max_tokens = max_tokens
        self.count = count  # the session's calibrated count, so the editor and gauge agree
        self._confirming = False  # the first Esc with changes asked; the next one discards
        self._originals_built = False
        self._notice_for: str | None = None  # the text the notice or question was about

    def _t(self, key: str, **values: object) -> str:
        return EDITOR_TEXTS(ui_language(self.app), key, **values)

    def _title(self) -> str:
        s = self.summary
        assert s is not None, "the stored summary's editor has a summary"
        kind = self._t(f"kind.{s.kind}") if s.kind in ("auto", "manual", "edited") else s.kind
        return self._t("title", kind=kind, created=_local_time(s.created_at),
                       count=s.covered_count)

    def _head(self) -> ComposeResult:
        """The lines above the editor: what is being edited and the keys."""
        yield Static(self._title(), id="title", markup=False)
        yield Static(self._t("hint"), id="hint", markup=False)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield from self._head()
            with Horizontal(id="body"):
                yield TextArea(self.original, id="editor", soft_wrap=True,
                               show_line_numbers=False)
                with VerticalScroll(id="originals") as originals:
                    originals.border_title = self._t("originals.title", n=len(self.covered))
                    yield Static("", id="originals-text", markup=False)
            yield Static("", id="tokens", markup=False)
            yield Static("", id="notice", markup=False)
            with Horizontal(id="buttons"):
                yield Button(self._t("save"), id="save", variant="primary", compact=True)
                yield Button(self._t("show"), id="toggle", compact=True)
                yield Button(self._t("cancel"), id="cancel", compact=True)

    def on_mount(self) -> None:
        self._update_tokens()
        self.editor.focus()

    @property
    def editor(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    @property
    def changed(self) -> bool:
        # Whitespace at the ends is stripped on save, so it is not a change worth asking about.
        return self.editor.text.strip() != self.original.strip()

    @property
    def showing_originals(self) -> bool:
        return self.has_class("-originals")

    # -- live feedback -------------------------------------------------------------------------

    @on(TextArea.Changed, "#editor")
    def _edited(self) -> None:
        self._update_tokens()
        # A new edit makes an earlier notice stale, and the next Esc must ask about this text.
        # Changed arrives after the key that caused it, possibly after a later ctrl+s or Esc, so
        # only a text different from the one the notice was about counts as new.
        if self.editor.text != self._notice_for:
            self._set_notice("", "")
            self._confirming = False

    def _update_tokens(self) -> None:
        n = self.count(self.editor.text.strip())
        over = 0 < self.max_tokens < n
        if over:
            text = self._t("tokens.over", n=n, max=self.max_tokens)
        elif self.max_tokens > 0:
            text = self._t("tokens", n=n, max=self.max_tokens)
        else:
            text = self._t("tokens.plain", n=n)
        line = self.query_one("#tokens", Static)
        line.update(Content(text))
        line.set_class(over, "-over")

    def _set_notice(self, text: str, kind: str) -> None:
        self._notice_for = self.editor.text if kind else None
        notice = self.query_one("#notice", Static)
        notice.update(Content(text))
        notice.set_class(kind == "error", "-error")
        notice.set_class(kind == "confirm", "-confirm")

    # -- actions -------------------------------------------------------------------------------

    def action_save(self) -> None:
        text = self.editor.text.strip()
        if not text:
            self._confirming = False
            self._set_notice(self._t("empty"), "error")
            self.editor.focus()
            return
        self.dismiss(self._result(text))

    def _result(self, text: str) -> str | None:
        # An unchanged summary needs no new row: the caller stores only a string.
        return text if text != self.original.strip() else None

    def action_cancel(self) -> None:
        if self.changed and not self._confirming:
            self._confirming = True
            self._set_notice(self._t("confirm"), "confirm")
            return
        self.dismiss(None)

    def action_toggle_originals(self) -> None:
        if not self._originals_built:
            self._build_originals()
        self.toggle_class("-originals")
        showing = self.showing_originals
        self.query_one("#toggle", Button).label = self._t("hide" if showing else "show")
        if showing and self.has_class("-narrow"):
            self.query_one("#originals", VerticalScroll).focus()
        elif not showing:
            self.editor.focus()

    def _build_originals(self) -> None:
        # Built on first use: a summary can cover hundreds of messages nobody asked to see.
        static = self.query_one("#originals-text", Static)
        self._originals_built = True
        if not self.covered:
            static.update(Content(self._t("originals.none")))
            static.add_class("-empty")
            return
        parts: list[str | tuple[str, str]] = []
        for i, msg in enumerate(self.covered):
            key = f"role.{msg.role}"
            role = self._t(key) if msg.role in ("user", "assistant", "system", "tool") else msg.role
            if msg.role == "tool" and msg.name:
                role = f"{role} {msg.name}"
            if i:
                parts.append("\n\n")
            parts.append((role, "bold $accent"))
            parts.append((f"  {_local_time(msg.created_at)}\n", "$foreground-muted"))
            parts.append(msg.content or "")
        static.update(Content.assemble(*parts))

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#toggle")
    def _toggle_pressed(self) -> None:
        self.action_toggle_originals()

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < SIDE_BY_SIDE_MIN_WIDTH
        self.set_class(narrow, "-narrow")
        if narrow and self.showing_originals and self.editor.has_focus:
            self.query_one("#originals", VerticalScroll).focus()
