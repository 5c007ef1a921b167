"""F6 (/memory): the user's memory, what every request of every session is told.

The active entries in the order they are sent (pinned first, then newest), each marked with
whether the next request carries it or leaves it out for the memory budget, and where it came
from; below them the suggestions a compaction found, waiting for a yes (Y) or a no (N). Every
change goes through the ChatSession at once; the next request carries it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.core.session import (
    ChatSession,
    MemoryEntry,
    MemoryRefused,
    MemorySource,
    StoreError,
)
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import translate_bindings, ui_language
from jarvis_tui.ui.screens.confirm import ConfirmScreen
from jarvis_tui.ui.screens.dialog import dialog_css

PREVIEW_CHARS = 200

MEMORY_TEXTS = Texts(
    en={
        "title": "Memory: told to every session",
        "header": "{entries} · {tokens} tokens of {budget} in every request",
        "header_off": "{entries} · memory is off (memory_budget is 0, F3): nothing is sent",
        "empty": "No memory yet. Press A to add an entry, type /remember TEXT, or M on a "
                 "selected message.",
        "sent": "✓ sent",
        "left_out": "✗ left out: over the memory budget ({budget} tokens)",
        "pinned": "📌 pinned",
        "typed": "typed",
        "from": "from “{title}” #{id}",
        "from_gone": "from session #{id}",
        "origin_suggested": "suggested from what you typed in {place}",
        "origin_remember": "you added it with /remember or F6 in {place}",
        "origin_message_user": "you remembered your message in {place}",
        "origin_message_assistant": "you remembered a reply in {place}",
        "origin_cli": "added with `jarvis-tui memory add`",
        "origin_import": "imported with `jarvis-tui memory import`",
        "place_titled": "“{title}”",
        "place_untitled": "session #{id}",
        "place_gone": "a deleted session",
        "source_excluded": "⚠ its source is excluded (/forget): keep it or delete it (D)",
        "suggestions": "Suggestions ({n}): Y accept · N dismiss",
        "suggested": "💡 suggested",
        "hint": "A/Enter add · E edit · P pin · D delete · Y/N accept / dismiss a suggestion · "
                "Esc close",
        "add_title": "Remember (in every request of every session)",
        "edit_title": "Edit the memory entry",
        "editor_hint": "Enter saves · Esc cancels",
        "delete_title": "Delete from memory",
        "delete_question": "Delete “{text}” from the memory? No session is told it again.",
        "refused": "Not stored: {why}",
        "not_suggestion": "Y and N act on a suggestion; this entry is in the memory already.",
        "remembered": "🧠 Remembered: “{text}” ({tokens} token{s}), sent with every request of "
                      "every session; F6 lists the memory",
        "remembered_left_out": "🧠 Remembered: “{text}”, but the next request leaves it out: "
                               "the memory is over its budget ({budget} tokens); F6 to pin it "
                               "or make room",
        "refused_line": "✖ Not remembered: {why}",
        "nothing_to_remember": "No message to remember yet.",
        "key_add": "Add", "key_edit": "Edit", "key_pin": "Pin", "key_delete": "Delete",
        "key_accept": "Accept", "key_dismiss_suggestion": "Dismiss", "key_close": "Close",
    },
    zh={
        "title": "记忆：告知每个会话",
        "header": "{entries} · 每次请求 {tokens} / {budget} token",
        "header_off": "{entries} · 记忆已关闭（memory_budget 为 0，F3）：不发送任何内容",
        "empty": "还没有记忆。按 A 添加一条，输入 /remember 文字，或在选中的消息上按 M。",
        "sent": "✓ 发送",
        "left_out": "✗ 不发送：超出记忆预算（{budget} token）",
        "pinned": "📌 已固定",
        "typed": "手动输入",
        "from": "来自“{title}” #{id}",
        "from_gone": "来自会话 #{id}",
        "origin_suggested": "建议自你在{place}中输入的内容",
        "origin_remember": "你在{place}中用 /remember 或 F6 添加",
        "origin_message_user": "你在{place}中记住了自己的消息",
        "origin_message_assistant": "你在{place}中记住了一条回复",
        "origin_cli": "用 `jarvis-tui memory add` 添加",
        "origin_import": "用 `jarvis-tui memory import` 导入",
        "place_titled": "“{title}”",
        "place_untitled": "第 {id} 号会话",
        "place_gone": "已删除的会话",
        "source_excluded": "⚠ 来源已排除（/forget）：保留或删除（D）",
        "suggestions": "建议（{n}）：Y 接受 · N 忽略",
        "suggested": "💡 建议",
        "hint": "A/Enter 添加 · E 编辑 · P 固定 · D 删除 · Y/N 接受 / 忽略建议 · Esc 关闭",
        "add_title": "记住（每个会话的每次请求）",
        "edit_title": "编辑记忆条目",
        "editor_hint": "Enter 保存 · Esc 取消",
        "delete_title": "从记忆中删除",
        "delete_question": "从记忆中删除“{text}”？之后不再告知任何会话。",
        "refused": "未保存：{why}",
        "not_suggestion": "Y 和 N 作用于建议；这一条已经在记忆中。",
        "remembered": "🧠 已记住：“{text}”（{tokens} token），每个会话的每次请求都会带上；"
                      "F6 列出记忆",
        "remembered_left_out": "🧠 已记住：“{text}”，但下一次请求不会发送它：记忆超出预算"
                               "（{budget} token）；按 F6 固定它或腾出空间",
        "refused_line": "✖ 未记住：{why}",
        "nothing_to_remember": "还没有可记住的消息。",
        "key_add": "添加", "key_edit": "编辑", "key_pin": "固定", "key_delete": "删除",
        "key_accept": "接受", "key_dismiss_suggestion": "忽略", "key_close": "关闭",
    },
)


def why_not(err: MemoryRefused | StoreError, language: str) -> str:
    """Why an entry was not kept, in the app's language where the guard said it (a store's
    error names a file and is English everywhere)."""
    return err.said(language) if isinstance(err, MemoryRefused) else str(err)


def _one_line(text: str, most: int = PREVIEW_CHARS) -> str:
    # visible(): an entry stored before the store removed characters that show nothing shows
    # them written out (<U+E0041>), so no word the model is sent is hidden from the user.
    line = " ".join(visible(text).split())
    return line if len(line) <= most else line[:most - 1] + "…"


class MemoryEditor(ModalScreen[bool]):
    """One line to add or edit an entry. `save` stores the text and returns None, or the one
    line saying why it was refused: then the dialog stays, with the text as typed."""

    DEFAULT_CSS = dialog_css("MemoryEditor", max_width=100, max_height=9, height="auto") + """
    MemoryEditor #dialog { height: auto; }
    MemoryEditor #problem { color: $error; }
    MemoryEditor #editor_hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", show=False)]

    def __init__(self, title: str, text: str, save: Callable[[str], str | None]) -> None:
        super().__init__()
        self._title, self._text, self._save = title, text, save

    def compose(self) -> ComposeResult:
        lang = ui_language(self.app)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._title
            yield Input(self._text, id="memory_text")
            yield Static("", id="problem", markup=False)
            yield Static(MEMORY_TEXTS(lang, "editor_hint"), id="editor_hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        why = self._save(event.value)
        if why is None:
            self.dismiss(True)
            return
        self.query_one("#problem", Static).update(
            MEMORY_TEXTS(ui_language(self.app), "refused", why=why))

    def action_cancel(self) -> None:
        self.dismiss(False)


class MemoryScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("a", "add", "Add"),
        # Enter adds too, on an empty list as well (the list itself would take it only with
        # an entry highlighted).
        Binding("enter", "add", "Add", show=False, priority=True),
        Binding("e", "edit", "Edit"),
        Binding("p", "pin", "Pin"),
        Binding("d", "delete", "Delete"),
        Binding("y", "accept", "Accept"),
        Binding("n", "dismiss_suggestion", "Dismiss"),
        Binding("escape", "close", "Close"),
    ]

    DEFAULT_CSS = dialog_css("MemoryScreen", max_width=110, max_height=36) + """
    MemoryScreen #memory_header { color: $text-muted; }
    MemoryScreen #memory_problem { color: $error; }
    MemoryScreen #memory_note { color: $text-warning; }
    MemoryScreen OptionList { height: 1fr; border: none; }
    MemoryScreen #memory_hint { color: $text-muted; }
    """

    def __init__(self, session: ChatSession) -> None:
        super().__init__()
        self.session = session
        self.entries: list[MemoryEntry] = []
        self._sent: tuple[int, ...] = ()
        self._sources: dict[int, MemorySource] = {}

    @property
    def lang(self) -> str:
        return ui_language(self.app)

    def _entries(self, n: int) -> str:
        return f"{n:,} 条" if self.lang == "zh" else f"{n:,} entr{'y' if n == 1 else 'ies'}"

    def _t(self, key: str, **values: object) -> str:
        return MEMORY_TEXTS(self.lang, key, **values)

    def compose(self) -> ComposeResult:
        translate_bindings(self, self.lang, MEMORY_TEXTS)
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield Static("", id="memory_header", markup=False)
            yield Static("", id="memory_problem", markup=False)
            yield Static("", id="memory_note", markup=False)
            yield OptionList(id="memory_list")
            yield Static(self._t("hint"), id="memory_hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.problem()
        self.note()
        self.refresh_list()
        self.query_one(OptionList).focus()

    # -- the list -------------------------------------------------------------------------

    def refresh_list(self, keep: int | None = None) -> None:
        """Read the memory again and show it; `keep`: the entry to leave highlighted."""
        options = self.query_one(OptionList)
        if keep is None:
            keep = self._selected_id()
        try:
            entries = self.session.memory.entries()
            section = self.session.memory.sent()
            titles = {s.id: s.title for s in self.session.list_sessions()}
            self._sources = self.session.memory.sources()
        except StoreError as err:
            self.problem(str(err))
            return
        budget = self.session.memory.budget()
        self._sent = section.sent
        active = [e for e in entries if e.state == "active"]
        suggested = [e for e in entries if e.state == "suggested"]
        order = {i: n for n, i in enumerate((*section.sent, *section.left_out))}
        active.sort(key=lambda e: (order.get(e.id, len(order)), -e.created_at))
        self.entries = active + suggested
        header = self.query_one("#memory_header", Static)
        counted = self._entries(len(active))
        if budget <= 0:
            header.update(self._t("header_off", entries=counted))
        else:
            header.update(self._t("header", entries=counted, tokens=f"{section.tokens:,}",
                                  budget=f"{budget:,}"))
        options.clear_options()
        if not active and not suggested:
            options.add_option(Option(self._t("empty"), disabled=True))
        for entry in active:
            mark = self._t("sent") if entry.id in section.sent \
                else self._t("left_out", budget=f"{budget:,}")
            options.add_option(Option(self._label(entry, mark, titles), id=str(entry.id)))
        if suggested:
            options.add_option(None)
            options.add_option(Option(Content.styled(self._t("suggestions", n=len(suggested)),
                                                     "bold $text-accent"), disabled=True))
            for entry in suggested:
                options.add_option(Option(self._label(entry, self._t("suggested"), titles),
                                          id=str(entry.id)))
        ids = [str(e.id) for e in self.entries]
        if keep is not None and str(keep) in ids:
            options.highlighted = options.get_option_index(str(keep))
        elif self.entries:
            options.highlighted = options.get_option_index(ids[0])

    def _label(self, entry: MemoryEntry, mark: str, titles: dict[int, str]) -> Content:
        marks = [mark]
        if entry.pinned:
            marks.append(self._t("pinned"))
        source = self._sources.get(entry.id)
        marks.append(self._origin(entry, source, titles))
        marks.append(time.strftime("%Y-%m-%d", time.localtime(entry.created_at)))
        style = "bold $text-accent" if entry.state == "suggested" or entry.id in \
            self._sent else "bold $text-warning"
        lines = [Content.styled(" · ".join(marks), style)]
        if source is not None and source.excluded and entry.state == "active":
            lines.append(Content.styled(self._t("source_excluded"), "$text-warning"))
        return Content("\n").join([*lines, Content(_one_line(entry.text))])

    def _origin(self, entry: MemoryEntry, source: MemorySource | None,
                titles: dict[int, str]) -> str:
        """Where the entry came from, as the memory row says it: how it was added and in
        which session."""
        cid = entry.conversation_id
        if cid is not None and titles.get(cid):
            place = self._t("place_titled", title=_one_line(titles[cid], 40))
        elif cid is not None and cid in titles:
            place = self._t("place_untitled", id=cid)
        else:
            place = self._t("place_gone")
        origin = source.origin if source is not None else None
        if origin == "message":
            role = "assistant" if source is not None and source.role == "assistant" else "user"
            return self._t(f"origin_message_{role}", place=place)
        if origin in ("suggested", "remember"):
            return self._t(f"origin_{origin}", place=place)
        if origin in ("cli", "import"):
            return self._t(f"origin_{origin}")
        # Stored before origins were kept: only the session it names is known.
        if cid is None:
            return self._t("typed")
        if titles.get(cid):
            return self._t("from", title=_one_line(titles[cid], 40), id=cid)
        return self._t("from_gone", id=cid)

    def _selected_id(self) -> int | None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return None
        option = options.get_option_at_index(options.highlighted)
        return int(option.id) if option.id else None

    def selected(self) -> MemoryEntry | None:
        chosen = self._selected_id()
        return next((e for e in self.entries if e.id == chosen), None)

    def problem(self, line: str = "") -> None:
        """One line above the list saying why the last key did nothing; "" hides it."""
        shown = self.query_one("#memory_problem", Static)
        shown.update(line)
        shown.display = bool(line)

    def note(self, line: str | None = None) -> None:
        """One line above the list saying what storing the last text removed from it (the
        characters that show nothing); None hides it."""
        shown = self.query_one("#memory_note", Static)
        shown.update(line or "")
        shown.display = bool(line)

    def _changed(self, keep: int | None = None, note: str | None = None) -> None:
        self.problem()
        self.note(note)
        self.refresh_list(keep)

    # -- the keys -------------------------------------------------------------------------

    def action_add(self) -> None:
        def save(text: str) -> str | None:
            try:
                entry = self.session.memory.remember(text)
            except (MemoryRefused, StoreError) as err:
                return why_not(err, self.lang)
            self._changed(entry.id, self.session.memory.note(text, self.lang))
            return None

        self.app.push_screen(MemoryEditor(self._t("add_title"), "", save))

    def action_edit(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        def save(text: str) -> str | None:
            try:
                self.session.memory.edit(entry.id, text)
            except (MemoryRefused, StoreError) as err:
                return why_not(err, self.lang)
            self._changed(entry.id, self.session.memory.note(text, self.lang))
            return None

        self.app.push_screen(MemoryEditor(self._t("edit_title"), entry.text, save))

    def action_pin(self) -> None:
        entry = self.selected()
        if entry is None or entry.state != "active":
            return
        try:
            self.session.memory.pin(entry.id, not entry.pinned)
        except StoreError as err:
            self.problem(str(err))
            return
        self._changed(entry.id)

    def action_delete(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.session.memory.delete(entry.id)
            except StoreError as err:
                self.problem(str(err))
                return
            self._changed()

        self.app.push_screen(ConfirmScreen(self._t("delete_title"),
                                           self._t("delete_question", text=_one_line(entry.text,
                                                                                     80)),
                                           self.lang), answered)

    def action_accept(self) -> None:
        self._answer_suggestion(self.session.memory.accept, keep=True)

    def action_dismiss_suggestion(self) -> None:
        self._answer_suggestion(self.session.memory.dismiss, keep=False)

    def _answer_suggestion(self, answer: Callable[[int], object], *, keep: bool) -> None:
        """Y or N on the highlighted suggestion; an accepted one stays highlighted, now in the
        memory, a dismissed one leaves the list."""
        entry = self.selected()
        if entry is None:
            return
        if entry.state != "suggested":
            self.problem(self._t("not_suggestion"))
            return
        try:
            answer(entry.id)
        except (MemoryRefused, StoreError) as err:
            why = why_not(err, self.lang)  # "not stored" is what a refused yes means
            self.problem(self._t("refused", why=why) if keep else why)
            return
        # A suggestion stored by an older version may still hold what shows nothing: a yes
        # keeps what is left, and says what went.
        note = self.session.memory.note(entry.text, self.lang) if keep else None
        self._changed(entry.id if keep else None, note)

    def action_close(self) -> None:
        self.dismiss(None)
