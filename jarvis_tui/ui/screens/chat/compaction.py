"""What the chat screen does to fold old turns into the summary: /compact and the preview of
its summary, the workers that run a compaction (the screen starts one too, when the window
fills), and the compaction's events on the gauge, the summary panel and the conversation."""

from __future__ import annotations

import functools

from textual import on, work

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.costs import CompactionCost
from jarvis_tui.core.events import compaction_cost_of
from jarvis_tui.texts.chat_texts import CHAT_TEXTS
from jarvis_tui.texts.notices import describe
from jarvis_tui.ui import posted
from jarvis_tui.ui.screens.chat.base import ChatBase, explain
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge


class ChatCompaction(ChatBase):
    async def action_compact(self, focus: str = "") -> None:
        if self.reply.on_its_way:
            await self.say(CHAT_TEXTS(self.lang, "compact_while_sending"), "info")
        elif self.compaction_work.running:
            await self.say(CHAT_TEXTS(self.lang, "already_compacting"), "info")
        else:
            # Summarised now, stored only once the user accepts it (preview_compaction).
            self.run_compaction("manual", focus or None)

    def preview_compaction(self, proposal: CompactionProposal) -> None:
        """Show /compact's summary before it replaces anything: Ctrl+S stores it, Esc not."""
        from jarvis_tui.ui.screens.proposal_editor import ProposalEditor

        session = self.session
        self.compaction_work.proposal = proposal
        editor = ProposalEditor(proposal.text, session.compaction.covers(proposal),
                                len(proposal.evict), proposal.before,
                                functools.partial(session.compaction.tokens_after, proposal),
                                session.compaction.summary_max_tokens, session.tokens,
                                proposal.focus)
        self.app.push_screen(editor, functools.partial(self._proposal_closed, proposal))

    async def _proposal_closed(self, proposal: CompactionProposal, text: str | None) -> None:
        if text is not None:
            self.run_commit(proposal, text)  # `previewing` ends with its Finished or Failed
            return
        self.compaction_work.proposal = None
        self.session.compaction.discard(proposal)
        self.update_cost()  # the summary requests were made: /cost and the totals count them
        await self.say(CHAT_TEXTS(self.lang, "compact_discarded"), "info")
        if self.relocalize_pending:
            self.relocalize_when_idle()

    @work(group="compaction", exclusive=True, exit_on_error=False)
    async def run_compaction(self, reason: str, focus: str | None = None) -> None:
        session, cid = self.session, self.cid
        # /compact's summary is shown before it is stored; automatic ones are stored at once.
        events = (session.compaction.propose(focus) if reason == "manual"
                  else session.compaction.run(reason, focus))
        try:
            async for event in events:
                if (message := posted.wrap(cid, event)) is not None:
                    self.post_message(message)
        except Exception as err:
            failed = ev.CompactionFailed(explain(err), reason)
            self.post_message(posted.CompactionFailed(cid, failed))

    # Its own group: a background compaction starting in "compaction" must not cancel it.
    @work(group="commit", exit_on_error=False)
    async def run_commit(self, proposal: CompactionProposal, text: str) -> None:
        session, cid = self.session, self.cid
        try:
            async for event in session.compaction.commit(proposal, text):
                if (message := posted.wrap(cid, event)) is not None:
                    self.post_message(message)
        except Exception as err:
            self.post_message(posted.CompactionFailed(cid, ev.CompactionFailed(
                explain(err), proposal.reason)))

    def show_compaction(self, cost: CompactionCost | None) -> None:
        price = self.session.price(cost.model) if cost is not None else None
        self.query_one(SummaryPanel).show_compaction(cost, price)

    def stored_compaction(self) -> CompactionCost | None:
        """What the session's newest compaction cost, as the store kept it (after a restart)."""
        return self.session.compaction.last_cost()

    # -- the compaction's events ------------------------------------------------------------

    @on(posted.CompactionStarted)
    async def _compaction_started(self, message: posted.CompactionStarted) -> None:
        if not self._current(message):
            return
        self.compaction_work.running = True
        n = message.event.messages
        self.query_one(TokenGauge).set_compacting(True, n)
        self.query_one(SummaryPanel).set_compacting(True, n)
        if self.reply.on_its_way:
            self.set_status("status_compaction_wait")

    def _compaction_over(self) -> None:
        self.compaction_work.running = False
        self.query_one(TokenGauge).set_compacting(False)
        self.query_one(SummaryPanel).set_compacting(False)
        if self.reply.on_its_way:
            self.set_status("status_waiting")

    @on(posted.CompactionFinished)
    async def _compaction_finished(self, message: posted.CompactionFinished) -> None:
        if not self._current(message):
            return
        self._compaction_over()
        if message.event.reason == "manual":
            self.compaction_work.proposal = None  # the accepted /compact summary is stored
        panel = self.query_one(SummaryPanel)
        panel.show_summary(self.session.summary, self.session.compaction.summary_size())
        event = message.event
        # The event says what this compaction cost even when the store could not keep it.
        live = compaction_cost_of(event, self.session.summary_model) if event.calls else None
        self.show_compaction(live or self.stored_compaction())
        # Covered messages dim and stay visible.
        self.query_one(Conversation).refresh_messages(event.covered_ids)
        await self.say(describe(message.event, self.notice_language()) or "", "compact")
        self.update_gauge()
        self.update_cost()
        if self.relocalize_pending:
            self.relocalize_when_idle()

    @on(posted.CompactionFailed)
    async def _compaction_failed(self, message: posted.CompactionFailed) -> None:
        if not self._current(message):
            return
        self._compaction_over()
        if message.event.reason == "manual":
            self.compaction_work.proposal = None
        kind = "info" if message.event.reason == "manual" else "warning"
        await self.say(describe(message.event, self.notice_language()) or "", kind)
        if self.relocalize_pending:
            self.relocalize_when_idle()

    @on(posted.CompactionProposed)
    def _compaction_proposed(self, message: posted.CompactionProposed) -> None:
        if not self._current(message):
            return
        self._compaction_over()  # the summary request is done; nothing is stored yet
        self.preview_compaction(message.event.proposal)
