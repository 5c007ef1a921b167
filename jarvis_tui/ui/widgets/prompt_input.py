"""The prompt: a multi-line TextArea where Enter sends and Ctrl+J (or Alt+Enter, or Shift+Enter
where the terminal reports it) inserts a new line. Up on its first row and Down on its last walk
the messages sent before, as a shell's history does (Alt+Up / Alt+Down: those of every session).

It knows which of its text was pasted (the terminal's bracketed paste, Ctrl+V) and keeps those
spans through every edit, undo and redo (core/pasted.py says how), so the message sent says
what the user typed and what they pasted: only the typed part may become a memory suggestion."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Edit, EditResult, Location

from jarvis_tui.core.pasted import NONE, Spans, deleted, inserted, shifted, tidy
from jarvis_tui.core.prompt_history import HistoryEntry
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import translate_bindings, ui_language
from jarvis_tui.ui.widgets.history_walk import HistoryWalk

PROMPT_TEXTS = Texts(en={"key_submit": "Send"}, zh={"key_submit": "发送"})
NEWLINE_KEYS = ("ctrl+j", "alt+enter", "shift+enter")
# While the @ list is open these move in it, pick from it or close it, not the prompt.
MENTION_KEYS = ("up", "down", "tab", "enter", "escape")
# key -> (across sessions, towards older entries)
WALK_KEYS = {"up": (False, True), "down": (False, False),
             "alt+up": (True, True), "alt+down": (True, False)}


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: tall $primary 40%; }
    PromptInput:focus { border: tall $primary; }
    """
    # Shown in the footer, but handled in on_key: a priority binding runs as the app receives
    # the key, ahead of the letters before it in the same burst (a fast typist, a slow link),
    # and would send half a message and wipe the rest.
    BINDINGS = [Binding("enter", "submit", "Send", show=True)]

    class Submitted(Message):
        def __init__(self, prompt: PromptInput, text: str, edit_of: int | None = None,
                     pasted: Spans = NONE) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.edit_of = edit_of  # the message this text is an edit of; None: a new message
            self.pasted = pasted  # the spans of `text` that were pasted, not typed

    class Walked(Message):
        """The history walk moved, began or ended: `line` says where it is ("" when over)."""

        def __init__(self, prompt: PromptInput, line: str, editing: bool) -> None:
            super().__init__()
            self.prompt = prompt
            self.line = line
            self.editing = editing

    class PastedLine(Message):
        """One line was pasted at [start, end): maybe a path the screen offers to attach."""

        def __init__(self, text: str, start: int, end: int) -> None:
            super().__init__()
            self.text = text
            self.start = start
            self.end = end

    class MentionKey(Message):
        """A key for the @ list, which the screen keeps (MENTION_KEYS)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=False, **kwargs)
        translate_bindings(self, ui_language(self.app), PROMPT_TEXTS)
        # Given by the screen: the sent messages, newest first, of this session (False) or of
        # every session (True). None: no history to walk.
        self.history_source: Callable[[bool], list[HistoryEntry]] | None = None
        self._walk: HistoryWalk | None = None
        self._pasted: Spans = NONE  # the spans of the text shown that were pasted
        self._pasting = False  # the edit under way puts in pasted text
        self.mentioning = False  # the screen's @ list is open: MENTION_KEYS go to it

    # -- what was pasted --------------------------------------------------------------------

    @property
    def pasted(self) -> Spans:
        """The [start, end) spans of `text` that were pasted rather than typed."""
        return tidy(self._pasted, len(self.text))

    def edit(self, edit: Edit) -> EditResult:
        # Every change of the text but undo and redo comes here: typing, deleting, pasting,
        # insert() and clear(). The spans before and after ride on the edit, for undo / redo.
        start, stop = _index(self, edit.top), _index(self, edit.bottom)
        before = self._pasted
        result = super().edit(edit)
        end = _index(self, result.end_location)
        self._pasted = inserted(deleted(before, start, stop), start, end - start,
                                pasted=self._pasting)
        edit._jarvis_pasted = (before, self._pasted)  # type: ignore[attr-defined]
        return result

    def undo(self) -> None:
        # The batch undone is the newest on the stack: the spans go back to what they were
        # before its first edit.
        batches = self.history.undo_stack
        super().undo()
        if batches and batches[-1]:
            self._pasted = _marks_of(batches[-1][0], 0, self._pasted)

    def redo(self) -> None:
        batches = self.history.redo_stack
        super().redo()
        if batches and batches[-1]:
            self._pasted = _marks_of(batches[-1][-1], 1, self._pasted)

    async def on_paste(self, event: events.Paste) -> None:
        # TextArea's own handler, with the text marked as pasted; prevent_default keeps the
        # base class from inserting it a second time.
        event.prevent_default()
        if self.read_only:
            return
        self._pasting = True
        try:
            # As TextArea's own paste (its private _replace_via_keyboard is this call after
            # the read-only check above), through the public replace.
            if result := self.replace(event.text, *self.selection,
                                      maintain_selection_offset=False):
                self.move_cursor(result.end_location)
                self.focus()
                if event.text.strip() and "\n" not in event.text.strip():
                    end = _index(self, result.end_location)
                    self.post_message(self.PastedLine(event.text, end - len(event.text), end))
        finally:
            self._pasting = False

    def action_paste(self) -> None:
        self._pasting = True  # the app's own clipboard (Ctrl+V): pasted as much as a terminal's
        try:
            super().action_paste()
        finally:
            self._pasting = False

    def load_text(self, text: str, pasted: Spans = NONE) -> None:
        """Show `text` (its `pasted` spans marked), as TextArea.load_text does."""
        super().load_text(text)
        self._pasted = tidy(pasted, len(self.text))

    @property
    def walking(self) -> bool:
        """An entry of the history (or a message loaded to edit) is shown, not the draft."""
        return self._walk is not None

    @property
    def edit_of(self) -> int | None:
        """The message an Enter now resends edited, or None for a new message."""
        return self._walk.edit_of if self._walk is not None else None

    @property
    def history_line(self) -> str:
        return self._walk.line(ui_language(self.app)) if self._walk is not None else ""

    def on_key(self, event: events.Key) -> None:
        # Public handlers run before the base class's own (Textual walks the classes in order);
        # prevent_default keeps TextArea from also inserting the key, and stop keeps the key
        # from the bindings (TextArea's cursor keys, the screen's Esc).
        if self.mentioning and event.key in MENTION_KEYS:
            self.post_message(self.MentionKey(event.key))
        elif event.key == "enter":
            self.action_submit()
        elif event.key in NEWLINE_KEYS:
            self.insert("\n")
        elif not (event.key == "escape" and self.cancel_walk()
                  or event.key in WALK_KEYS and self._walk_key(event.key)):
            return
        event.stop()
        event.prevent_default()

    def _walk_key(self, key: str) -> bool:
        """Up / Down at the edge of the text walk the history; inside a message of several
        rows they move the cursor, as in any editor (False: the key is TextArea's)."""
        across, older = WALK_KEYS[key]
        if not across:
            here = self.cursor_location
            edge = (self.navigator.is_first_wrapped_line(here) if older
                    else self.navigator.is_last_wrapped_line(here))
            if not edge:
                return False
        walk = self._walk
        if walk is None:
            entries = self._entries(across) if older else []
            if not entries:
                return False
            walk = HistoryWalk(self.text, entries, across, draft_pasted=self.pasted)
        elif walk.across != across or walk.what is not None:
            entries = self._entries(across)
            if not entries:
                return True  # nothing there: the entry shown stays
            walk.switch(entries, across, self.text, self.pasted)
        else:
            walk.keep(self.text, self.pasted)
        index = walk.index + (1 if older else -1)
        if index < 0:
            self._walk = walk
            self.cancel_walk()
        elif index < len(walk.entries):  # past the oldest, it stays there, as a shell does
            walk.index = index
            self._walk = walk
            self._show(walk.text, walk.pasted, at_end=older)
        return True

    def _entries(self, across: bool) -> list[HistoryEntry]:
        return self.history_source(across) if self.history_source is not None else []

    def _show(self, text: str, pasted: Spans, *, at_end: bool) -> None:
        # Older entries open at their end, newer ones at the end of their first row, so that
        # the next Up / Down walks a message of several rows line by line before leaving it
        # (prompt_toolkit's shells do the same).
        self.load_text(text, pasted)
        self.move_cursor(self.document.end if at_end
                         else (0, len(self.document.get_line(0))))
        self._walked()

    def _walked(self) -> None:
        self.post_message(self.Walked(self, self.history_line, self.edit_of is not None))

    def start_edit(self, message_id: int, text: str, what: str, pasted: Spans = NONE) -> None:
        """Load a message to edit and resend (`what` names it on the line above, as in
        "message of 14:02"; `pasted`: its pasted spans, which stay marked); Esc gives the
        draft back."""
        if self._walk is not None:
            draft, draft_pasted = self._walk.draft, self._walk.draft_pasted
        else:
            draft, draft_pasted = self.text, self.pasted
        self._walk = HistoryWalk(draft, [HistoryEntry(text, message_id, pasted)], across=False,
                                 index=0, what=what, draft_pasted=draft_pasted)
        self._show(text, pasted, at_end=True)

    def cancel_walk(self) -> bool:
        """Back to the draft the walk began from, as it was; False when not walking."""
        walk, self._walk = self._walk, None
        if walk is None:
            return False
        self._show(walk.draft, walk.draft_pasted, at_end=True)
        return True

    @property
    def cursor_index(self) -> int:
        return _index(self, self.cursor_location)

    def take(self, start: int) -> None:
        """Remove the text from `start` (an index) to the cursor: an @path once picked."""
        self.delete(self.document.get_location_from_index(start), self.cursor_location)

    def action_submit(self) -> None:
        """Take the text out now, in key order, so keys typed after Enter stay for the next
        message; whoever cannot use it puts it back with restore()."""
        text = self.text
        if text.strip():
            edit_of, pasted = self.edit_of, self.pasted
            if self._walk is not None:  # sent: the next walk starts afresh from a new draft
                self._walk = None
                self._walked()
            self.clear()
            self.post_message(self.Submitted(self, text, edit_of, pasted))

    def restore(self, text: str, pasted: Spans = NONE) -> None:
        """Put text the server did not take back (its `pasted` spans marked again), ahead of
        anything typed since (a walk through the history first gives its draft back, so
        nothing typed is lost)."""
        self.cancel_walk()
        current, marks = self.text, self.pasted
        if current.strip():
            self.load_text(f"{text}\n{current}", (*pasted, *shifted(marks, len(text) + 1)))
        else:
            self.load_text(text, pasted)
        self.move_cursor(self.document.end)


def _marks_of(edit: Edit, which: int, otherwise: Spans) -> Spans:
    """The pasted spans an edit recorded (0: before it, 1: after it)."""
    marks = getattr(edit, "_jarvis_pasted", None)
    return marks[which] if marks is not None else otherwise


def _index(area: TextArea, location: Location) -> int:
    """Where `location` is in `area.text`, a location past a row's or the text's end taken as
    that end (as the document takes it)."""
    doc = area.document
    row = min(max(location[0], 0), doc.line_count - 1)
    column = min(max(location[1], 0), len(doc.get_line(row)))
    return doc.get_index_from_location((row, column))
