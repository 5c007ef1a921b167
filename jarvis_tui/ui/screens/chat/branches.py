"""What the chat screen does to steer a conversation rather than extend it: answer the last
question again (/retry), resend an edited question, flip between versions, take a turn out of
the requests (/forget), fork the session. The engine keeps every old branch stored
(core/engine/branches.py), the screen shows one."""

from __future__ import annotations

import time

from jarvis_tui.core.messages import ROOT, Message
from jarvis_tui.core.pasted import NONE, Spans
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.session import StoreError
from jarvis_tui.texts.chat_texts import BRANCH_TEXTS
from jarvis_tui.texts.i18n import plural_s
from jarvis_tui.ui.screens.chat.base import ChatBase, explain
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel


def _gist(messages: list[Message]) -> str:
    text = next((m.content for m in messages if m.content.strip()), "")
    line = " ".join(terminal_safe(text).split())
    return line if len(line) <= 60 else line[:59] + "…"


class ChatBranches(ChatBase):
    # The question answered again, while a /retry is on its way, and the notice that says
    # what is shown again if it fails (a key of BRANCH_TEXTS; "": nothing is); screen.py ends
    # the round.

    def _bt(self, key: str, **values: object) -> str:
        return BRANCH_TEXTS(self.lang, key, **values)

    def target_message(self) -> Message | None:
        """The message a message key acts on: the one selected in the conversation while it
        has the focus (a dialog over it keeps that); else None (the slash command's default
        applies)."""
        conversation = self.query_one(Conversation)
        view = conversation.selected_view
        if view is not None and self.focused is conversation:
            return view.message
        return None

    def mark_versions(self) -> None:
        """"‹ 2/3 ›" beside each shown message that has other versions."""
        views = self.query_one(Conversation).views()
        versions = self.session.branches.versions([v.message for v in views])
        for view in views:
            view.set_alternatives(*versions.get(id(view.message), (1, 1)))

    async def show_branch(self, focus: Message | None = None) -> None:
        """Show the branch the session has now; `focus`: a message to keep selected."""
        conversation = self.query_one(Conversation)
        await conversation.show(self.session.messages)
        self.mark_versions()
        if focus is not None:
            for view in conversation.views():
                if view.message is focus:
                    conversation.select(view)
        self._show_summary()
        self.update_gauge()

    def _show_summary(self) -> None:
        self.query_one(SummaryPanel).show_summary(self.session.summary,
                                                  self.session.compaction.summary_size())

    # -- /retry ---------------------------------------------------------------------------

    async def action_retry(self) -> None:
        await self._answer_again(self.session.branches.last_question())

    async def action_retry_message(self) -> None:
        """r on a message: its question answered again, a branch from there."""
        target = self.target_message()
        if target is None:
            await self.action_retry()
            return
        turn = self.session.branches.turn_of(target)
        await self._answer_again(turn[0] if turn and turn[0].role == "user" else None)

    async def _answer_again(self, question: Message | None) -> None:
        if self.reply.on_its_way:
            await self.say(self._bt("retry_busy"), "info")
            return
        if question is None:
            await self.say(self._bt("nothing_to_retry"), "info")
            return
        if question.covered:
            await self.say(self._bt("retry_covered"), "warning")
            return
        if question.excluded:
            await self.say(self._bt("retry_excluded"), "info")
            return
        shown = self.session.messages
        cut = next(i for i, m in enumerate(shown) if m is question)
        conversation = self.query_one(Conversation)
        asked = question
        if self.session.branches.asks_anew(question):
            # Never answered, and turns follow it: a new version of the question is asked.
            asked = Message("user", question.content, pasted=question.pasted)
            await conversation.show(shown[:cut])
            await conversation.add_message(asked)
            self.mark_versions()
            await self.say(self._bt("asking_anew"), "info")
            note = "retry_failed_anew"
        else:
            await conversation.show(shown[:cut + 1])
            self.mark_versions()
            if cut + 1 < len(shown):
                version = self.session.branches.alternatives(shown[cut + 1])[0]
                await self.say(self._bt("retrying_again", n=version), "info")
                note = "retry_failed"
            else:
                await self.say(self._bt("asking_again"), "info")
                note = ""  # it had no reply: it stays a question that failed
        self.reply.again(question, note)
        self.start_round(asked, again=True)

    # -- edit and resend ------------------------------------------------------------------

    async def action_edit(self) -> None:
        target = self.target_message() or self.session.branches.last_question()
        if target is None:
            await self.say(self._bt("nothing_to_retry"), "info")
            return
        if self.reply.on_its_way:
            await self.say(self._bt("edit_busy"), "info")
            return
        state = self.session.branches.editable(target)
        if state == "not_question":
            await self.say(self._bt("edit_not_question"), "info")
            return
        if state == "covered":
            self._offer_fork_to_edit(target)
            return
        self._load_for_edit(target)

    def _load_for_edit(self, target: Message) -> None:
        prompt = self.query_one(PromptInput)
        when = time.strftime("%H:%M", time.localtime(target.created_at))
        if target.id is not None:  # editable() said it is a stored question
            prompt.start_edit(target.id, target.content, self._bt("edit_what", time=when),
                              target.pasted)
        prompt.focus()

    def _offer_fork_to_edit(self, target: Message, text: str | None = None,
                            pasted: Spans = NONE) -> None:
        from jarvis_tui.ui.screens.confirm import ConfirmScreen

        async def answered(yes: bool | None) -> None:
            if yes:
                await self._fork_to_edit(target, *((target.content, target.pasted)
                                                   if text is None else (text, pasted)))

        self.app.push_screen(ConfirmScreen(self._bt("edit_covered_title"),
                                           self._bt("edit_covered"), self.lang), answered)

    async def _fork_to_edit(self, target: Message, text: str, pasted: Spans) -> None:
        shown = self.session.messages
        at = next((i for i, m in enumerate(shown) if m is target), None)
        if at is None:
            return
        try:
            conv = self.session.branches.fork(shown[at - 1]) if at > 0 else None
            self.session.open(conv.id if conv is not None else None)
        except (StoreError, ValueError) as err:
            await self.say(explain(err), "error")
            return
        await self.load_session()
        prompt = self.query_one(PromptInput)
        prompt.load_text(text, pasted)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()
        # Editing the very first message forks nothing: the new session is empty, untitled.
        said = self._bt("edit_forked", title=terminal_safe(self.session.title)) \
            if conv is not None else self._bt("edit_forked_first")
        await self.say(said, "info")

    async def resend(self, edit_of: int, text: str, prompt: PromptInput,
                     pasted: Spans = NONE) -> None:
        """Send `text` (`pasted`: its pasted spans) in place of the question `edit_of`: a new
        branch from where it stood."""
        old = next((m for m in self.session.messages if m.id == edit_of), None)
        if old is None:
            await self.say(self._bt("edit_gone"), "info")
            await self.send(text, prompt, pasted=pasted)
            return
        if self.session.branches.editable(old) == "covered":
            prompt.restore(text, pasted)
            self._offer_fork_to_edit(old, text, pasted)
            return
        if self.reply.on_its_way:
            prompt.restore(text, pasted)
            await self.say(self._bt("edit_busy"), "info")
            return
        if text == old.content and old is self.session.branches.last_question():
            await self.action_retry()  # the same question again: a new answer, one question
            return
        shown = self.session.messages
        at = next(i for i, m in enumerate(shown) if m is old)
        await self.query_one(Conversation).show(shown[:at])
        await self.send(text, prompt, after=old.parent_id or ROOT, pasted=pasted)
        await self.say(self._bt("resent_branch"), "info")

    # -- versions -------------------------------------------------------------------------

    async def _switch(self, step: int) -> None:
        if self.reply.on_its_way:
            await self.say(self._bt("switch_busy"), "info")
            return
        target = self.target_message() or self._newest_with_versions()
        if target is None or self.session.branches.alternatives(target)[1] < 2:
            await self.say(self._bt("no_versions"), "info")
            return
        chosen = self.session.branches.switch(target, step)
        if chosen is None:
            return  # the first or the last already: nothing further that way
        await self.show_branch(focus=chosen)
        i, n = self.session.branches.alternatives(chosen)
        self.app.notify(self._bt("version_shown", i=i, n=n), markup=False)

    def _newest_with_versions(self) -> Message | None:
        shown = self.session.messages
        versions = self.session.branches.versions(shown)
        return next((m for m in reversed(shown) if versions.get(id(m), (1, 1))[1] > 1), None)

    async def action_older_version(self) -> None:
        await self._switch(-1)

    async def action_newer_version(self) -> None:
        await self._switch(1)

    # -- /forget --------------------------------------------------------------------------

    async def action_forget(self, arg: str = "") -> None:
        target = self.target_message()
        if arg.strip().lower() in ("undo", "back", "撤销", "恢复"):
            turn = self.session.branches.last_excluded()
            if not turn:
                await self.say(self._bt("nothing_to_unforget"), "info")
                return
            await self._set_excluded(turn, False)
            return
        if target is not None:
            turn = self.session.branches.turn_of(target)
            excluded = not all(m.excluded for m in turn)
        else:
            turn = self.session.branches.last_turn()
            if turn and all(m.excluded for m in turn):
                await self.say(self._bt("already_forgotten"), "info")
                return
            excluded = True
        if not turn:
            await self.say(self._bt("nothing_to_forget"), "info")
            return
        if self.reply.on_its_way and any(m is self.reply.question for m in turn):
            await self.say(self._bt("forget_busy"), "info")
            return
        await self._set_excluded(turn, excluded)

    async def _set_excluded(self, turn: list[Message], excluded: bool) -> None:
        waiting = self._suggestions_from(turn) if excluded else 0
        try:
            self.session.branches.set_excluded(turn, excluded)
        except StoreError as err:
            await self.say(explain(err), "error")
            return
        self.query_one(Conversation).refresh_messages(m.id for m in turn if m.id is not None)
        self.update_gauge()
        what = _gist(turn)
        # The store withdraws them with the exclusion; the user is told, as F6 no longer will.
        withdrawn = self._bt("withdrawn", n=waiting, s=plural_s(waiting)) if waiting else ""
        if not excluded:
            await self.say(self._bt("unforgot", what=what), "info")
        elif any(m.covered for m in turn):
            await self.say(self._bt("forgot_covered", what=what) + withdrawn, "warning")
        else:
            await self.say(self._bt("forgot", what=what) + withdrawn, "info")

    def _suggestions_from(self, turn: list[Message]) -> int:
        """How many memory suggestions taken from `turn` wait in the inbox (0 when the memory
        cannot be read: the exclusion goes ahead all the same)."""
        ids = {m.id for m in turn if m.id is not None}
        try:
            return sum(e.state == "suggested" and e.message_id in ids
                       for e in self.session.memory.entries())
        except StoreError:
            return 0

    # -- fork -----------------------------------------------------------------------------

    async def action_fork(self) -> None:
        if self.reply.on_its_way:
            await self.say(self._bt("fork_busy"), "info")
            return
        target = self.target_message() or next(
            (m for m in reversed(self.session.messages) if m.id is not None), None)
        if target is None:
            await self.say(self._bt("nothing_to_fork"), "info")
            return
        try:
            conv = self.session.branches.fork(target)
            self.session.open(conv.id)
        except (StoreError, ValueError) as err:
            await self.say(explain(err), "error")
            return
        await self.load_session()
        await self.say(self._bt("forked", title=terminal_safe(conv.title)), "info")
