"""The session switcher: every saved conversation, newest first, narrowed by typing part of a title.

Dismisses with the chosen conversation's id, 0 for "start a new session", or None when closed.
The screen is given the list; it never reads the store itself.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.session import SessionInfo
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

NEW_SESSION = 0  # never a real id: SQLite AUTOINCREMENT starts at 1
TIME_FORMAT = "%Y-%m-%d %H:%M"
CURRENT_MARK = "●"

SESSIONS_TEXTS = Texts(
    en={
        "title": "Sessions",
        "filter": "Type to filter by title",
        "col.title": "Title",
        "col.updated": "Last updated",
        "col.messages": "Messages",
        "col.id": "ID",
        "untitled": "(untitled)",
        "empty": "No saved sessions yet. Press ctrl+n to start one.",
        "no_match": "No session title contains “{query}”.",
        "count": "{shown} of {total} sessions",
        "hint": "Enter open · ↑↓ move · ctrl+n new session · Esc close",
    },
    zh={
        "title": "会话",
        "filter": "输入文字按标题筛选",
        "col.title": "标题",
        "col.updated": "最后更新",
        "col.messages": "消息数",
        "col.id": "编号",
        "untitled": "（无标题）",
        "empty": "还没有保存的会话。按 ctrl+n 开始一个新会话。",
        "no_match": "没有标题包含“{query}”的会话。",
        "count": "显示 {shown} / 共 {total} 个会话",
        "hint": "Enter 打开 · ↑↓ 移动 · ctrl+n 新会话 · Esc 关闭",
    },
)


def _local_time(timestamp: float) -> str:
    try:
        return datetime.fromtimestamp(timestamp).strftime(TIME_FORMAT)
    except (OverflowError, OSError, ValueError):  # a corrupt timestamp must not hide the list
        return "?"


class SessionTable(DataTable[Text]):
    """A DataTable where one click on a row opens it (DataTable's own needs a second click)."""

    # Rows are the only axis here, so Home/End go to the first/last session, not a column.
    BINDINGS = [
        Binding("home", "scroll_top", show=False),
        Binding("end", "scroll_bottom", show=False),
    ]

    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        row, column = meta.get("row"), meta.get("column")
        if not isinstance(row, int) or not isinstance(column, int) or row < 0 or column < 0:
            return  # header, row label or empty space: DataTable's own handling is right
        if row >= self.row_count:
            return
        event.prevent_default()
        event.stop()
        self.move_cursor(row=row)
        self.action_select_cursor()


class SessionsScreen(ModalScreen[int | None]):
    """Pick a conversation. Enter or a click opens it, ctrl+n asks for a new one, Esc closes."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+n", "new_session", "New session", priority=True),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
    ]

    DEFAULT_CSS = dialog_css("SessionsScreen", max_width=110, max_height=36) + """
    SessionsScreen #filter {
        margin-bottom: 1;
    }
    SessionsScreen #table {
        height: 1fr;
        background: $surface;
    }
    SessionsScreen #empty {
        height: 1fr;
        content-align: center middle;
        color: $text-muted;
        text-style: italic;
        display: none;
    }
    SessionsScreen.-empty #empty {
        display: block;
    }
    SessionsScreen.-empty #table {
        display: none;
    }
    SessionsScreen #count, SessionsScreen #hint {
        color: $text-muted;
    }
    """

    def __init__(self, conversations: list[SessionInfo], current_id: int | None) -> None:
        super().__init__()
        self.conversations = list(conversations)
        self.current_id = current_id
        self._done = False  # a click and a key in the same frame must not dismiss twice

    def _t(self, key: str, **values: object) -> str:
        return SESSIONS_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            yield Input(placeholder=self._t("filter"), id="filter")
            table: SessionTable = SessionTable(id="table", cursor_type="row", zebra_stripes=True)
            table.add_column("", key="mark")
            table.add_column(self._t("col.title"), key="title")
            table.add_column(self._t("col.updated"), key="updated")
            table.add_column(self._t("col.messages"), key="messages")
            table.add_column(self._t("col.id"), key="id")
            yield table
            yield Static("", id="empty", markup=False)
            yield Static("", id="count", markup=False)
            yield Static(self._t("hint"), id="hint", markup=False)

    def on_mount(self) -> None:
        self._fill("")
        self.query_one("#filter", Input).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_title)

    def _fit_title(self) -> None:
        """A long title is cut to the room left, so the date and count columns stay on screen."""
        table = self.table
        others = sum(c.get_render_width(table) for key, c in table.columns.items()
                     if key.value != "title")
        room = table.scrollable_content_region.width - others - 2 * table.cell_padding - 1
        column = table.columns.get(ColumnKey("title"))
        if column is not None and room > 8:
            column.auto_width = False
            column.width = room
            table.refresh(layout=True)

    @property
    def table(self) -> SessionTable:
        return self.query_one("#table", SessionTable)

    def matching(self, query: str) -> list[SessionInfo]:
        """The conversations whose title contains `query`, ignoring case, in the given order."""
        needle = query.strip().casefold()
        if not needle:
            return list(self.conversations)
        return [c for c in self.conversations if needle in c.title.casefold()]

    def _fill(self, query: str) -> None:
        shown = self.matching(query)
        table = self.table
        table.clear()
        for conv in shown:
            # Text cells, not strings: DataTable parses strings as markup, and a title is user text.
            table.add_row(
                Text(CURRENT_MARK if conv.id == self.current_id else "", style="bold"),
                Text(terminal_safe(conv.title).strip() or self._t("untitled"), no_wrap=True,
                     overflow="ellipsis"),
                Text(_local_time(conv.updated_at)),
                Text(str(conv.message_count), justify="right"),
                Text(str(conv.id), justify="right"),
                key=str(conv.id),
            )
        if shown:
            table.move_cursor(row=0)
        self.set_class(not shown, "-empty")
        if not self.conversations:
            empty = self._t("empty")
        else:
            empty = self._t("no_match", query=query.strip())
        self.query_one("#empty", Static).update(empty)
        self.query_one("#count", Static).update(
            self._t("count", shown=len(shown), total=len(self.conversations))
        )

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self._open_highlighted()

    @on(DataTable.RowSelected, "#table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self._finish(int(event.row_key.value))

    def _open_highlighted(self) -> None:
        table = self.table
        if table.row_count and not self.has_class("-empty"):
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            if key.value is not None:
                self._finish(int(key.value))

    def _finish(self, result: int | None) -> None:
        if not self._done:
            self._done = True
            self.dismiss(result)

    def action_close(self) -> None:
        self._finish(None)

    def action_new_session(self) -> None:
        self._finish(NEW_SESSION)

    def action_move(self, step: int) -> None:
        # Arrows reach here only while the filter has focus: the table handles its own.
        if step > 0:
            self.table.action_cursor_down()
        else:
            self.table.action_cursor_up()

    def action_page(self, step: int) -> None:
        if step > 0:
            self.table.action_page_down()
        else:
            self.table.action_page_up()
