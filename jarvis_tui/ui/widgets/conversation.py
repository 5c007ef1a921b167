"""The conversation: message views, notices and compaction dividers in a scroll anchored to the
bottom. Only the newest MAX_VIEWS messages are mounted; older ones stay in the store."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from jarvis_tui.core.messages import Message
from jarvis_tui.core.textsafe import terminal_safe
from jarvis_tui.ui.i18n import Texts, ui_language
from jarvis_tui.ui.widgets.message_view import MessageView

MAX_VIEWS = 200  # beyond this, the oldest views are removed (they stay in the store)

T = Texts(
    en={"hidden": "… {n} earlier messages are not shown here; they are in the store "
                  "(/export writes the whole session)",
        "summarised": "📦 The {n} messages above are summarised; the summary is sent in "
                      "their place (F2 to view or edit)",
        "welcome": "New session. Type a message and press Enter; Ctrl+J adds a new line; "
                   "F1 lists every key and command."},
    zh={"hidden": "… 较早的 {n} 条消息未显示；它们都保存在会话中（/export 可导出完整会话）",
        "summarised": "📦 以上 {n} 条消息已被摘要，请求中以摘要代替（F2 查看或编辑）",
        "welcome": "新会话。输入消息后按 Enter 发送；Ctrl+J 换行；F1 查看全部按键与命令。"},
)


class Notice(Static):
    """A line in the conversation that is not a message: compaction, retries, errors."""

    DEFAULT_CSS = """
    Notice { height: auto; margin: 0 0 1 0; padding: 0 1; color: $text-muted; }
    Notice.-compact { color: $accent; border-top: dashed $accent; border-bottom: dashed $accent;
                      text-align: center; }
    Notice.-warning { color: $warning; }
    Notice.-error { color: $error; border-left: tall $error; }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(terminal_safe(text), markup=False, classes=f"-{kind}")
        self.kind = kind


class Conversation(VerticalScroll):
    DEFAULT_CSS = """
    Conversation { padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.hidden_count = 0

    def _lang(self) -> str:
        return ui_language(self.app)

    async def show(self, messages: list[Message]) -> None:
        """Replace everything with this session's messages (the newest MAX_VIEWS of them)."""
        await self.remove_children()
        self.hidden_count = max(0, len(messages) - MAX_VIEWS)
        shown = messages[self.hidden_count:]
        widgets: list[Static | MessageView] = []
        if self.hidden_count:
            widgets.append(Notice(T(self._lang(), "hidden", n=self.hidden_count), "hidden"))
        if not messages:
            widgets.append(Notice(T(self._lang(), "welcome"), "welcome"))
        covered = sum(1 for m in messages if m.covered)
        for i, msg in enumerate(shown):
            widgets.append(MessageView(msg))
            nxt = shown[i + 1] if i + 1 < len(shown) else None
            if msg.covered and (nxt is None or not nxt.covered):
                widgets.append(Notice(T(self._lang(), "summarised", n=covered), "compact"))
        await self.mount_all(widgets)
        self.anchor()

    def views(self) -> list[MessageView]:
        return list(self.query_children(MessageView))

    async def add_message(self, message: Message) -> MessageView:
        await self._drop_welcome()
        view = MessageView(message)
        await self.mount(view)
        await self._prune()
        return view

    async def add_notice(self, text: str, kind: str = "info") -> Notice:
        notice = Notice(text, kind)
        await self.mount(notice)
        return notice

    def refresh_messages(self) -> None:
        """Status, pinned or covered changed in the records: redraw the labels and dimming."""
        for view in self.views():
            view.refresh_state()

    async def _drop_welcome(self) -> None:
        for notice in self.query_children(Notice):
            if notice.kind == "welcome":
                await notice.remove()

    async def _prune(self) -> None:
        views = self.views()
        extra = len(views) - MAX_VIEWS
        if extra <= 0:
            return
        self.hidden_count += extra
        await self.remove_children(views[:extra])
        hidden = [n for n in self.query_children(Notice) if n.kind == "hidden"]
        text = T(self._lang(), "hidden", n=self.hidden_count)
        if hidden:
            hidden[0].update(text)
        else:
            await self.mount(Notice(text, "hidden"), before=0)
