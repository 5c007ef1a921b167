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
from jarvis_tui.texts.i18n import Texts, plural_s
from jarvis_tui.ui.screens.chat.base import ChatBase, explain
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel

BRANCH_TEXTS = Texts(
    en={
        "nothing_to_retry": "There is no question to answer again yet.",
        "retry_covered": ("The last question is folded into the summary, so it cannot be "
                          "answered again here; fork the session from it (f on the message, "
                          "or /fork) to try again there."),
        "retry_busy": "A reply is on its way; Esc stops it, then /retry.",
        "retry_excluded": ("That turn is excluded from requests; x on it (or /forget undo) "
                           "brings it back, then it can be answered again."),
        "retrying_again": "↻ Answering the question again; the reply it had stays as "
                          "version {n} (< and > on the reply switch between them).",
        "asking_again": "↻ Asking the question again.",
        "asking_anew": ("↻ Asking the question again as a new version of it; the turns after "
                        "it stay with the version before (< and > on the question switch "
                        "between them)."),
        "retry_failed": "The reply it had is shown again.",
        "retry_failed_anew": ("The turns after the question are shown again; this try is kept "
                              "as a version of it (< and > on the question)."),
        "no_versions": "This message has no other versions.",
        "version_shown": "Showing version {i} of {n}.",
        "switch_busy": "A reply is on its way; switch versions when it has finished.",
        "forgot": ("⊘ Turn taken out of every request (kept in the store and exports): "
                   "“{what}”. /forget undo, or x on it, brings it back."),
        "forgot_covered": ("⊘ Turn taken out of every request: “{what}”. The summary was made "
                           "with it and may still mention it: F2 edits the summary."),
        "unforgot": "↺ Turn back in the requests: “{what}”.",
        "withdrawn": " {n} memory suggestion{s} from it withdrawn (/remember keeps what you want).",
        "nothing_to_forget": "There is no turn to take out yet.",
        "nothing_to_unforget": "No turn shown is excluded.",
        "forget_busy": "That turn is being answered; wait for the reply, or Esc to stop it.",
        "already_forgotten": ("The last turn is already excluded; /forget undo brings it "
                              "back."),
        "forked": ("⑂ Forked into a new session: “{title}”. The one before is unchanged "
                   "(Ctrl+O lists both)."),
        "fork_busy": "A reply is on its way; fork when it has finished.",
        "nothing_to_fork": "There is no message to fork from yet.",
        "edit_not_question": ("Only your own messages can be edited; r on a reply (or "
                              "/retry) answers its question again."),
        "edit_busy": "A reply is on its way; edit when it has finished (Esc stops it).",
        "edit_covered_title": "This message is in the summary",
        "edit_covered": ("The summary already stands for this message, so it cannot be "
                         "changed here without the summary going wrong. Fork the session "
                         "from just before it? The new session gets your edited message and "
                         "a summary made from its own turns; this one stays as it is."),
        "edit_forked": ("⑂ Forked before the message you are editing: “{title}”. It is in the "
                        "prompt: change it and press Enter."),
        "edit_forked_first": ("⑂ Nothing came before the message you are editing, so it is in "
                              "the prompt of a new, empty session: change it and press Enter. "
                              "The old session is unchanged (Ctrl+O lists both)."),
        "edit_what": "message of {time}",
        "resent_branch": ("✎ Resent as a new branch; the old one is kept (< and > on your "
                          "message switch between them)."),
        "edit_gone": "The message being edited is not shown any more; sent as a new message.",
    },
    zh={
        "nothing_to_retry": "还没有可以重新回答的问题。",
        "retry_covered": ("最后一个问题已被并入摘要，无法在此重新回答；请从它分叉会话"
                          "（在消息上按 f，或 /fork）后在新会话中重试。"),
        "retry_busy": "回复正在生成；按 Esc 停止后再 /retry。",
        "retry_excluded": ("该轮对话已从请求中排除；在其上按 x（或 /forget undo）"
                           "恢复后才能重新回答。"),
        "retrying_again": "↻ 正在重新回答该问题；原回复保留为第 {n} 版"
                          "（在回复上按 < 和 > 切换）。",
        "asking_again": "↻ 正在重新提问。",
        "asking_anew": ("↻ 正在作为该问题的新版本重新提问；之后的对话保留在原来的版本中"
                        "（在问题上按 < 和 > 切换）。"),
        "retry_failed": "已重新显示原来的回复。",
        "retry_failed_anew": ("已重新显示该问题之后的对话；这次尝试保留为该问题的一个版本"
                              "（在问题上按 < 和 >）。"),
        "no_versions": "这条消息没有其他版本。",
        "version_shown": "正在显示第 {i} 版，共 {n} 版。",
        "switch_busy": "回复正在生成；完成后再切换版本。",
        "forgot": ("⊘ 该轮对话已从之后的所有请求中排除（仍保存在会话库和导出中）："
                   "“{what}”。/forget undo 或在其上按 x 可恢复。"),
        "forgot_covered": ("⊘ 该轮对话已从之后的所有请求中排除：“{what}”。摘要生成时包含了它，"
                           "可能仍会提到它：按 F2 编辑摘要。"),
        "unforgot": "↺ 该轮对话已恢复发送：“{what}”。",
        "withdrawn": "由它产生的 {n} 条记忆建议已撤回（想保留的可以用 /remember）。",
        "nothing_to_forget": "还没有可以排除的对话。",
        "nothing_to_unforget": "显示的对话中没有被排除的。",
        "forget_busy": "这一轮正在回答；请等回复完成，或按 Esc 停止。",
        "already_forgotten": "最后一轮已被排除；/forget undo 可恢复。",
        "forked": "⑂ 已分叉为新会话：“{title}”。原会话保持不变（Ctrl+O 可看到两者）。",
        "fork_busy": "回复正在生成；完成后再分叉。",
        "nothing_to_fork": "还没有可以分叉的消息。",
        "edit_not_question": "只能编辑你自己的消息；在回复上按 r（或 /retry）可重新回答其问题。",
        "edit_busy": "回复正在生成；完成后再编辑（Esc 可停止）。",
        "edit_covered_title": "这条消息已在摘要中",
        "edit_covered": ("摘要已代表这条消息，在此修改会使摘要与对话不符。要从它之前分叉会话吗？"
                         "新会话包含你修改后的消息，并会用它自己的对话生成摘要；"
                         "当前会话保持不变。"),
        "edit_forked": ("⑂ 已在你要编辑的消息之前分叉：“{title}”。"
                        "消息已放入输入框：修改后按 Enter。"),
        "edit_forked_first": ("⑂ 你要编辑的消息之前没有内容，所以它已放入一个新的空会话的输入框："
                              "修改后按 Enter。原会话保持不变（Ctrl+O 可看到两者）。"),
        "edit_what": "{time} 的消息",
        "resent_branch": "✎ 已作为新分支重新发送；旧分支仍保留（在你的消息上按 < 和 > 切换）。",
        "edit_gone": "正在编辑的消息已不再显示；已作为新消息发送。",
    },
)


def _gist(messages: list[Message]) -> str:
    text = next((m.content for m in messages if m.content.strip()), "")
    line = " ".join(terminal_safe(text).split())
    return line if len(line) <= 60 else line[:59] + "…"


class ChatBranches(ChatBase):
    # The question answered again, while a /retry is on its way, and the notice that says
    # what is shown again if it fails (a key of BRANCH_TEXTS; "": nothing is); screen.py ends
    # the round.
    regenerating: Message | None = None
    retry_note = ""

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
        versions = self.session.versions([v.message for v in views])
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
                                                  self.session.summary_size())

    # -- /retry ---------------------------------------------------------------------------

    async def action_retry(self) -> None:
        await self._answer_again(self.session.last_question())

    async def action_retry_message(self) -> None:
        """r on a message: its question answered again, a branch from there."""
        target = self.target_message()
        if target is None:
            await self.action_retry()
            return
        turn = self.session.turn_of(target)
        await self._answer_again(turn[0] if turn and turn[0].role == "user" else None)

    async def _answer_again(self, question: Message | None) -> None:
        if self.sending is not None:
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
        if self.session.asks_anew(question):
            # Never answered, and turns follow it: a new version of the question is asked.
            asked = Message("user", question.content, pasted=question.pasted)
            await conversation.show(shown[:cut])
            await conversation.add_message(asked)
            self.mark_versions()
            await self.say(self._bt("asking_anew"), "info")
            self.retry_note = "retry_failed_anew"
        else:
            await conversation.show(shown[:cut + 1])
            self.mark_versions()
            if cut + 1 < len(shown):
                version = self.session.alternatives(shown[cut + 1])[0]
                await self.say(self._bt("retrying_again", n=version), "info")
                self.retry_note = "retry_failed"
            else:
                await self.say(self._bt("asking_again"), "info")
                self.retry_note = ""  # it had no reply: it stays a question that failed
        self.regenerating = question
        self.start_round(asked, again=True)

    # -- edit and resend ------------------------------------------------------------------

    async def action_edit(self) -> None:
        target = self.target_message() or self.session.last_question()
        if target is None:
            await self.say(self._bt("nothing_to_retry"), "info")
            return
        if self.sending is not None:
            await self.say(self._bt("edit_busy"), "info")
            return
        state = self.session.editable(target)
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
            conv = self.session.fork(shown[at - 1]) if at > 0 else None
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
        if self.session.editable(old) == "covered":
            prompt.restore(text, pasted)
            self._offer_fork_to_edit(old, text, pasted)
            return
        if self.sending is not None:
            prompt.restore(text, pasted)
            await self.say(self._bt("edit_busy"), "info")
            return
        if text == old.content and old is self.session.last_question():
            await self.action_retry()  # the same question again: a new answer, one question
            return
        shown = self.session.messages
        at = next(i for i, m in enumerate(shown) if m is old)
        await self.query_one(Conversation).show(shown[:at])
        await self.send(text, prompt, after=old.parent_id or ROOT, pasted=pasted)
        await self.say(self._bt("resent_branch"), "info")

    # -- versions -------------------------------------------------------------------------

    async def _switch(self, step: int) -> None:
        if self.sending is not None:
            await self.say(self._bt("switch_busy"), "info")
            return
        target = self.target_message() or self._newest_with_versions()
        if target is None or self.session.alternatives(target)[1] < 2:
            await self.say(self._bt("no_versions"), "info")
            return
        chosen = self.session.switch_alternative(target, step)
        if chosen is None:
            return  # the first or the last already: nothing further that way
        await self.show_branch(focus=chosen)
        i, n = self.session.alternatives(chosen)
        self.app.notify(self._bt("version_shown", i=i, n=n), markup=False)

    def _newest_with_versions(self) -> Message | None:
        shown = self.session.messages
        versions = self.session.versions(shown)
        return next((m for m in reversed(shown) if versions.get(id(m), (1, 1))[1] > 1), None)

    async def action_older_version(self) -> None:
        await self._switch(-1)

    async def action_newer_version(self) -> None:
        await self._switch(1)

    # -- /forget --------------------------------------------------------------------------

    async def action_forget(self, arg: str = "") -> None:
        target = self.target_message()
        if arg.strip().lower() in ("undo", "back", "撤销", "恢复"):
            turn = self.session.last_excluded()
            if not turn:
                await self.say(self._bt("nothing_to_unforget"), "info")
                return
            await self._set_excluded(turn, False)
            return
        if target is not None:
            turn = self.session.turn_of(target)
            excluded = not all(m.excluded for m in turn)
        else:
            turn = self.session.last_turn()
            if turn and all(m.excluded for m in turn):
                await self.say(self._bt("already_forgotten"), "info")
                return
            excluded = True
        if not turn:
            await self.say(self._bt("nothing_to_forget"), "info")
            return
        if self.sending is not None and any(m is self.sending for m in turn):
            await self.say(self._bt("forget_busy"), "info")
            return
        await self._set_excluded(turn, excluded)

    async def _set_excluded(self, turn: list[Message], excluded: bool) -> None:
        waiting = self._suggestions_from(turn) if excluded else 0
        try:
            self.session.set_excluded(turn, excluded)
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
                       for e in self.session.memories())
        except StoreError:
            return 0

    # -- fork -----------------------------------------------------------------------------

    async def action_fork(self) -> None:
        if self.sending is not None:
            await self.say(self._bt("fork_busy"), "info")
            return
        target = self.target_message() or next(
            (m for m in reversed(self.session.messages) if m.id is not None), None)
        if target is None:
            await self.say(self._bt("nothing_to_fork"), "info")
            return
        try:
            conv = self.session.fork(target)
            self.session.open(conv.id)
        except (StoreError, ValueError) as err:
            await self.say(explain(err), "error")
            return
        await self.load_session()
        await self.say(self._bt("forked", title=terminal_safe(conv.title)), "info")
