"""The chat screen's side of tool calls: the engine's tool events become blocks in the
conversation (widgets/tool_block.py) and notices; screen.py keeps the reply's own events.

One round of a reply may now be several steps: text, tool calls, their results, more text.
ToolCallsMade ends the step's reply view; the next Delta opens a new one (ChatScreen._chunk
opens one whenever `reply.view` is None).
"""

from __future__ import annotations

from textual import on

from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolSpec
from jarvis_tui.core.messages import Message
from jarvis_tui.texts.chat_texts import TOOL_TEXTS
from jarvis_tui.texts.notices import describe
from jarvis_tui.ui import posted
from jarvis_tui.ui.screens.chat.base import ChatBase
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.tool_block import ToolInfo, count_tokens, server_of


class ChatTools(ChatBase):
    def _tools_init(self) -> None:
        self.tool_views: dict[str, MessageView] = {}  # the live calls' stand-ins, by call id

    def _tool_status(self, key: str, **values: object) -> None:
        from textual.widgets import Static

        self.query_one("#status", Static).update(TOOL_TEXTS(self.lang, key, **values))

    def _tool_line(self, event: ev.Event) -> str:
        """The core's words for the event, shared with `ask`."""
        return describe(event, self.notice_language()) or ""

    # -- the steps of a round ---------------------------------------------------------------

    @on(posted.ToolCallsMade)
    async def _tool_calls_made(self, message: posted.ToolCallsMade) -> None:
        if message.conversation_id != self.cid:
            return
        final = message.event.message
        if self.reply.view is not None:
            await self.reply.view.finish(final)
        else:
            await self.query_one(Conversation).add_message(final)
        self.reply.tool_step()
        self.update_gauge()

    async def _stand_in(self, call: ToolCall, spec: ToolSpec | None,
                        state: str) -> MessageView:
        """The view of a call whose result is not stored yet, made once per call."""
        view = self.tool_views.get(call.id)
        if view is None:
            server = spec.server if spec is not None else server_of(self.app, call.name)
            placeholder = Message("tool", "", tool_call_id=call.id, name=call.name)
            view = await self.query_one(Conversation).add_message(
                placeholder, ToolInfo(call=call, server=server, state=state))
            self.tool_views[call.id] = view
            self.query_one(Conversation).anchor()
        return view

    def _gone(self) -> bool:
        # A round's message can arrive while Ctrl+Q takes the screen down: nothing to show it in.
        if not self.is_attached or not self.app.is_running:
            return True
        shown = self.query(Conversation)
        return not shown or not shown.first().is_attached

    @on(posted.ToolApproval)
    async def _tool_approval(self, message: posted.ToolApproval) -> None:
        if message.conversation_id != self.cid or self._gone():
            return
        call = message.event.call
        await self._stand_in(call, message.event.spec, "approval")
        self._tool_status("status_approval", name=call.name)

    @on(posted.ToolStarted)
    async def _tool_started(self, message: posted.ToolStarted) -> None:
        if message.conversation_id != self.cid or self._gone():
            return
        call = message.event.call
        view = await self._stand_in(call, message.event.spec, "running")
        block = view.tool_block
        if block is not None:
            await block.set_state("running")
        self._tool_status("status_running", name=call.name)

    @on(posted.ToolFinished)
    async def _tool_finished(self, message: posted.ToolFinished) -> None:
        if message.conversation_id != self.cid:
            return
        event = message.event
        conversation = self.query_one(Conversation)
        view = self.tool_views.pop(event.call.id, None)
        tokens = count_tokens(self.app, event.result.content)
        if view is None:
            info = ToolInfo(call=event.call, server=server_of(self.app, event.call.name),
                            outcome=event.outcome, seconds=event.seconds)
            await conversation.add_message(event.result, info)
        else:
            conversation.replace_record(view.message, event.result)
            if view.tool is not None:
                view.tool.state, view.tool.outcome = "done", event.outcome
                view.tool.seconds = event.seconds
            view.message = event.result
            block = view.tool_block
            if view.is_attached and block is not None:
                await block.finish(event.result, event.outcome, event.seconds, tokens)
                view.refresh_state()
        if not self.tool_views:
            self._tool_status("status_tools")
        self.update_gauge()

    def end_tools(self) -> None:
        """The round ended (answered, failed or stopped): a call still shown as running was
        cut off with it."""
        for view in self.tool_views.values():
            block = view.tool_block
            if view.tool is not None:
                view.tool.state, view.tool.outcome = "done", "cancelled"
            if block is not None and view.is_attached:
                self.call_later(block.finish, view.message, "cancelled", None, 0)
        self.tool_views.clear()

    # -- notices ------------------------------------------------------------------------------

    @on(posted.ToolStepLimit)
    @on(posted.ToolLeftOut)
    async def _tool_warning(self, message: posted.ToolStepLimit | posted.ToolLeftOut) -> None:
        if message.conversation_id == self.cid:
            await self.say(self._tool_line(message.event), "warning")

    @on(posted.ToolOutputsPruned)
    async def _tool_outputs_pruned(self, message: posted.ToolOutputsPruned) -> None:
        if message.conversation_id != self.cid:
            return
        event = message.event
        await self.say(self._tool_line(event), "info")
        self.query_one(Conversation).mark_stubbed(event.message_ids)
        self.update_gauge()
