"""What the chat screen does for slash commands and its keys: pin, export, copy, cost, help, the
summary editor, settings and sessions. A mixin, so the screen file holds layout, sending and
events."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store import StoreError
from jarvis_tui.ui.chat_texts import T
from jarvis_tui.ui.commands import Command, command_help
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel

if TYPE_CHECKING:
    from jarvis_tui.ui.screens.chat import ChatScreen

    _Base = ChatScreen
else:
    _Base = object


class ChatCommands(_Base):
    async def run_command(self, command: Command) -> None:
        match command.name:
            case "compact":
                if self.sending is not None:
                    await self.say(T(self.lang, "compact_while_sending"), "info")
                elif self.compacting:
                    await self.say(T(self.lang, "already_compacting"), "info")
                else:
                    self.run_compaction("manual", command.arg or None)
            case "new":
                await self.action_new_session()
            case "pin":
                await self.pin_last()
            case "recall":
                await self.recall(command.arg)
            case "export":
                await self.export(command.arg)
            case "copy":
                self.action_copy_reply()
            case "cost":
                await self.show_cost()
            case "help":
                self.action_help()

    async def pin_last(self) -> None:
        last = self.session.last_pinnable()
        if last is None:
            await self.say(T(self.lang, "nothing_to_pin"), "info")
            return
        await self.toggle_pin([last])

    async def toggle_pin(self, messages: list[Message]) -> None:
        """Pin the messages (or unpin them when all are pinned); a covered one pinned comes
        back into every request, an unpinned one goes back to the summary."""
        pin = not all(m.pinned for m in messages)
        changed = self.session.set_pinned(messages, pin)
        self.query_one(Conversation).refresh_messages(changed.message_ids)
        self.update_gauge()
        preview = " ".join(messages[0].content.split())[:60]
        await self.say(T(self.lang, "pinned" if pin else "unpinned", text=preview))

    async def recall(self, query: str) -> None:
        from jarvis_tui.ui.screens.recall import RecallScreen

        if not query.strip():
            await self.say(T(self.lang, "recall_usage"), "info")
            return
        turns = self.session.search(query)

        async def chosen(turn: list[Message] | None) -> None:
            if turn:
                await self.toggle_pin(turn)

        self.app.push_screen(RecallScreen(query, turns), chosen)

    async def export(self, arg: str) -> None:
        path = Path(arg).expanduser() if arg else Path.cwd() / f"jarvis-session-{self.cid}.md"
        try:
            n = self.session.export(path)
        except (OSError, StoreError) as err:
            await self.say(T(self.lang, "export_failed", path=path, why=explain(err)), "error")
            return
        await self.say(T(self.lang, "exported", path=path, n=n))

    async def show_cost(self) -> None:
        from jarvis_tui.ui.cost_report import cost_report

        try:
            session = self.session.session_cost()
        except StoreError as err:
            await self.say(explain(err), "error")
            return
        await self.say(cost_report(session, self.cid, self.lang), "info")

    def action_copy_reply(self) -> None:
        reply = self.session.last_reply()
        if reply is None:
            self.app.notify(T(self.lang, "nothing_to_copy"), markup=False)
            return
        self.app.copy_to_clipboard(reply.content)
        self.app.notify(T(self.lang, "copied", n=len(reply.content)), markup=False)

    def action_help(self) -> None:
        from jarvis_tui.ui.screens.help import HelpScreen

        lang = self.lang
        keys = [(_key_name(b.key), T(lang, f"key_{b.action.rsplit('.', 1)[-1]}"))
                for b in self.BINDINGS if isinstance(b, Binding)]
        keys += [(k, T(lang, d)) for k, d in (("Enter", "key_send"),
                                              ("Ctrl+J / Alt+Enter", "key_newline"),
                                              ("Tab", "key_tab"),
                                              ("Ctrl+C", "key_copy_selection"),
                                              ("Ctrl+P", "key_palette"))]
        self.app.push_screen(HelpScreen(keys, command_help(self.lang)))

    async def action_summary(self) -> None:
        from jarvis_tui.ui.screens.summary_editor import SummaryEditor

        if self.session.summary is None:
            await self.say(T(self.lang, "no_summary"), "info")
            return
        if self.compacting:
            await self.say(T(self.lang, "edit_while_compacting"), "info")
            return
        session = self.session
        self.app.push_screen(SummaryEditor(session.summary, session.covered(),
                                           session.summary_max_tokens, session.tokens),
                             self._summary_edited)

    async def _summary_edited(self, text: str | None) -> None:
        if not text:
            return
        try:
            self.session.edit_summary(text)
        except (StoreError, ValueError) as err:
            await self.say(explain(err), "error")
            return
        self.query_one(SummaryPanel).show_summary(self.session.summary)
        self.update_gauge()
        await self.say(T(self.lang, "summary_saved"), "info")

    def action_settings(self) -> None:
        self.app.action_settings()  # type: ignore[attr-defined]

    async def action_new_session(self) -> None:
        if not self.session.messages:
            self.app.notify(T(self.lang, "already_new"), markup=False)
            return
        await self.app.open_session(None)  # type: ignore[attr-defined]

    def action_sessions(self) -> None:
        self.app.action_sessions()  # type: ignore[attr-defined]


def _key_name(key: str) -> str:
    """"ctrl+n" → "Ctrl+N", "f1" → "F1", "escape" → "Esc": as keys are printed on keyboards."""
    names = {"escape": "Esc", "pageup": "PgUp", "pagedown": "PgDn"}

    def part(p: str) -> str:
        return names.get(p, p.upper() if p[:1] == "f" and p[1:].isdigit() else p.capitalize())

    return " / ".join("+".join(part(p) for p in one.split("+")) for one in key.split(","))


def explain(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if isinstance(err, StoreError | OSError) else f"{type(err).__name__}: {text}"
