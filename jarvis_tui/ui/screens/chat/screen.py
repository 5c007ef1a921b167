"""The main screen: conversation on the left, gauge and summary on the right, prompt below.
It is its parts (commands.py, compaction.py, tools.py, branches.py, each on base.py) put
together, plus the layout, sending and the events of a reply.

Replies and compactions run in workers (groups "chat" and "compaction") that drive the engine
and post ui/posted.py messages; the handlers here turn those into widget updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widgets import Footer, Header, Static

from jarvis_tui.core import events as ev
from jarvis_tui.core.messages import FAILED, PARTIAL, Message
from jarvis_tui.core.pasted import NONE, Spans
from jarvis_tui.core.prompt_history import HistoryEntry
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.session import ChatSession, StoreError
from jarvis_tui.texts.chat_texts import CHAT_TEXTS, missing_key_problem
from jarvis_tui.texts.notices import describe
from jarvis_tui.ui import full_gc, posted
from jarvis_tui.ui.actions import KEY_TEXTS, bindings
from jarvis_tui.ui.languages import translate_bindings, ui_language
from jarvis_tui.ui.local_model import LOCAL_MODEL_TEXTS
from jarvis_tui.ui.screens.chat.attachments import ChatAttachments
from jarvis_tui.ui.screens.chat.base import explain
from jarvis_tui.ui.screens.chat.branches import ChatBranches
from jarvis_tui.ui.screens.chat.commands import ChatCommands
from jarvis_tui.ui.screens.chat.compaction import ChatCompaction
from jarvis_tui.ui.screens.chat.reply import CompactionWork, failure_ending
from jarvis_tui.ui.screens.chat.tools import ChatTools
from jarvis_tui.ui.slash import Command, UnknownCommand, parse, pasted_of_sent, unknown_text
from jarvis_tui.ui.widgets.attachment_bar import AttachmentBar
from jarvis_tui.ui.widgets.conversation import Conversation, Notice
from jarvis_tui.ui.widgets.mention_list import MentionList
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge

GAUGE_DEBOUNCE_S = 0.15  # typing: recount once the keys pause, not on every keystroke
STREAM_GAUGE_S = 0.25  # streaming: at most four gauge updates a second
DISK_WATCH_S = 2.0  # idle: how often to look for turns another jarvis-tui added


class ChatScreen(ChatAttachments, ChatCommands, ChatCompaction, ChatTools, ChatBranches):
    BINDINGS = bindings()

    def __init__(self, session: ChatSession, draft: str = "",
                 draft_pasted: Spans = NONE) -> None:
        super().__init__(session)
        self._draft = draft
        self._draft_pasted = draft_pasted  # what of the draft was pasted: still pasted
        translate_bindings(self, ui_language(self.app), KEY_TEXTS)
        self._gauge_timer: Timer | None = None
        self._last_stream_gauge = 0.0
        self._retry_until = 0.0
        self._retry_attempt = 0
        self._retry_timer: Timer | None = None
        self._retry_notice: Notice | None = None  # one line per round, updated per attempt
        self._tools_init()

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        lang = ui_language(self.app)
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Conversation(id="conversation")
                yield Static("", id="history", markup=False)
                yield AttachmentBar(id="attachments")
                yield MentionList(id="mentions")
                prompt = PromptInput(id="prompt", placeholder=CHAT_TEXTS(lang, "placeholder"))
                prompt.history_source = self.sent_prompts
                yield prompt
                yield Static("", id="status", markup=False)
            with Vertical(id="sidebar"):
                yield TokenGauge(id="gauge")
                yield SummaryPanel(id="summary")
        yield Footer()

    async def on_mount(self) -> None:
        try:
            await self.load_session()
        except NoMatches:
            if not self.is_attached or not self.app.is_running:
                return  # the app closed while the screen was still loading: nothing to show
            raise
        prompt = self.query_one(PromptInput)
        if self._draft:
            prompt.load_text(self._draft, self._draft_pasted)
            prompt.move_cursor(prompt.document.end)
        prompt.focus()
        if self.attached:  # carried over from the screen this one replaced
            self.show_attachments()
        self.set_interval(DISK_WATCH_S, self._watch_disk)

    def on_screen_resume(self) -> None:
        if self.relocalize_pending:
            self.relocalize_when_idle()

    async def load_session(self) -> None:
        """Show the session the ChatSession has open now (a switch cancels the rounds and
        compactions of the one before)."""
        self.workers.cancel_group(self, "chat")
        self.workers.cancel_group(self, "compaction")
        session = self.session
        self.reply.end()
        self._tools_init()
        self.query_one(PromptInput).cancel_walk()  # its entries were the other session's
        self.compaction_work = CompactionWork()
        self.title = terminal_safe(session.title) or CHAT_TEXTS(self.lang, "untitled")
        self.sub_title = f"{session.model} · #{session.id}"
        await self.query_one(Conversation).show(session.messages)
        self.mark_versions()
        self.query_one(SummaryPanel).show_summary(session.summary,
                                                  session.compaction.summary_size())
        self.query_one(SummaryPanel).set_compacting(False)
        self.query_one(TokenGauge).set_compacting(False)
        self.update_gauge()
        self.update_cost()
        self.show_compaction(self.stored_compaction())
        self.set_status()
        self.run_detect()

    @work(group="detect", exclusive=True, exit_on_error=False)
    async def run_detect(self) -> None:
        """Ask the server for its window now, so the gauge is right before the first send."""
        cid = self.cid
        try:
            found = await self.session.detect_window()
        except Exception:  # a server that cannot say is the same as one that does not
            return
        if found is not None:
            self.post_message(posted.WindowDetected(cid, found))

    # -- the gauge and the status line ----------------------------------------------------

    @on(PromptInput.Changed)
    def _typed(self) -> None:
        full_gc.keyed()
        if self._gauge_timer is not None:
            self._gauge_timer.stop()
        self._gauge_timer = self.set_timer(GAUGE_DEBOUNCE_S, self._typed_gauge)
        self.mention_update()
        if self.reply.view is not None:
            self.reply.view.typing()

    def _typed_gauge(self) -> None:
        self.update_gauge(marks=False)  # typing moves no message's mark

    def _tick_retry(self) -> None:
        left = self._retry_until - time.monotonic()
        if left <= 0 or not self.reply.on_its_way:
            if self._retry_timer is not None:
                self._retry_timer.stop()
            if self.reply.on_its_way:
                self.set_status("status_waiting")
            return
        self.set_status("status_retry", left=left, attempt=self._retry_attempt,
                        most=self.session.settings.max_retries)

    # -- sending --------------------------------------------------------------------------

    def sent_prompts(self, across: bool) -> list[HistoryEntry]:
        """The prompt's history: this session's messages, or (`across`) every session's."""
        try:
            return self.session.sent_prompts(across)
        except StoreError as err:
            self.app.notify(explain(err), severity="warning", markup=False)
            return []

    @on(PromptInput.Walked)
    def _walked(self, event: PromptInput.Walked) -> None:
        line = self.query_one("#history", Static)
        line.update(event.line)
        line.set_class(event.editing, "editing")
        line.display = bool(event.line)

    @on(PromptInput.Submitted)
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        try:
            parsed = parse(event.text)
        except UnknownCommand as err:
            event.prompt.restore(event.text, event.pasted)
            await self.say(unknown_text(self.lang, err.name), "warning")
            return
        if isinstance(parsed, Command):
            await self.run_command(parsed.action, parsed.arg)
            return
        pasted = pasted_of_sent(event.text, parsed, event.pasted)
        if event.edit_of is not None:
            await self.resend(event.edit_of, parsed, event.prompt, pasted)
            return
        await self.send(parsed, event.prompt, typed=(event.text, event.pasted), pasted=pasted)

    async def send(self, text: str, prompt: PromptInput,
                   typed: tuple[str, Spans] | None = None, after: int | None = None,
                   pasted: Spans = NONE) -> None:
        """Send `text` (`pasted`: its spans that were pasted); when it cannot go, what was
        typed (`typed`, with its spans, else `text`) goes back into the prompt. `after`: the
        message it follows, for an edited question (a new branch from there)."""
        back = typed or (text, pasted)
        if self.reply.on_its_way:
            prompt.restore(*back)
            self.app.notify(CHAT_TEXTS(self.lang, "busy"), severity="warning", markup=False)
            return
        problem = missing_key_problem(self.session.settings, self.lang) or self.stale_attachment()
        if problem:
            prompt.restore(*back)
            await self.say(problem, "error")
            return
        user = self.question_with_attachments(text, pasted)
        await self.query_one(Conversation).add_message(user)
        self.start_round(user, after=after)

    def start_round(self, question: Message, *, again: bool = False,
                    after: int | None = None) -> None:
        """Answer `question` (`again`: the stored last question, answered anew)."""
        self.reply.start(question, self.session.last_usage)
        self.query_one(Conversation).anchor()
        self.set_status("status_compaction_wait" if self.compaction_work.running
                        else "status_waiting")
        local = self.host.local
        if local is not None and local.loading:
            self.show_local_progress(local.seconds)
        self.update_gauge()
        self.run_reply(question, after, again)

    # -- the local demo model, while the app loads it -----------------------------------------

    def show_local_progress(self, seconds: float) -> None:
        key = "status_waiting" if self.reply.on_its_way else "status_loading"
        with contextlib.suppress(NoMatches):  # a screen being swapped in or out
            self.query_one("#status", Static).update(
                LOCAL_MODEL_TEXTS(self.lang, key, seconds=f"{seconds:.0f}"))

    def local_settled(self) -> None:
        with contextlib.suppress(NoMatches):
            # A waiting message is on its way now; else the usual keys line.
            self.set_status("status_waiting" if self.reply.on_its_way else None)

    @work(group="chat", exclusive=True, exit_on_error=False)
    async def run_reply(self, user: Message, after: int | None = None,
                        again: bool = False) -> None:
        session, cid = self.session, self.cid
        try:
            local = self.host.local
            if local is not None and await local.wait() is not None:
                if not again:  # a question answered again keeps the reply it had
                    user.status = FAILED
                failed = LOCAL_MODEL_TEXTS(self.lang, "failed_send")
                self.post_message(posted.ReplyFailed(cid, failed, user_text=user.content,
                                                     user_pasted=user.pasted))
                return
            if again:  # `user` is the question, or the new version of it on screen
                asked = self.reply.regenerating or user
                rounds = session.regenerate(asked, anew=None if asked is user else user)
            else:
                rounds = session.stream_reply(user, after)
            async for event in rounds:
                if isinstance(event, ev.Delta):
                    self.post_message(posted.ReplyChunk(cid, event.text))
                elif isinstance(event, ev.Failed):
                    self.post_message(posted.ReplyFailed(cid, event.error, user_text=user.content,
                                                         partial=event.message, saved=event.saved,
                                                         user_pasted=user.pasted))
                elif (message := posted.wrap(cid, event)) is not None:
                    self.post_message(message)
        except asyncio.CancelledError:
            if not self.app.is_running:
                # The app is quitting (Ctrl+Q) and took the round with it: its screens are
                # being taken down, so there is no one to show a stop to (its notice would be
                # mounted into a conversation already gone). The engine stored what the round
                # had done before the cancellation reached here.
                raise
            last = session.messages[-1] if session.messages else None
            partial = last if last is not None and last.role == "assistant" \
                and last.status == PARTIAL and last.id and user.id and last.id > user.id else None
            self.post_message(posted.ReplyFailed(cid, "", user_text=user.content, partial=partial,
                                                 stopped=True, user_pasted=user.pasted))
            raise
        except Exception as err:  # a full disk, a locked store, a bug: say so, keep the app up
            self.post_message(posted.ReplyFailed(cid, explain(err), user_text=user.content,
                                                 user_pasted=user.pasted))

    def action_toggle_sidebar(self) -> None:
        """Narrow terminals: give the conversation the whole width, and back."""
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display

    def action_page_up(self) -> None:
        self.query_one(Conversation).page_up()

    def action_page_down(self) -> None:
        self.query_one(Conversation).page_down()

    async def action_oldest(self) -> None:
        await self.query_one(Conversation).oldest()

    async def action_newest(self) -> None:
        await self.query_one(Conversation).newest()

    def action_stop(self) -> None:
        if self.reply.on_its_way:
            self.workers.cancel_group(self, "chat")

    def action_tab(self) -> None:
        self.query_one(Conversation).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.reply.on_its_way  # Esc shows in the footer only while it can act
        if action == "tab":
            return isinstance(self.focused, PromptInput)  # elsewhere, Textual's focus_next
        return True

    # -- engine events --------------------------------------------------------------------

    @on(posted.ReplyChunk)
    async def _chunk(self, message: posted.ReplyChunk) -> None:
        if not self._current(message):
            return
        if self.reply.view is None:
            self.reply.view = await self.query_one(Conversation).add_message(
                Message("assistant", ""))
            self.reply.view.start_stream()
            self.set_status("status_streaming")
            self.refresh_bindings()
        await self.reply.view.write(message.text)
        now = time.monotonic()
        if now - self._last_stream_gauge >= STREAM_GAUGE_S:
            self._last_stream_gauge = now
            self.update_gauge()

    @on(posted.WindowFitted)
    def _fitted(self, message: posted.WindowFitted) -> None:
        if self._current(message):
            self.refresh_bindings()
            self.update_gauge()

    @on(posted.UsageReported)
    def _usage(self, message: posted.UsageReported) -> None:
        if self._current(message):
            self.update_gauge()  # the calibration factor may have moved
            self.update_cost()

    async def _end_reply(self, final: Message | None, *notes: tuple[str, str]) -> None:
        """Close the round: settle the reply view, add the notices, then accept a new send."""
        if self.reply.view is not None:
            await self.reply.view.finish(final)
        elif final is not None:
            await self.query_one(Conversation).add_message(final)
        for text, kind in notes:
            await self.say(text, kind)
        self.reply.view = None
        self._retry_notice = None
        if self._retry_timer is not None:
            self._retry_timer.stop()
        self.query_one(Conversation).refresh_messages()
        self.mark_versions()
        self._refresh_title()
        answered = self.reply.on_its_way and final is not None
        self.end_tools()
        self.reply.end()
        self.set_status()
        self.refresh_bindings()
        self.update_gauge()
        self.update_cost(answered=answered)
        if self.relocalize_pending:
            self.relocalize_when_idle()

    @on(posted.ReplyFinished)
    async def _finished(self, message: posted.ReplyFinished) -> None:
        if not self._current(message):
            return
        line = describe(message.event, self.notice_language())
        await self._end_reply(message.event.message, *([(line, "info")] if line else []))
        if self.session.usage().over_threshold and self.compaction_work.proposal is None:
            # Compact now, while the user reads and types, so the next send is not delayed.
            # Not while the user reads a /compact summary: it would fold the same turns and
            # leave that one nothing to apply to.
            self.run_compaction("threshold")

    @on(posted.ReplyFailed)
    async def _failed(self, message: posted.ReplyFailed) -> None:
        if not self._current(message):
            return
        end = failure_ending(message, self.reply, self.notice_language(message.user_text))
        if end.restore:
            self.query_one(PromptInput).restore(message.user_text, message.user_pasted)
        await self._end_reply(end.partial, *end.notes)
        if end.show_branch:
            await self.show_branch()

    def _refresh_title(self) -> None:
        title = self.session.refresh_title()
        if title:
            self.title = terminal_safe(title)

    @on(posted.RetryScheduled)
    async def _retry(self, message: posted.RetryScheduled) -> None:
        if not self._current(message):
            return
        event = message.event
        line = describe(event, self.notice_language()) or ""
        if self._retry_notice is not None and self._retry_notice.is_attached:
            self._retry_notice.update(terminal_safe(line))
        else:
            self._retry_notice = await self.query_one(Conversation).add_notice(line, "warning")
        self._retry_attempt = event.attempt
        self._retry_until = time.monotonic() + event.delay_s
        if self._retry_timer is not None:
            self._retry_timer.stop()
        self._retry_timer = self.set_interval(0.1, self._tick_retry)
        self._tick_retry()

    @on(posted.SessionBusy)
    async def _busy(self, message: posted.SessionBusy) -> None:
        if self._current(message):
            # Else an accepted /compact summary waits, not a message.
            if self.reply.on_its_way:
                self.set_status("status_busy")
            await self.say(describe(message.event, self.notice_language()) or "", "warning")

    @on(posted.SessionChanged)
    async def _changed(self, message: posted.SessionChanged) -> None:
        if self._current(message):
            await self.show_stored()
            await self.say(describe(message.event, self.notice_language()) or "", "info")

    @on(posted.SaveDelayed)
    async def _save_delayed(self, message: posted.SaveDelayed) -> None:
        if self._current(message):
            await self.say(describe(message.event, self.notice_language()) or "", "warning")

    async def show_stored(self) -> None:
        """Show the session as the engine has it now (read again after another jarvis-tui
        added to it), with the message being sent, which is stored only after that."""
        session = self.session
        shown, sending = session.messages, self.reply.question
        asked = self.reply.regenerating
        at = next((i for i, m in enumerate(shown) if asked is not None and m.id == asked.id),
                  None)
        if at is not None:
            # A question answered again: the branch as it is being answered, up to the
            # question (in its record as read now), or to the new version of it asked anew.
            shown = shown[:at] + [shown[at] if sending is asked else sending]
        elif sending is not None and sending not in shown:
            shown = shown + [sending]
        await self.query_one(Conversation).show(shown)
        self.query_one(SummaryPanel).show_summary(session.summary,
                                                  session.compaction.summary_size())
        self.show_compaction(self.stored_compaction())
        self.update_gauge()
        self.update_cost()

    def _watch_disk(self) -> None:
        """What the store has to say (an index it rebuilt, a field it could not read), and,
        idle, turns another jarvis-tui added to this session."""
        for line in self.session.take_notices():
            self.app.notify(line, severity="warning", markup=False, timeout=15)
        if self.reply.on_its_way or self.compaction_work.running:
            return
        try:
            added = self.session.catch_up()
        except StoreError:
            return  # the next send says what is wrong with the store
        if added:
            self.post_message(posted.SessionChanged(self.cid, ev.SessionChanged(added)))

    @on(posted.MemorySuggested)
    async def _memory_suggested(self, message: posted.MemorySuggested) -> None:
        if self._current(message):
            await self.say(describe(message.event, self.notice_language()) or "", "info")

    @on(posted.TurnsRecalled)
    async def _recalled(self, message: posted.TurnsRecalled) -> None:
        if self._current(message):
            await self.say(describe(message.event, self.notice_language()) or "", "info")

    @on(posted.ContextLimitLearned)
    @on(posted.CompactionHeld)
    @on(posted.WindowTrimmed)
    @on(posted.WindowDetected)
    @on(posted.ContextTruncated)
    async def _learned(self, message: posted.EngineEvent) -> None:
        if self._current(message):
            await self.say(describe(message.event, self.notice_language()) or "", "warning")
            self.update_gauge()
