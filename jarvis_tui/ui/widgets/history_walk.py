"""Where the prompt is in the history of sent messages while Up / Down walk it, and the line
above the prompt that says so. No widget here: PromptInput owns the keys and the text."""

from __future__ import annotations

from dataclasses import dataclass, field

from jarvis_tui.core.pasted import NONE, Spans
from jarvis_tui.core.prompt_history import HistoryEntry
from jarvis_tui.texts.i18n import Texts

HISTORY_TEXTS = Texts(
    en={
        "walking": "History {n}/{total} · {where} · {other} · Esc back to your draft",
        "this_session": "this session",
        "all_sessions": "all sessions",
        "to_all": "Alt+↑ all sessions",
        "to_this": "↑ this session",
        "editing": "✎ Editing your {what} · Enter resends it (the old turn stays as a branch) · "
                   "Esc back to your draft",
        "last_message": "last message",
    },
    zh={
        "walking": "历史 {n}/{total} · {where} · {other} · Esc 回到你的草稿",
        "this_session": "本会话",
        "all_sessions": "全部会话",
        "to_all": "Alt+↑ 全部会话",
        "to_this": "↑ 本会话",
        "editing": "✎ 正在编辑你的{what} · Enter 重新发送（原来的一轮保留为分支）· "
                   "Esc 回到你的草稿",
        "last_message": "上一条消息",
    },
)


@dataclass
class HistoryWalk:
    draft: str  # what the prompt held when the walk began: Esc, or Down past the newest
    entries: list[HistoryEntry]  # newest first
    across: bool  # the list of every session's messages, not this one's
    index: int = -1  # the entry shown; -1: none yet (the draft)
    # A message loaded by start_edit rather than reached by walking: the phrase naming it.
    what: str | None = None
    # Entries changed and walked away from, shown as changed when walked back to (readline
    # does the same); the walk's end forgets them.
    edits: dict[int, str] = field(default_factory=dict)
    # What of the draft, and of each changed entry, was pasted: walked back to, it is still
    # pasted (an entry as sent carries its own spans).
    draft_pasted: Spans = NONE
    edits_pasted: dict[int, Spans] = field(default_factory=dict)

    @property
    def entry(self) -> HistoryEntry | None:
        return self.entries[self.index] if 0 <= self.index < len(self.entries) else None

    @property
    def text(self) -> str:
        entry = self.entry
        return self.draft if entry is None else self.edits.get(self.index, entry.text)

    @property
    def pasted(self) -> Spans:
        """The pasted spans of `text`."""
        entry = self.entry
        if entry is None:
            return self.draft_pasted
        return self.edits_pasted.get(self.index, entry.pasted)

    @property
    def edit_of(self) -> int | None:
        """The message an Enter now would resend as a branch: this session's newest (the
        first entry of its list), or the one start_edit loaded."""
        entry = self.entry
        if entry is None or (self.what is None and (self.across or self.index != 0)):
            return None
        return entry.message_id

    def keep(self, shown: str, pasted: Spans = NONE) -> None:
        """The prompt's text (and its pasted spans) as the walk leaves the entry shown."""
        entry = self.entry
        if entry is not None and shown != entry.text:
            self.edits[self.index] = shown
            self.edits_pasted[self.index] = pasted
        else:
            self.edits.pop(self.index, None)
            self.edits_pasted.pop(self.index, None)

    def switch(self, entries: list[HistoryEntry], across: bool, shown: str,
               pasted: Spans = NONE) -> None:
        """Walk another list on from the entry shown (as the prompt `shown` it, edits and
        all): from where it stands there, found by message id, else by text; from the draft
        when it is not in that list."""
        entry = self.entry
        found = -1
        if entry is not None:
            found = next((i for i, e in enumerate(entries)
                          if entry.message_id is not None and e.message_id == entry.message_id),
                         -1)
            if found < 0:
                found = next((i for i, e in enumerate(entries) if e.text == entry.text), -1)
        self.entries, self.across, self.index, self.what = entries, across, found, None
        self.edits = {found: shown} if found >= 0 and shown != entries[found].text else {}
        self.edits_pasted = {found: pasted} if self.edits else {}

    def line(self, lang: str) -> str:
        if self.edit_of is not None:
            what = self.what or HISTORY_TEXTS(lang, "last_message")
            return HISTORY_TEXTS(lang, "editing", what=what)
        return HISTORY_TEXTS(lang, "walking", n=self.index + 1, total=len(self.entries),
                             where=HISTORY_TEXTS(lang, "all_sessions" if self.across
                                                 else "this_session"),
                             other=HISTORY_TEXTS(lang, "to_this" if self.across else "to_all"))
