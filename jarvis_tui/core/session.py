"""The one object the interface talks to: the open session, the store it lives in, the
provider it is answered by, and every number the screen shows about it.

The interface never reaches the store, the token counter or the engine's attributes: what it
shows comes from here, so the gauge, the summary editor and the cost lines count alike.
Switching sessions or providers happens here too, so the engine and the provider it holds never
disagree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import BudgetUsage
from jarvis_tui.core.compaction.size import SummarySize, summary_size
from jarvis_tui.core.compaction_proposal import CompactionProposal
from jarvis_tui.core.costs import CompactionCost, Price, Tally, compaction_cost
from jarvis_tui.core.files import write_whole
from jarvis_tui.core.memory.guard import MemoryRefused as MemoryRefused
from jarvis_tui.core.memory.guard import check, invisible_note
from jarvis_tui.core.memory.remember import remember
from jarvis_tui.core.memory.section import MemorySection as MemorySection
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.next_request import NextRequest
from jarvis_tui.core.prompt_history import HISTORY_LIMIT, HistoryEntry, entries_of
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.settings.config import Settings, known_secrets, price_for

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
        self.store = store
        self._factory = provider_factory
        self.provider = provider_factory(settings)
        # --context-window on the command line says what the server has now: a limit learned
        # under another window is dropped in each session this run opens.
        self._forget = forget_learned_limit
        self.tools: ToolBox | None = None
        self.approve: Approve | None = None
        self._allowed: list[Rule] = []
        if conversation_id == LATEST:
            latest = store.latest_conversation()
            conversation_id = latest.id if latest else None
        self.engine = self._engine(conversation_id)

    def _engine(self, conversation_id: int | None) -> Engine:
        from jarvis_tui.core.engine.engine import Engine

        engine = Engine(self.settings, self.store, self.provider, conversation_id,
                        forget_learned_limit=self._forget, tools=self.tools,
                        approve=self.approve)
        engine.tool_policy.allowed.update(self._allowed)
        return engine

    def tools_offered(self) -> ToolsOffered:
        """What the offered tools weigh (texts/notices.py's tools_warnings puts it in words)."""
        engine = self.engine
        return ToolsOffered(engine.settings.model,
                            len(engine.tools.specs()) if engine.tools else 0,
                            engine.front.definitions_tokens(), engine.budget.tokens)

    def set_tools(self, tools: ToolBox | None, approve: Approve | None,
                  allowed: Iterable[Rule] = ()) -> None:
        """What runs the model's tool calls (the MCP hub), who allows each call, and the
        rules that let a call run without asking (--allow-tool); kept for every session this
        object opens."""
        self.tools, self.approve = tools, approve
        self._allowed = [*self._allowed, *allowed]
        self.engine.tools, self.engine.approve = tools, approve
        self.engine.tool_policy.allowed.update(self._allowed)

    # -- which session -----------------------------------------------------------------------

    @property
    def id(self) -> int:
        return self.engine.conversation.id

    @property
    def title(self) -> str:
        return self.engine.conversation.title

    def open(self, conversation_id: int | None) -> None:
        """Switch to a stored session (it becomes the one that reopens next time), or to a new
        one (None). Raises StoreError or ValueError (no such session) and stays where it was."""
        engine = self._engine(conversation_id)
        if conversation_id is not None:
            self.store.touch(conversation_id)
        self.engine = engine

    def list_sessions(self) -> list[SessionInfo]:
        return self.store.list_conversations()

    def refresh_title(self) -> str:
        """The title as stored now (the first message names a new session)."""
        conv = self.store.get_conversation(self.id)
        if conv is not None and conv.title:
            self.engine.conversation = conv
        return self.title

    def take_notices(self) -> list[str]:
        """What the store has to tell the user (an index it rebuilt, a field it could not read)."""
        return self.store.take_notices()

    def catch_up(self) -> int:
        """Turns another jarvis-tui added to this session since it was read (0: none)."""
        return self.engine.catch_up()

    # -- settings and the provider -------------------------------------------------------------

    async def apply_settings(self, settings: Settings) -> None:
        """New settings from the next request on; a new provider when the connection changed
        (the old one's connections are closed)."""
        old, self.settings = self.settings, settings
        if _connection(settings) != _connection(old):
            previous, self.provider = self.provider, self._factory(settings)
            self.engine.provider = self.provider
            await previous.aclose()
        self.engine.apply_settings(settings)

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
        return self.engine.messages

    @property
    def summary(self) -> Summary | None:
        return self.engine.summary

    @property
    def summary_max_tokens(self) -> int:
        return self.engine.summary_max_tokens

    def summary_size(self) -> SummarySize | None:
        """The summary and its ledger against their budgets, and what the newest compaction
        added; None without a summary or when the store cannot be read now."""
        shown = self.summary
        if shown is None:
            return None
        try:
            # Up to the branch's own: a later one may be another branch's.
            summaries = [s for s in self.store.summaries(self.id) if s.id <= shown.id]
        except StoreError:
            return None
        return summary_size(summaries, self.engine.counter, self.engine.summary_max_tokens,
                            self.engine.details_max_tokens)

    def covered(self) -> list[Message]:
        """The messages the summary stands for in requests."""
        return [m for m in self.messages if m.covered]

    def last_reply(self) -> Message | None:
        """The reply worth copying: one the store refused (only memory holds it), else the
        newest with text."""
        if self.engine.unsaved is not None:
            return self.engine.unsaved
        replies = [m for m in self.messages if m.role == "assistant" and m.content]
        return replies[-1] if replies else None

    def sent_prompts(self, across: bool) -> list[HistoryEntry]:
        """What the user sent, newest first, for the prompt's Up and Down: in this session
        (each with its message id, so the newest can be edited), or in every stored session
        (`across`; raises StoreError)."""
        if across:
            return [HistoryEntry(text, pasted=pasted)
                    for text, pasted in self.store.sent_prompts_pasted(None, HISTORY_LIMIT)]
        return entries_of(self.messages)

    def last_pinnable(self) -> Message | None:
        candidates = [m for m in self.messages if m.status != FAILED]
        return candidates[-1] if candidates else None

    def stream_reply(self, user: Message, after: int | None = None) -> AsyncIterator[ev.Event]:
        """Answer `user`; `after`: the message it follows when it is an edited question (the
        turns after `after` stay on their branch)."""
        return self.engine.stream_reply(user, after=after)

    # -- branches: regenerate, edit, alternatives, exclude, fork ------------------------------

    def regenerate(self, question: Message | None = None, *,
                   anew: Message | None = None) -> AsyncIterator[ev.Event]:
        """/retry: answer the last question (or `question`) again; its reply, and what came
        after it, stay on a branch of their own. `anew`: the record of the new version of a
        question asked anew (asks_anew), already on screen."""
        return self.engine.regenerate(question, anew=anew)

    def asks_anew(self, question: Message) -> bool:
        """Answering `question` again asks it as a new version of itself: it has no reply,
        and the turns after it stay with the version before."""
        return self.engine.asks_anew(question)

    def last_question(self) -> Message | None:
        return self.engine.last_question()

    def alternatives(self, message: Message) -> tuple[int, int]:
        """(which, of how many) versions of this reply or question: the "2/3" beside it."""
        return self.engine.alternatives(message)

    def versions(self, messages: list[Message]) -> dict[int, tuple[int, int]]:
        """alternatives() for many messages at once, by id() of each: one walk of the tree."""
        return self.engine.versions(messages)

    def switch_alternative(self, message: Message, step: int) -> Message | None:
        """Show another version (step -1 / 1) and the branch that follows it; None: none."""
        return self.engine.switch_alternative(message, step)

    def editable(self, message: Message) -> str:
        """Whether `message` can be edited and resent here: "ok"; "covered" (a summary stands
        for it: fork the session from it instead); "not_question"; "not_shown"."""
        if message.role != "user" or message.id is None:
            return "not_question"
        if not any(m is message for m in self.messages):
            return "not_shown"
        return "covered" if message.covered else "ok"

    def turn_of(self, message: Message) -> list[Message]:
        return self.engine.turn_of(message)

    def set_excluded(self, messages: list[Message], excluded: bool) -> ev.MessagesChanged:
        """Take a turn out of every later request, or bring it back; raises StoreError. The
        memory suggestions its messages gave, still waiting, are withdrawn with it (the store
        does it, whoever excludes), and stay withdrawn when it is brought back: /remember
        says them again. An accepted entry stays, marked in F6 as from an excluded message."""
        self.engine.set_excluded(messages, excluded)
        return ev.MessagesChanged(tuple(m.id for m in messages if m.id is not None),
                                  "excluded" if excluded else "included")

    def last_turn(self) -> list[Message]:
        """The newest turn with a question: what /forget takes out."""
        question = next((m for m in reversed(self.messages) if m.role == "user"), None)
        return self.turn_of(question) if question is not None else []

    def last_excluded(self) -> list[Message]:
        """The newest excluded turn shown: what /forget undo brings back."""
        out = next((m for m in reversed(self.messages) if m.excluded), None)
        return [m for m in self.turn_of(out) if m.excluded] if out is not None else []

    def fork(self, message: Message) -> SessionInfo:
        """A new stored session holding the branch up to `message`; this one is unchanged.
        Raises StoreError or ValueError."""
        return self.engine.fork(message)

    def compact(self, reason: str, focus: str | None = None) -> AsyncIterator[ev.Event]:
        """Compact and store at once: the automatic compactions (a threshold, an overflow)."""
        return self.engine.compact(reason=reason, focus=focus)

    def propose_compaction(self, focus: str | None = None) -> AsyncIterator[ev.Event]:
        """/compact: summarise, store nothing, and end with CompactionProposed for the user to
        read; then commit_compaction or discard_compaction."""
        return self.engine.compact(reason="manual", focus=focus, preview=True)

    def commit_compaction(self, proposal: CompactionProposal,
                          text: str) -> AsyncIterator[ev.Event]:
        """Store the proposal with `text` (an edited text is stored as edited by the user), or
        say in CompactionFailed why it no longer applies."""
        return self.engine.commit_compaction(proposal, text)

    def discard_compaction(self, proposal: CompactionProposal) -> None:
        self.engine.discard_compaction(proposal)

    def proposal_covers(self, proposal: CompactionProposal) -> list[Message]:
        """The messages the summary would stand for once accepted: those it covers already and
        those it folds in, oldest first."""
        folding = {m.id for m in proposal.evict}
        return [m for m in self.messages if m.covered or m.id in folding]

    def tokens_after(self, proposal: CompactionProposal, text: str) -> int:
        """About what the next request would need with the proposal accepted as `text`."""
        return self.engine.tokens_after(proposal, text)

    async def detect_window(self) -> ev.WindowDetected | None:
        return await self.engine.detect_window()

    def set_pinned(self, messages: Iterable[Message], pinned: bool) -> ev.MessagesChanged:
        """Pin (always sent verbatim, never summarised) or unpin; raises StoreError."""
        ids = []
        for message in messages:
            self.engine.set_pinned(message, pinned)
            ids.append(message.id)
        return ev.MessagesChanged(tuple(i for i in ids if i is not None),
                                  "pinned" if pinned else "unpinned")

    def edit_summary(self, text: str) -> Summary:
        return self.engine.edit_summary(text)

    def next_request(self, pending_text: str = "") -> NextRequest:
        """The request the next round would send, were `pending_text` sent now: built by the
        code the round builds it with (request_plan.py). The memory is read again first, as a
        round does; nothing else changes."""
        self.engine.front.refresh_memory()
        from jarvis_tui.core.engine.request_plan import next_request

        return next_request(self.engine.basis(), pending_text)

    def request_states(self) -> dict[int, str]:
        """Each message of the branch shown -> what the next request does with it
        (core/next_request.py's states), from the same plan."""
        from jarvis_tui.core.engine.request_plan import request_states

        return request_states(self.engine.basis())

    def search(self, query: str) -> list[list[Message]]:
        from jarvis_tui.core.recall.turns import search_turns

        return search_turns(self.store, self.id, self.messages, query,
                            meaning=self.engine.front.by_meaning())

    def search_all(self, query: str) -> list[tuple[list[Message], str]]:
        """Turns of every session that match `query`, best first, each with where it is from:
        "" for this session, else its session's "[title, date]" and id (for /recall --all).
        Other sessions' turns come with their secrets hidden, as recall sends them (unless the
        user turned that off); this session's are its own messages, which can be pinned."""
        from jarvis_tui.core.recall.sessions import scrubbed, search_sessions

        scrub = self.engine.front.beyond_scrub()
        return [(found.turn, "") if found.session.id == self.id
                else (scrubbed(found.turn, scrub), f"{found.label} · #{found.session.id}")
                for found in search_sessions(self.store, query,
                                             meaning=self.engine.front.by_meaning())]

    def export(self, path: Path) -> int:
        """Write the whole session (summaries and covered messages too) as JSON when the path
        ends in .json, else Markdown; how many messages. Raises OSError or StoreError."""
        data = self.store.export(self.id)
        text = to_json(data) + "\n" if path.suffix == ".json" else to_markdown(data)
        write_whole(path, text, parents=False)  # over an older one: never half of each
        return len(self.messages)

    # -- memory: what every session is told ---------------------------------------------------
    # Shared by every session of the store; each change is read into this session's next
    # request (and any other jarvis-tui's next round: the store's stamp tells them).

    def memories(self, include_suggested: bool = True) -> list[MemoryEntry]:
        """The memory, pinned first, then newest first; with the suggestions waiting for the
        user's yes (state "suggested") among them unless `include_suggested` is false. Raises
        StoreError."""
        return self.store.memories(("active", "suggested") if include_suggested
                                   else ("active",))

    def remember(self, text: str, message: Message | None = None) -> MemoryEntry:
        """Put `text` in the memory (from `message`, when it was taken from one), from the next
        request on. A text already there in any state is that entry, now in memory, and so is
        one that says the same in other words or the other language while recall_by_meaning
        is on. Raises MemoryRefused (one line: a secret, too long, empty) or StoreError."""
        entry = remember(self.store, text, self._secrets(), conversation_id=self.id,
                         message_id=message.id if message is not None else None,
                         origin="remember" if message is None else "message",
                         alike=self.engine.front.alike())
        self.engine.front.refresh_memory()
        return entry

    def memory_sources(self) -> dict[int, MemorySource]:
        """How each memory entry came, and whether its message is now taken out of the
        requests, by entry id (F6 says so). Raises StoreError."""
        return self.store.memory_sources()

    def edit_memory(self, entry_id: int, text: str) -> MemoryEntry:
        """Raises MemoryRefused, as remember does, or StoreError (no such entry)."""
        entry = self.store.update_memory(entry_id, text=check(text, self._secrets()))
        self.engine.front.refresh_memory()
        return entry

    def memory_note(self, text: str, language: str) -> str | None:
        """The one line saying what storing `text` in the memory removes (characters that show
        nothing, and what tag characters among them spelled), or None when nothing."""
        return invisible_note(text, language, self._secrets())

    def pin_memory(self, entry_id: int, pinned: bool) -> MemoryEntry:
        """A pinned entry is sent before newer ones, so the budget leaves it out last."""
        entry = self.store.update_memory(entry_id, pinned=pinned)
        self.engine.front.refresh_memory()
        return entry

    def delete_memory(self, entry_id: int) -> None:
        self.store.delete_memory(entry_id)
        self.engine.front.refresh_memory()

    def accept_suggestion(self, entry_id: int) -> MemoryEntry:
        """The user's yes: the suggestion enters the memory. Raises MemoryRefused (its text is
        checked as a typed one is) or StoreError."""
        entry = self.store.memory_entry(entry_id)
        if entry is None:
            raise StoreError(f"memory entry {entry_id} does not exist (deleted, perhaps in "
                             "another window).")
        text = check(entry.text, self._secrets())  # one stored by an older version: cleaned too
        if entry.state != "active" or text != entry.text:
            entry = self.store.update_memory(entry_id, text=text, state="active")
            self.engine.front.refresh_memory()
        return entry

    def dismiss_suggestion(self, entry_id: int) -> None:
        """The user's no: kept as dismissed, so the same text is never suggested again."""
        entry = self.store.memory_entry(entry_id)
        if entry is None:
            raise StoreError(f"memory entry {entry_id} does not exist (deleted, perhaps in "
                             "another window).")
        if entry.state == "active":
            raise StoreError(f"memory entry {entry_id} is in the memory, not a suggestion; "
                             "delete it to forget it.")
        self.store.update_memory(entry_id, state="dismissed")

    def memory_sent(self) -> MemorySection:
        """What the next request carries of the memory: the entries sent, those left out for
        its budget (ids, in the order they rank), and its tokens. Read again first if the
        memory changed, here or in another jarvis-tui."""
        self.engine.front.refresh_memory()
        return self.engine.front.memory_sent()

    def memory_budget(self) -> int:
        """The memory section's room in the next request, in tokens (0: memory off)."""
        return self.engine.front.memory_budget()

    def _secrets(self) -> list[str]:
        return known_secrets(self.settings)

    # -- numbers -------------------------------------------------------------------------------

    def usage(self, pending: str = "") -> BudgetUsage:
        """What the next request would need: what the gauge shows."""
        return self.engine.usage(pending=pending)

    def tokens(self, text: str) -> int:
        """`text` counted as the gauge counts it (calibrated against the server)."""
        return self.engine.counter.text(text) if text else 0

    def unstored_reply_tokens(self, shown: str) -> int:
        """Tokens of the streaming reply's text on screen that the store (and so the gauge's
        history) does not hold yet."""
        stored = self.engine.streaming_reply
        tail = shown[len(stored.content):] if stored is not None else shown
        return self.tokens(tail)

    def pinned_usage(self) -> tuple[int, int]:
        return self.engine.pinned_usage()

    @property
    def last_usage(self) -> ev.Usage | None:
        """The server's counts of the latest request this process sent that reported any."""
        return self.engine.last_usage

    def latest_usage(self) -> ev.Usage | UsageRow | None:
        """The latest counts, from this process or, after a restart, the store. Raises
        StoreError."""
        return self.engine.last_usage or self.store.latest_usage(self.id)

    def session_cost(self) -> Tally:
        return self.engine.session_cost()

    def last_compaction(self) -> CompactionCost | None:
        """What the newest compaction cost, as the store kept it; None when it cannot say."""
        try:
            return compaction_cost(self.store.last_compaction_usage(self.id))
        except StoreError:
            return None
