"""What every request is made of, kept current between requests: the settings in force, the
summary, the user's memory as the requests carry it, the tools offered (search_history beside
the MCP tools), and recall, with the counts they take. The engine holds one; `basis()` takes it
as the immutable value the plan, the gauge and a compaction read (request_basis.py).

Apart from the engine's round loop so that each can be read alone: this answers "what goes into
the next request", the engine "what happens when it is sent".
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import replace

from jarvis_tui.core.budget import Budget
from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.details.ledger import split
from jarvis_tui.core.embed.meaning import Meaning, chosen
from jarvis_tui.core.engine.budgeting import budget_for
from jarvis_tui.core.engine.request_basis import RequestBasis
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.engine.window_limit import WindowLimit
from jarvis_tui.core.memory.remember import Alike
from jarvis_tui.core.memory.section import EMPTY, MemorySection, memory_section
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    may_read_images,
    with_tool_sentence,
)
from jarvis_tui.core.recall.alike import alike
from jarvis_tui.core.recall.sessions import Scrub, joined, recall_beyond, search_sessions
from jarvis_tui.core.recall.turns import Recalled, recall, search_covered
from jarvis_tui.core.safety.redact import redactor
from jarvis_tui.core.settings.config import Settings, known_secrets
from jarvis_tui.core.store.records import StoreError, Summary
from jarvis_tui.core.store.session_meta import SessionMeta
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.attachment_tool import (
    ATTACHMENT_SPEC,
    AttachedFile,
    AttachmentReader,
    files_in,
    has_digest,
)
from jarvis_tui.core.tools.builtin import WithBuiltins
from jarvis_tui.core.tools.history_search import HistorySearch, result_cap
from jarvis_tui.core.tools.history_tool import (
    HISTORY_SPEC,
    SEARCH_REFUSED_KEY,
    SUMMARY_NOTE,
    history_builtin,
    refusing_models,
)
from jarvis_tui.core.tools.refused import RefusedTools
from jarvis_tui.core.tools.results import definitions_text, tool_definitions
from jarvis_tui.core.tools.specs import ToolBox
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter

# Messages embedded before a request at most: about 2 s on one core for an older store's
# backlog, a batch a send; after the reply, the few messages the round stored.
EMBED_BEFORE = 2048
EMBED_AFTER = 16
# The most of the window a statement or paste may recall (half the share, and no more than
# this): its turns are carried, and re-read, in every request until the next compaction.
STATEMENT_SHARE = 0.15
# Session meta: the models whose server refused an image.
NO_IMAGES_KEY = "images_refused"


class RequestFront:
    """The makings of the next request for one session. `settings`, `summary` and `tools`
    are the engine's to change (the settings screen, a compaction or another branch, the MCP
    servers connecting); the rest is read from the collaborators it is given."""

    def __init__(self, settings: Settings, store: Store, conversation_id: int, history: History,
                 limit: WindowLimit, calibration: Calibration, sent: SentTexts,
                 tool_outputs: ToolOutputShaper, meta: SessionMeta,
                 tools: ToolBox | None) -> None:
        self.settings = settings
        self.summary: Summary | None = None
        self.tools = tools  # what runs the model's tool calls (the MCP servers)
        self._store = store
        self._conversation_id = conversation_id
        self._history = history
        self.limit = limit
        self.calibration = calibration
        self.sent = sent
        self.tool_outputs = tool_outputs
        self._meta = meta
        # Loads its model on first use.
        self.meaning = Meaning(store, chosen(settings.base_url, settings.embedding_model,
                                             settings.api_key))
        self.refused_tools = RefusedTools()  # tools the provider would not be told of
        self._search_refused_by = refusing_models(meta.get(SEARCH_REFUSED_KEY))
        self._no_images = refusing_models(meta.get(NO_IMAGES_KEY))
        self._defs_cache: tuple[object, int] = (None, 0)
        # The user's memory as the requests carry it, and what it was read at: the memory's
        # stamp and the section's budget (refresh_memory).
        self._memory = EMPTY
        self._memory_key: tuple[object, ...] | None = None

    @property
    def counter(self) -> TokenCounter:
        return self.calibration.counter

    @property
    def budget(self) -> Budget:
        """The budget at the window now (budgeting.py)."""
        return budget_for(self.settings, self.limit.size)

    def basis(self, provider: Provider) -> RequestBasis:
        """What the next request is made of, as it stands now, sent to `provider`. The tools
        offered are asked for once: the prompt and the definitions' count read the same ones."""
        specs = tuple(self.tool_specs())
        return RequestBasis(
            settings=self.settings, provider=provider, window=self.limit.size,
            window_source=self.limit.source, budget=self.budget, calibration=self.calibration,
            prompt=self.configured_prompt(specs), memory=self.memory_sent(), summary=self.summary,
            note=self.summary_note(), history=self._history, sent=self.sent,
            tool_outputs=self.tool_outputs, specs=specs,
            definitions_tokens=self.definitions_tokens(specs),
            searches_history=self.may_search_history(), meaning=self.by_meaning(),
            recall=self.recall)

    def recall(self, text: str, shrink: float = 1.0, user: Message | None = None,
                free: int | None = None) -> Recalled:
        """This session's folded turns `text` is about, then, if it points beyond the session,
        other sessions' turns: one budget, this session's first. `free`: the room the request
        leaves under the window; what the ranker adds by meaning takes no more, so the newest
        turns stay as they are (the turns the words name may push the oldest out, as always)."""
        budget = int(self.limit.size * self.settings.recall_budget * shrink)
        statement = int(self.limit.size * STATEMENT_SHARE * shrink)
        present = self.sent.carried_by_others(user)
        own = Recalled()
        meaning = self.by_meaning()
        if self.summary:  # nothing is folded without one
            own = recall(self._store, self._conversation_id, self._history, text, self.counter,
                         budget, present, split(self.summary.content)[1], meaning, free,
                         statement)
        if not self.settings.recall_other_sessions:
            return own
        return joined(own, recall_beyond(self._store, self._conversation_id, text, self.counter,
                                         budget - own.tokens, present, self._history.all,
                                         self.beyond_scrub(), meaning,
                                         None if free is None else max(0, free - own.tokens)))

    async def embed_waiting(self, limit: int = EMBED_BEFORE) -> None:
        """Embed stored messages that have no vector yet, newest first, in a thread: the
        question just stored and the reply before it, and, a batch per send, what an older
        store never had. The event loop (the screen, typing) goes on meanwhile."""
        if self.settings.recall_by_meaning and self.meaning.ready:
            await asyncio.to_thread(self.meaning.index, None, limit)

    def beyond_scrub(self) -> Scrub | None:
        """What other sessions' text goes through before this one sends or shows it: their
        secrets hidden, unless the user turned that off (None)."""
        if not self.settings.recall_redact_secrets:
            return None
        return redactor(known_secrets(self.settings))

    def search_refused(self) -> None:
        """The server refused search_history: kept with the session, so the model is not
        offered it again, this run or the next."""
        self._search_refused_by.append(self.settings.model)
        self._meta.remember(SEARCH_REFUSED_KEY, self._search_refused_by)

    def images_refused(self) -> None:
        """The server said the model takes no images: kept with the session, so the next
        image is refused when it is attached, not after a request."""
        if self.settings.model not in self._no_images:
            self._no_images.append(self.settings.model)
            self._meta.remember(NO_IMAGES_KEY, self._no_images)

    def takes_images(self) -> bool:
        """Whether the model may be sent images: not the bundled one (a text model; its
        server has no vision projector), nor one whose server refused them. Any other is
        tried; a server that refuses says so in one line (ImagesRefused)."""
        return (may_read_images(self.settings.model)
                and self.settings.model not in self._no_images)

    def tool_specs(self) -> list[ToolSpec]:
        box = self.toolbox()
        return self.refused_tools.offered(box.specs()) if box is not None else []

    def _searches_history(self) -> bool:
        """Whether the model is offered search_history: while a summary covers turns (so the
        definitions change with the summary only), unless it is off or the server refused it."""
        return self.summary is not None and self.may_search_history()

    def may_search_history(self) -> bool:
        # Not for the bundled local model: offered it after a compaction, it called it on
        # ordinary turns, over and over, then answered every later turn with nothing (the
        # cache bench's local run); asked to search, it called it 0 times in 6, and the answer
        # had the fact less often than with the tool off (bench/local/search_tool_local.py). The
        # details ledger and recall bring folded facts back without the model's help.
        return (self.settings.history_search_tool
                and self.settings.model != LOCAL_MODEL_NAME
                and self.settings.model not in self._search_refused_by
                and bool(self.refused_tools.offered([HISTORY_SPEC])))

    def toolbox(self) -> ToolBox | None:
        """The tools a round offers and runs: the MCP tools, and beside them search_history
        (once a summary covers turns) and read_attachment (once a file went as a digest)."""
        s, cap = self.settings, self.result_cap()
        builtins = []
        if self._searches_history():
            search = HistorySearch(self._folded_turns, self.counter, cap,
                                   self._other_sessions if s.recall_other_sessions else None)
            builtins.append(history_builtin(search))
        if self.reads_attachments():
            reader = AttachmentReader(self._attached_files, self.counter, cap)
            builtins.append(reader.builtin())
        return WithBuiltins(builtins, self.tools) if builtins else self.tools

    def result_cap(self) -> int:
        """The most tokens a built-in tool's result takes (history_search.py)."""
        s = self.settings
        return result_cap(self.limit.size, s.recall_budget, self.budget.tokens,
                          s.tool_output_share)

    def reads_attachments(self) -> bool:
        """Whether the model is offered read_attachment: from the branch's first digest on."""
        return has_digest(self._history.all) and self.may_read_attachments()

    def may_read_attachments(self) -> bool:
        """Whether a digest's model would be offered read_attachment: not the bundled model,
        which answers a digest with its instructions and never calls the tool (tried by hand:
        "Read the lines you need."), nor one whose server refused it."""
        return (self.settings.model != LOCAL_MODEL_NAME
                and bool(self.refused_tools.offered([ATTACHMENT_SPEC])))

    def _attached_files(self) -> list[AttachedFile]:
        return files_in(self._history.all, self._store.attachment_body)

    def by_meaning(self) -> Meaning | None:
        """What ranks by meaning beside the words, in recall and every search: None while the
        user has recall_by_meaning off."""
        return self.meaning if self.settings.recall_by_meaning else None

    def alike(self) -> Alike | None:
        """What finds a memory entry that says what a text says in other words or the other
        language (recall/alike.py), for the memory's duplicate check; None while the user has
        recall_by_meaning off (then only the same text is a duplicate)."""
        meaning = self.by_meaning()
        return None if meaning is None else functools.partial(alike, meaning)

    def _folded_turns(self, query: str, limit: int) -> list[list[Message]]:
        """For search_history: this session's folded turns that match."""
        return search_covered(self._store, self._conversation_id, self._history, query, limit,
                              self.by_meaning())

    def _other_sessions(self, query: str, limit: int) -> list[tuple[list[Message], str]]:
        """For search_history's all_sessions: the other sessions' turns that match."""
        found = search_sessions(self._store, query, limit, beside=self._conversation_id,
                                scrub=self.beyond_scrub(), meaning=self.by_meaning())
        return [(f.turn, f.where) for f in found]

    def configured_prompt(self, specs: Sequence[ToolSpec] | None = None) -> str:
        """The configured prompt, and for the bundled model, while it has tools, a sentence on
        when to call them (local_server.py): what the system reserve is for. Tools configured,
        not offered this request: a step past the limit keeps the same front."""
        prompt = self.settings.system_prompt
        offered = self.tool_specs() if specs is None else specs
        if self.settings.model == LOCAL_MODEL_NAME and offered:
            return with_tool_sentence(prompt)
        return prompt

    def memory_budget(self) -> int:
        """The memory section's room: the setting (0: memory off), but never more than a tenth
        of the request's budget, so a small window keeps its room for the conversation."""
        return max(0, min(self.settings.memory_budget, self.budget.tokens // 10))

    def refresh_memory(self) -> bool:
        """Read the memory again when it changed since it was read (here or in another
        jarvis-tui: the store's stamp says) or its budget did; whether the section was built
        anew. Called at the start of each round, not per request or per token: the front of
        the request changes only when memory does, so the provider's prompt cache holds."""
        budget = self.memory_budget()
        try:
            key = (self._store.memory_stamp(), budget)
            if key == self._memory_key:
                return False
            entries = self._store.memories()
        except StoreError:
            return False  # the memory read before stays; a round is not failed over it
        self._memory_key = key
        self._memory = memory_section(entries, self.counter, budget)
        return True

    def memory_sent(self) -> MemorySection:
        """What the next request carries of the memory: the entries sent, those left out for
        the budget, and its tokens as counted now (the counter is calibrated as replies come)."""
        section = self._memory
        if section.text and (tokens := self.counter.text(section.text)) != section.tokens:
            section = replace(section, tokens=tokens)
        return section

    def summary_note(self) -> str:
        return SUMMARY_NOTE if self._searches_history() else ""

    def definitions(self) -> list[dict]:
        return tool_definitions(self.tool_specs())

    def definitions_tokens(self, specs: Sequence[ToolSpec] | None = None) -> int:
        """Tokens of the tool definitions every request carries (0 without tools)."""
        defs = self.definitions() if specs is None else tool_definitions(list(specs))
        if not defs:
            return 0
        key = (definitions_text(defs), self.counter.factor)
        if self._defs_cache[0] != key:
            self._defs_cache = (key, self.counter.text(key[0]))
        return self._defs_cache[1]

    def tool_timeout(self, spec: ToolSpec) -> float:
        """The box may know a server's own limit; otherwise the setting."""
        seconds = self.tools.timeout_for(spec) if self.tools is not None else None
        return float(seconds) if seconds else self.settings.tool_timeout
