"""The one object the interface talks to: the open session, the store it lives in, the
provider it is answered by, and every number the screen shows about it.

The interface never reaches the store, the token counter or the engine's attributes: what it
shows comes from here, so the gauge, the summary editor and the cost lines count alike.
Switching sessions or providers happens here too, so the engine and the provider it holds never
disagree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis_tui.core import events as ev
from jarvis_tui.core.attach.cost import sendable, sending_tokens
from jarvis_tui.core.attach.message import Sending, fitted
from jarvis_tui.core.budget import BudgetUsage
from jarvis_tui.core.costs import Price, Tally
from jarvis_tui.core.files import write_whole
from jarvis_tui.core.memory.guard import MemoryRefused as MemoryRefused
from jarvis_tui.core.memory.section import MemorySection as MemorySection
from jarvis_tui.core.messages import Attached, Message
from jarvis_tui.core.next_request import NextRequest
from jarvis_tui.core.prompt_history import HISTORY_LIMIT, HistoryEntry, entries_of
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.session.branches import SessionBranches
from jarvis_tui.core.session.compaction import SessionCompaction
from jarvis_tui.core.session.memory import SessionMemory
from jarvis_tui.core.settings.config import Settings, price_for

# The UI and the command line reach the store only through this module (an import-linter
# contract): these names are what they need of the store's; the command line reads the store
# as a whole (sessions, search, export, memory import).
from jarvis_tui.core.store.db import default_db_path as default_db_path
from jarvis_tui.core.store.export import to_json as to_json
from jarvis_tui.core.store.export import to_markdown as to_markdown
from jarvis_tui.core.store.records import MemoryEntry as MemoryEntry
from jarvis_tui.core.store.records import MemorySource as MemorySource
from jarvis_tui.core.store.records import SessionInfo as SessionInfo
from jarvis_tui.core.store.records import StoreError as StoreError
from jarvis_tui.core.store.records import Summary as Summary
from jarvis_tui.core.store.records import UsageRow
from jarvis_tui.core.store.store import Store as Store
from jarvis_tui.core.tools.rules import Rule
from jarvis_tui.core.tools.specs import Approve, ToolBox

if TYPE_CHECKING:  # loaded with the first session opened: `sessions`, `export` never need it
    from jarvis_tui.core.engine.engine import Engine

ProviderFactory = Callable[[Settings], Provider]


def _connection(s: Settings) -> tuple[object, ...]:
    """What the provider object is built from: a change to any of these needs a new one."""
    return (s.provider, s.base_url, s.api_key, s.request_timeout, s.connect_timeout,
            s.first_token_timeout, s.reply_timeout)



@dataclass(frozen=True)
class ToolsOffered:
    """The tools a request offers: for which model, how many, and their definitions' tokens
    against the budget for messages."""

    model: str
    tools: int
    tokens: int
    budget: int

# ChatSession opens the session the user had open last unless told which.
LATEST = -1


class ChatSession:
    def __init__(self, settings: Settings, store: Store, provider_factory: ProviderFactory, *,
                 forget_learned_limit: bool = False, conversation_id: int | None = LATEST
                 ) -> None:
        self.settings = settings
        self._store = store
        self._factory = provider_factory
        self.provider = provider_factory(settings)
        # --context-window on the command line says what the server has now: a limit learned
        # under another window is dropped in each session this run opens.
        self._forget = forget_learned_limit
        self.tools: ToolBox | None = None
        self.approve: Approve | None = None
        self._allowed: set[Rule] = set()
        if conversation_id == LATEST:
            latest = store.latest_conversation()
            conversation_id = latest.id if latest else None
        self._engine = self._open_engine(conversation_id)
        # What the caller does, each a facade on the session open now.
        parts = (lambda: self._engine, store, lambda: self.settings)
        self.memory = SessionMemory(*parts)
        self.compaction = SessionCompaction(*parts)
        self.branches = SessionBranches(*parts)

    def _open_engine(self, conversation_id: int | None) -> Engine:
        from jarvis_tui.core.engine.engine import Engine

        engine = Engine(self.settings, self._store, self.provider, conversation_id,
                        forget_learned_limit=self._forget, tools=self.tools,
                        approve=self.approve)
        engine.tool_policy.allowed.update(self._allowed)
        return engine

    def tools_offered(self) -> ToolsOffered:
        """What the offered tools weigh (texts/notices.py's tools_warnings puts it in words)."""
        engine = self._engine
        return ToolsOffered(engine.settings.model,
                            len(engine.tools.specs()) if engine.tools else 0,
                            engine.front.definitions_tokens(), engine.budget.tokens)

    def set_tools(self, tools: ToolBox | None, approve: Approve | None,
                  allowed: Iterable[Rule] = ()) -> None:
        """What runs the model's tool calls (the MCP hub), who allows each call, and the
        rules that let a call run without asking (--allow-tool); kept for every session this
        object opens."""
        self.tools, self.approve = tools, approve
        self._allowed.update(allowed)
        self._engine.tools, self._engine.approve = tools, approve
        self._engine.tool_policy.allowed.update(self._allowed)

    # -- which session -----------------------------------------------------------------------

    @property
    def id(self) -> int:
        return self._engine.conversation.id

    @property
    def title(self) -> str:
        return self._engine.conversation.title

    def open(self, conversation_id: int | None) -> None:
        """Switch to a stored session (it becomes the one that reopens next time), or to a new
        one (None). Raises StoreError or ValueError (no such session) and stays where it was."""
        engine = self._open_engine(conversation_id)
        if conversation_id is not None:
            self._store.touch(conversation_id)
        self._engine = engine

    def list_sessions(self) -> list[SessionInfo]:
        return self._store.list_conversations()

    def refresh_title(self) -> str:
        """The title as stored now (the first message names a new session)."""
        conv = self._store.get_conversation(self.id)
        if conv is not None and conv.title:
            self._engine.conversation = conv
        return self.title

    def take_notices(self) -> list[str]:
        """What the store has to tell the user (an index it rebuilt, a field it could not read)."""
        return self._store.take_notices()

    def catch_up(self) -> int:
        """Turns another jarvis-tui added to this session since it was read (0: none)."""
        return self._engine.catch_up()

    # -- settings and the provider -------------------------------------------------------------

    async def apply_settings(self, settings: Settings) -> None:
        """New settings from the next request on; a new provider when the connection changed
        (the old one's connections are closed)."""
        old, self.settings = self.settings, settings
        if _connection(settings) != _connection(old):
            previous, self.provider = self.provider, self._factory(settings)
            self._engine.provider = self.provider
            await previous.aclose()
        self._engine.apply_settings(settings)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def summary_model(self) -> str:
        return self.settings.summary_model or self.settings.model

    def price(self, model: str) -> Price | None:
        return price_for(self.settings, model)

    async def aclose(self) -> None:
        await self.provider.aclose()

    # -- the conversation --------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """Every message, oldest first; read-only (changes go through the methods here)."""
        return self._engine.messages

    @property
    def summary(self) -> Summary | None:
        return self._engine.summary

    def last_reply(self) -> Message | None:
        """The reply worth copying: one the store refused (only memory holds it), else the
        newest with text."""
        if self._engine.unsaved is not None:
            return self._engine.unsaved
        replies = [m for m in self.messages if m.role == "assistant" and m.content]
        return replies[-1] if replies else None

    def sent_prompts(self, across: bool) -> list[HistoryEntry]:
        """What the user sent, newest first, for the prompt's Up and Down: in this session
        (each with its message id, so the newest can be edited), or in every stored session
        (`across`; raises StoreError)."""
        if across:
            return [HistoryEntry(text, pasted=pasted)
                    for text, pasted in self._store.sent_prompts_pasted(None, HISTORY_LIMIT)]
        return entries_of(self.messages)

    def stream_reply(self, user: Message, after: int | None = None) -> AsyncIterator[ev.Event]:
        """Answer `user`; `after`: the message it follows when it is an edited question (the
        turns after `after` stay on their branch)."""
        return self._engine.stream_reply(user, after=after)

    # -- branches: regenerate (the rest is self.branches) ---------------------------------------

    def regenerate(self, question: Message | None = None, *,
                   anew: Message | None = None) -> AsyncIterator[ev.Event]:
        """/retry: answer the last question (or `question`) again; its reply, and what came
        after it, stay on a branch of their own. `anew`: the record of the new version of a
        question asked anew (asks_anew), already on screen."""
        return self._engine.regenerate(question, anew=anew)

    async def detect_window(self) -> ev.WindowDetected | None:
        return await self._engine.detect_window()

    def next_request(self, pending_text: str = "") -> NextRequest:
        """The request the next round would send, were `pending_text` sent now: built by the
        code the round builds it with (request_plan.py). The memory is read again first, as a
        round does; nothing else changes."""
        self._engine.front.refresh_memory()
        from jarvis_tui.core.engine.request_plan import next_request

        return next_request(self._engine.basis(), pending_text)

    def request_states(self) -> dict[int, str]:
        """Each message of the branch shown -> what the next request does with it
        (core/next_request.py's states), from the same plan."""
        from jarvis_tui.core.engine.request_plan import request_states

        return request_states(self._engine.basis())

    def search(self, query: str) -> list[list[Message]]:
        from jarvis_tui.core.recall.turns import search_turns

        return search_turns(self._store, self.id, self.messages, query,
                            meaning=self._engine.front.by_meaning())

    def search_all(self, query: str) -> list[tuple[list[Message], str]]:
        """Turns of every session that match `query`, best first, each with where it is from:
        "" for this session, else its session's "[title, date]" and id (for /recall --all).
        Other sessions' turns come with their secrets hidden, as recall sends them (unless the
        user turned that off); this session's are its own messages, which can be pinned."""
        from jarvis_tui.core.recall.sessions import scrubbed, search_sessions

        scrub = self._engine.front.beyond_scrub()
        return [(found.turn, "") if found.session.id == self.id
                else (scrubbed(found.turn, scrub), f"{found.label} · #{found.session.id}")
                for found in search_sessions(self._store, query,
                                             meaning=self._engine.front.by_meaning())]

    def export(self, path: Path) -> int:
        """Write the whole session (summaries and covered messages too) as JSON when the path
        ends in .json, else Markdown; how many messages. Raises OSError or StoreError."""
        data = self._store.export(self.id)
        text = to_json(data) + "\n" if path.suffix == ".json" else to_markdown(data)
        write_whole(path, text, parents=False)  # over an older one: never half of each
        return len(self.messages)

    # -- numbers -------------------------------------------------------------------------------

    def usage(self, pending: str = "", attached: int = 0) -> BudgetUsage:
        """What the next request would need: what the gauge shows. `attached`: what the
        files waiting to go with `pending` add (attachment_tokens, summed)."""
        return self._engine.usage(pending=pending, attached=attached)

    def attachment_tokens(self, sendings: list[Sending]) -> list[int]:
        """What each attachment adds to the request, counted as the gauge counts (an image by
        its provider's formula)."""
        counter, protocol = self._engine.counter, self.settings.provider
        return [sending_tokens(s, counter, protocol) for s in sendings]

    def as_sent(self, sendings: list[Sending]) -> list[Sending]:
        """Each of `sendings` as it goes by default: an image scaled down to the provider's
        limit; a text file sent whole that is larger than the request's budget as its digest
        (the conversation stays whole; the model reads the lines it needs with
        read_attachment), or as its first lines for a model not offered that tool; the rest
        as chosen."""
        protocol = self.settings.provider
        sendings = [replace(s, attachment=sendable(s.attachment, protocol)) for s in sendings]
        budget, counter = self._engine.front.budget.tokens, self._engine.counter
        ranges = self._engine.front.may_read_attachments()
        return [fitted(s, tokens, budget, counter, ranges)
                for s, tokens in zip(sendings, self.attachment_tokens(sendings), strict=True)]

    def takes_images(self) -> bool:
        """Whether the model may be sent images (RequestFront.takes_images)."""
        return self._engine.front.takes_images()

    def turns_folded(self, pending: str = "", attached: int = 0) -> int:
        """How many turns a compaction before this send would fold into the summary (0:
        the send stays under the threshold)."""
        return self._engine.turns_folded(pending=pending, attached=attached)

    def sent_before(self, path: str) -> Attached | None:
        """The file at `path` as this session last sent it, if it did."""
        return self._store.last_sent(self.id, path)

    def tokens(self, text: str) -> int:
        """`text` counted as the gauge counts it (calibrated against the server)."""
        return self._engine.counter.text(text) if text else 0

    def unstored_reply_tokens(self, shown: str) -> int:
        """Tokens of the streaming reply's text on screen that the store (and so the gauge's
        history) does not hold yet."""
        stored = self._engine.streaming_reply
        tail = shown[len(stored.content):] if stored is not None else shown
        return self.tokens(tail)

    @property
    def last_usage(self) -> ev.Usage | None:
        """The server's counts of the latest request this process sent that reported any."""
        return self._engine.last_usage

    def latest_usage(self) -> ev.Usage | UsageRow | None:
        """The latest counts, from this process or, after a restart, the store. Raises
        StoreError."""
        return self._engine.last_usage or self._store.latest_usage(self.id)

    def session_cost(self) -> Tally:
        return self._engine.session_cost()
