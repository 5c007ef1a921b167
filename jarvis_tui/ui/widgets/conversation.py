"""The conversation: message views, notices and compaction dividers in a scroll anchored to the
bottom. Only a page of a long session is mounted (paged_scroll pages the rest in as the
user scrolls); every message stays in the store. With the focus, one message is selected
(message_cursor)."""

from __future__ import annotations

from collections.abc import Iterable

from jarvis_tui.core.messages import Message
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.actions import KEY_TEXTS
from jarvis_tui.ui.languages import translate_bindings, ui_language
from jarvis_tui.ui.widgets.message_cursor import MessageCursor
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.notice import Notice
from jarvis_tui.ui.widgets.paged_scroll import MAX_VIEWS, PAGE
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.tool_block import ToolInfo

__all__ = ["MAX_VIEWS", "PAGE", "Conversation", "Notice"]

CONVERSATION_TEXTS = Texts(
    en={"welcome": "New session. Type a message and press Enter; Ctrl+J adds a new line; "
                   "F1 lists every key and command."},
    zh={"welcome": "新会话。输入消息后按 Enter 发送；Ctrl+J 换行；F1 查看全部按键与命令。"},
)


class Conversation(MessageCursor):
    DEFAULT_CSS = """
    Conversation { padding: 0 1; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    """

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        translate_bindings(self, ui_language(self.app), KEY_TEXTS)

    def action_back_to_prompt(self) -> None:
        self.forget_selection()
        self.screen.query_one(PromptInput).focus()

    async def show(self, messages: list[Message]) -> None:
        """Replace everything with this session's messages; the newest PAGE are mounted."""
        async with self.lock:
            self.records = list(messages)
            self.tail_notes = []
            self.tool_infos = {}
            self.stubbed = set()
            await self.mount_slice(max(0, len(messages) - PAGE), len(messages))
            if not messages:
                await self.mount(Notice(CONVERSATION_TEXTS(self.lang, "welcome"), "welcome"))
        self.anchor()
        if self.has_focus:  # another session, or this one read again: the newest is selected
            self.call_after_refresh(self.on_focus)

    async def add_message(self, message: Message, tool: ToolInfo | None = None) -> MessageView:
        """Append a message (the user's, a reply view about to stream, a tool call's result or
        its stand-in while it runs); when the user had paged away from the newest messages,
        those come back first so the new one is seen."""
        async with self.lock:
            for notice in self.query_children(Notice):
                if notice.kind == "welcome":
                    await notice.remove()
            if not self.at_tail:
                await self.mount_tail()
                self.anchor()
            self.records.append(message)
            self.end += 1
            self.tail_notes = []
            if tool is not None and message.tool_call_id:
                self.tool_infos[message.tool_call_id] = tool
            view = self.view_for(len(self.records) - 1)
            await self.mount(view)
            await self.prune_top()
        if not self.has_focus:
            self.forget_selection()  # the next Tab starts at the newest message, this one
        return view

    async def add_notice(self, text: str, kind: str = "info") -> Notice:
        """A notice after the newest message; while those are paged out it waits, and shows
        when they come back."""
        notice = Notice(text, kind)
        async with self.lock:
            self.tail_notes.append(notice)
            if self.at_tail:
                await self.mount(notice)
        return notice

    def refresh_messages(self, ids: Iterable[int] | None = None) -> None:
        """Status, pinned or covered changed for these stored messages (all by default):
        redraw their views' labels and dimming."""
        wanted = None if ids is None else set(ids)
        for view in self.views():
            if wanted is None or view.message.id in wanted:
                view.refresh_state()

    def replace_record(self, old: Message, new: Message) -> None:
        """A stand-in record became the stored one (a tool result whose view was paged out
        while the call ran)."""
        for i, record in enumerate(self.records):
            if record is old:
                self.records[i] = new
                return

    def set_request_states(self, states: dict[int, str]) -> None:
        """What the next request does with each message: the labels whose mark changed are
        redrawn; views paged in later read the states as they mount."""
        before, self.request_states = self.request_states, dict(states)
        changed = {i for i in before.keys() | states.keys() if before.get(i) != states.get(i)}
        if changed:
            self.refresh_messages(changed)

    def on_mount(self) -> None:
        # The marks' colours are the theme's variables: a new theme (the palette, settings)
        # redraws them, once its variables are set (the signal comes after).
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        self.refresh_messages(self.request_states)

    def mark_stubbed(self, ids: Iterable[int]) -> None:
        """These tool results went to the server as one-line stubs: their views say so."""
        self.stubbed.update(ids)
        self.refresh_messages(ids)
