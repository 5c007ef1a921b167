"""What the parts of the chat screen share: the session state they all read, the ways they all
speak (a notice, the gauge) and the declarations of the screen's own methods they call. Each
part (commands.py, tools.py, branches.py) builds on this alone, so a part can be read without
the others; screen.py puts them together."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen
from textual.widgets import Static

from jarvis_tui.core.attach.message import Sending
from jarvis_tui.core.messages import Message
from jarvis_tui.core.pasted import NONE, Spans
from jarvis_tui.core.session import ChatSession, StoreError
from jarvis_tui.texts.chat_texts import CHAT_TEXTS
from jarvis_tui.texts.notices import pick_language
from jarvis_tui.ui import posted
from jarvis_tui.ui.host import AppHost
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.chat.reply import CompactionWork, Reply
from jarvis_tui.ui.widgets.conversation import Conversation
from jarvis_tui.ui.widgets.prompt_input import PromptInput
from jarvis_tui.ui.widgets.token_gauge import TokenGauge


class ChatBase(Screen[None]):
    def __init__(self, session: ChatSession) -> None:
        super().__init__()
        self.session = session
        # The reply on its way and the compaction, each one small state object the parts
        # receive (reply.py says which part changes what).
        self.reply = Reply()
        self.compaction_work = CompactionWork()
        # The language changed while a reply or compaction ran: swap the screen once idle.
        self.relocalize_pending = False
        # Files waiting to go with the next message (attachments.py keeps them).
        self.attached: list[Sending] = []
        # What they add to the message, counted when they change: a keystroke counts only
        # what is typed, not a 16 MB file again.
        self.attached_tokens = 0

    if TYPE_CHECKING:
        # screen.py's, declared here because branches.py resends and forks through them.
        async def send(self, text: str, prompt: PromptInput,
                       typed: tuple[str, Spans] | None = None, after: int | None = None,
                       pasted: Spans = NONE) -> None: ...

        def start_round(self, question: Message, *, again: bool = False,
                        after: int | None = None) -> None: ...

        async def load_session(self) -> None: ...

    @property
    def host(self) -> AppHost:
        # JarvisApp, which imports this screen; a Protocol keeps the import one way.
        return cast(AppHost, self.app)

    @property
    def lang(self) -> str:
        return ui_language(self.app)

    @property
    def cid(self) -> int:
        return self.session.id

    async def say(self, text: str, kind: str = "info") -> None:
        if text:
            await self.query_one(Conversation).add_notice(text, kind)

    def _current(self, message: posted.EngineMessage) -> bool:
        return message.conversation_id == self.cid

    def notice_language(self, sample: str = "") -> str:
        """Notices in the conversation follow the conversation's language when set to auto."""
        setting = self.host.settings.language
        if setting != "auto":
            return setting
        if not sample:
            users = [m.content for m in self.session.messages[-6:] if m.role == "user"]
            sample = users[-1] if users else ""
        return "zh" if self.lang == "zh" else pick_language("auto", sample)

    def relocalize_when_idle(self) -> None:
        """The language changed: the app swaps in a new chat screen, once no reply streams and
        no compaction runs (a new screen would not receive their events)."""
        work = self.compaction_work
        if self.reply.on_its_way or work.running or work.proposal is not None:
            self.relocalize_pending = True
        else:
            self.relocalize_pending = False
            self.app.call_later(self.host.relocalize)

    # -- the status line and the gauge ----------------------------------------------------

    def set_status(self, key: str | None = None, **values: object) -> None:
        if key is None:
            key = "status_idle"
        self.query_one("#status", Static).update(CHAT_TEXTS(self.lang, key, **values))

    def update_gauge(self, *, marks: bool = True) -> None:
        """The gauge, and (`marks`: not for a keystroke) each message's mark of what the next
        request does with it: whatever moved the gauge (a reply, a compaction, a pin, an
        exclusion, a branch, a setting) may have moved them too."""
        usage = self.session.usage(pending=self.query_one(PromptInput).text,
                                   attached=self.attached_tokens)
        self.query_one(TokenGauge).update_usage(usage, reply_tokens=self._unstored_reply_tokens())
        if marks:
            self.refresh_marks()

    def refresh_marks(self) -> None:
        # Not while a round or a compaction moves the history: their ends redraw the marks.
        if self.reply.on_its_way or self.compaction_work.running:
            return
        try:
            states = self.session.request_states()
        except StoreError:
            return  # the marks stay as they were; the next send says what is wrong
        self.query_one(Conversation).set_request_states(states)

    def _unstored_reply_tokens(self) -> int:
        """The streaming reply's text that the engine has not stored (and counted) yet."""
        if self.reply.view is None:
            return 0
        return self.session.unstored_reply_tokens(self.reply.view.text)

    def update_cost(self, *, answered: bool = False) -> None:
        """The gauge's cost lines from the store's counts: once a round or compaction ends, not
        on every keystroke. `answered`: a round just ended, and what it reported (maybe
        nothing) is the last turn. A store that cannot be read now leaves the lines as they
        were."""
        session = self.session
        try:
            if answered:
                fresh = session.last_usage is not self.reply.usage_before
                last = session.last_usage if fresh else None
            else:
                last = session.latest_usage()
            tally = session.session_cost()
        except StoreError:
            return
        self.query_one(TokenGauge).update_cost(last, tally, session.price(session.model),
                                               answered=answered)


def explain(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if isinstance(err, StoreError | OSError) else f"{type(err).__name__}: {text}"
