"""What the chat screen does for its actions (ui/actions.py): one `action_<id>` method each,
run by its key, its slash command and its palette entry alike (/compact's is in compaction.py,
/retry's and the branch keys' in branches.py)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from jarvis_tui.core.messages import Message
from jarvis_tui.core.safety.textsafe import terminal_safe, visible
from jarvis_tui.core.session import MemoryRefused, StoreError
from jarvis_tui.texts.chat_texts import CHAT_TEXTS
from jarvis_tui.texts.i18n import plural_s
from jarvis_tui.ui.actions import BY_ID, help_commands, help_keys
from jarvis_tui.ui.clipboard import copy_out
from jarvis_tui.ui.code_blocks import CodeBlock, code_blocks
from jarvis_tui.ui.screens.chat.base import ChatBase, explain
from jarvis_tui.ui.screens.memory import MEMORY_TEXTS, why_not
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel


class ChatCommands(ChatBase):
    async def run_command(self, action_id: str, arg: str = "") -> None:
        """Run an action as its slash command or palette entry does; the key runs the same
        `action_<id>` through the binding."""
        action = BY_ID[action_id]
        handler = getattr(self, f"action_{action.id}")
        done = handler(arg) if action.arg else handler()
        if inspect.isawaitable(done):
            await done

    async def action_pin(self) -> None:
        last = self.session.branches.last_pinnable()
        if last is None:
            await self.say(CHAT_TEXTS(self.lang, "nothing_to_pin"), "info")
            return
        await self.toggle_pin([last])

    async def toggle_pin(self, messages: list[Message]) -> None:
        """Pin the messages (or unpin them when all are pinned); a covered one pinned comes
        back into every request, an unpinned one goes back to the summary."""
        pin = not all(m.pinned for m in messages)
        changed = self.session.branches.set_pinned(messages, pin)
        self.query_one(Conversation).refresh_messages(changed.message_ids)
        self.update_gauge()
        preview = " ".join(messages[0].content.split())[:60]
        await self.say(CHAT_TEXTS(self.lang, "pinned" if pin else "unpinned", text=preview))

    async def action_recall(self, query: str = "") -> None:
        from jarvis_tui.ui.screens.recall import RecallScreen

        words = query.split()
        everywhere = bool(words) and words[0] == "--all"
        query = " ".join(words[everywhere:])
        if not query:
            await self.say(CHAT_TEXTS(self.lang, "recall_usage"), "info")
            return
        if everywhere:
            found = self.session.search_all(query)
            screen = RecallScreen(query, [turn for turn, _ in found],
                                  [where for _, where in found])
        else:
            screen = RecallScreen(query, self.session.search(query))

        async def chosen(turn: list[Message] | None) -> None:
            if turn:
                await self.toggle_pin(turn)

        self.app.push_screen(screen, chosen)

    async def action_export(self, arg: str = "") -> None:
        path = Path(arg).expanduser() if arg else Path.cwd() / f"jarvis-session-{self.cid}.md"
        try:
            n = self.session.export(path)
        except (OSError, StoreError) as err:
            await self.say(CHAT_TEXTS(self.lang, "export_failed", path=path, why=explain(err)),
                           "error")
            return
        await self.say(CHAT_TEXTS(self.lang, "exported", path=path, n=f"{n:,}",
                                  s=plural_s(n)))

    async def action_cost(self) -> None:
        from jarvis_tui.ui.cost_report import cost_report

        try:
            session = self.session.session_cost()
        except StoreError as err:
            await self.say(explain(err), "error")
            return
        await self.say(cost_report(session, self.cid, self.lang), "info")

    async def action_copy_reply(self) -> None:
        reply = self.session.last_reply()
        if reply is None:
            await self.say(CHAT_TEXTS(self.lang, "nothing_to_copy"))
            return
        chars = len(reply.content)
        await self.copy_out(reply.content, CHAT_TEXTS(self.lang, "reply_what", n=f"{chars:,}",
                                                      s=plural_s(chars)))

    async def copy_out(self, text: str, what: str) -> None:
        """Copy to the clipboard and to the copy file, and say where it went."""
        line, kind = copy_out(self.app.copy_to_clipboard, text, what,
                              self.host.copy_file, self.lang)
        await self.say(line, kind)

    def chosen_message(self, fits: Callable[[Message], bool]) -> Message | None:
        """What a message-scope action acts on: the selected message while the conversation
        has the focus (a dialog over it keeps that), else the newest message that fits."""
        conversation = self.query_one(Conversation)
        view = conversation.selected_view
        if view is not None and self.focused is conversation:
            return view.message
        return next((m for m in reversed(conversation.records) if fits(m)), None)

    async def action_copy_code(self) -> None:
        # What the screen shows, which is what the user means to copy; raw, an escape sequence
        # in a reply would be pasted into their shell.
        def blocks_of(message: Message) -> list[CodeBlock]:
            return code_blocks(terminal_safe(message.content))

        message = self.chosen_message(lambda m: m.role == "assistant" and bool(blocks_of(m)))
        blocks = blocks_of(message) if message is not None else []
        if not blocks:
            await self.say(CHAT_TEXTS(self.lang,
                                      "no_code" if message is not None else "no_code_yet"))
        elif len(blocks) == 1:
            await self.copy_block(blocks[0])
        else:
            from jarvis_tui.ui.screens.code_picker import CodePicker

            async def picked(i: int | None) -> None:
                if i is not None:
                    await self.copy_block(blocks[i])

            self.app.push_screen(CodePicker(blocks), picked)

    async def action_view_whole(self) -> None:
        from jarvis_tui.ui.screens.full_text import FullTextScreen

        message = self.chosen_message(lambda m: m.role == "assistant" and bool(m.content))
        if message is None:
            await self.say(CHAT_TEXTS(self.lang, "nothing_to_view"))
            return
        self.app.push_screen(FullTextScreen(message))

    async def copy_block(self, block: CodeBlock) -> None:
        size = (CHAT_TEXTS(self.lang, "one_line") if block.lines == 1
                else CHAT_TEXTS(self.lang, "n_lines", n=block.lines))
        what = CHAT_TEXTS(self.lang, "code_what", kind=block.lang, lines=size) if block.lang \
            else CHAT_TEXTS(self.lang, "code_what_plain", lines=size)
        await self.copy_out(block.text, what)

    def action_help(self) -> None:
        from jarvis_tui.ui.screens.help import HelpScreen

        keymap = self.host.settings.keys
        self.app.push_screen(HelpScreen(help_keys(self.lang, keymap), help_commands(self.lang),
                                        help_keys(self.lang, keymap, "message")))

    async def action_summary(self) -> None:
        from jarvis_tui.ui.screens.summary_editor import SummaryEditor

        if self.session.summary is None:
            await self.say(CHAT_TEXTS(self.lang, "no_summary"), "info")
            return
        if self.compaction_work.running:
            await self.say(CHAT_TEXTS(self.lang, "edit_while_compacting"), "info")
            return
        session = self.session
        self.app.push_screen(SummaryEditor(session.summary, session.compaction.covered(),
                                           session.compaction.summary_max_tokens, session.tokens),
                             self._summary_edited)

    async def _summary_edited(self, text: str | None) -> None:
        if not text:
            return
        try:
            self.session.compaction.edit_summary(text)
        except (StoreError, ValueError) as err:
            await self.say(explain(err), "error")
            return
        self.query_one(SummaryPanel).show_summary(self.session.summary,
                                                  self.session.compaction.summary_size())
        self.update_gauge()
        await self.say(CHAT_TEXTS(self.lang, "summary_saved"), "info")

    # -- the next request -----------------------------------------------------------------

    def action_next_request(self) -> None:
        """The request the next round would send, were the prompt's text sent now."""
        from jarvis_tui.ui.screens.next_request import NextRequestScreen

        try:
            report = self.session.next_request(self.query_one(PromptInput).text)
        except StoreError as err:
            self.app.notify(explain(err), severity="error", markup=False)
            return

        async def closed(choice: str | None) -> None:
            if choice == "copy":
                n = len(report.wire)
                await self.copy_out(report.to_json(), CHAT_TEXTS(
                    self.lang, "request_what", n=f"{n:,}", s=plural_s(n)))

        self.app.push_screen(NextRequestScreen(report), closed)

    # -- the memory -----------------------------------------------------------------------

    def action_memory(self) -> None:
        from jarvis_tui.ui.screens.memory import MemoryScreen

        self.app.push_screen(MemoryScreen(self.session), lambda _: self.update_gauge())

    async def action_remember(self, text: str = "") -> None:
        """/remember TEXT; refused, the command goes back into the prompt to be fixed."""
        if not await self.remember(text):
            self.query_one(PromptInput).restore(f"/remember {text}".rstrip())

    async def action_remember_message(self) -> None:
        message = self.chosen_message(lambda m: m.role in ("user", "assistant")
                                      and bool(m.content.strip()))
        if message is None:
            await self.say(MEMORY_TEXTS(self.lang, "nothing_to_remember"))
            return
        await self.remember(message.content, message)

    async def remember(self, text: str, message: Message | None = None) -> bool:
        """Store `text` in the memory and say so, or say in one line why not."""
        try:
            entry = self.session.memory.remember(text, message)
            section = self.session.memory.sent()
        except (MemoryRefused, StoreError) as err:
            await self.say(MEMORY_TEXTS(self.lang, "refused_line",
                                        why=why_not(err, self.lang)), "warning")
            return False
        preview = " ".join(visible(entry.text).split())
        preview = preview if len(preview) <= 60 else preview[:59] + "…"
        if entry.id in section.sent:
            tokens = self.session.tokens(entry.text)
            line = MEMORY_TEXTS(self.lang, "remembered", text=preview, tokens=f"{tokens:,}",
                                s=plural_s(tokens))
        else:
            line = MEMORY_TEXTS(self.lang, "remembered_left_out", text=preview,
                                budget=f"{self.session.memory.budget():,}")
        self.update_gauge()
        await self.say(line, "info")
        if note := self.session.memory.note(text, self.lang):
            await self.say(note, "warning")  # what was hidden in the text, and is not kept
        return True

    def action_settings(self) -> None:
        self.host.action_settings()

    async def action_new_session(self) -> None:
        if not self.session.messages:
            self.app.notify(CHAT_TEXTS(self.lang, "already_new"), markup=False)
            return
        await self.host.open_session(None)

    def action_sessions(self) -> None:
        self.host.action_sessions()

    def action_tools(self) -> None:
        from jarvis_tui.ui.screens.mcp_servers import McpServersScreen

        tools = self.host.tools
        self.app.push_screen(McpServersScreen(tools.statuses if tools is not None else list))

