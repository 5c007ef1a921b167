"""What a request is made of, taken once and never changed: the value the plan, the gauge, a
compaction and a request's sending read, in place of the engine.

The engine builds one (`Engine.basis()`) each time one of them needs it: before a round's
request is planned, when the gauge is drawn, when a compaction starts. A compaction or an
overflow inside a round changes the summary, the history or the window, so the next plan takes
a new basis rather than reading a stale one. Helpers that receive it cannot reach back into
the engine: what they may change is named here (`sent`, `tool_outputs`: the decisions a round
keeps for its later requests) or given to them apart (the summary a compaction stores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from jarvis_tui.core.budget import Budget, BudgetUsage
from jarvis_tui.core.calls.specs import ToolSpec
from jarvis_tui.core.details.ledger import HEADER as LEDGER_HEADER
from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.engine.budgeting import details_room, summary_cap
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.engine.tool_outputs import ToolOutputShaper
from jarvis_tui.core.memory.section import MemorySection
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.recall.turns import Recalled
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.records import Summary
from jarvis_tui.core.tools.results import tool_definitions
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.system_message import SystemCount, SystemMessage, count_system
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD, TokenCounter

# Recall for a text: (text, shrink, the user message carrying it, free room) -> the turns.
Recall = Callable[[str, float, Message | None, int | None], Recalled]


@dataclass(frozen=True)
class RequestBasis:
    settings: Settings
    provider: Provider
    window: int  # the context window, as learned or configured
    window_source: str
    budget: Budget
    calibration: Calibration  # the counter, and the server's count of the last request
    prompt: str  # the configured prompt (with the bundled model's tool sentence)
    memory: MemorySection  # as sent, counted now
    summary: Summary | None
    note: str  # the note under the summary's header while search_history is offered
    history: History  # the branch shown; read, never changed, by the helpers
    sent: SentTexts  # what requests sent in place of a message: a round's plan adds to it
    tool_outputs: ToolOutputShaper  # cut to their share: a round's plan cuts
    specs: tuple[ToolSpec, ...]  # the tools offered
    definitions_tokens: int
    searches_history: bool  # search_history may be offered (once a summary covers turns)
    meaning: Meaning | None  # what ranks by meaning; None while the user has it off
    recall: Recall

    @property
    def counter(self) -> TokenCounter:
        return self.calibration.counter

    @cached_property
    def system(self) -> SystemCount:
        """The system message, told apart and counted once: the plan fits the request with
        it, and the gauge, the inspector and a compaction read its counts."""
        summary = self.summary.content if self.summary else ""
        head, marker, ledger = summary.partition("\n\n" + LEDGER_HEADER)
        message = SystemMessage(self.prompt, self.memory.text, head,
                                marker.lstrip("\n") + ledger, self.note)
        return count_system(message, self.counter)

    @property
    def system_prompt(self) -> str:
        """The configured prompt, then the user's memory: one system message (strict chat
        templates refuse a second). Every path that builds or weighs a request reads it here."""
        return self.system.message.front

    @property
    def definitions(self) -> list[dict]:
        return tool_definitions(list(self.specs))

    @property
    def summary_max_tokens(self) -> int:
        return summary_cap(self.settings, self.budget)

    @property
    def details_max_tokens(self) -> int:
        return details_room(self.settings, self.budget)

    def summary_tokens(self, text: str, note: str | None = None) -> int:
        """What a summary of `text` adds to the system message (its header and `note`
        included), counted as the request's own is: for a proposal's estimate."""
        return count_system(self.system.message.with_summary(text, note), self.counter).summary

    def usage(self, pending: str = "", attached: int = 0) -> BudgetUsage:
        """What the next request would need without windowing: what the gauge shows.
        `attached`: the tokens the files waiting to go with `pending` add (counted once when
        attached, not again at each keystroke; recall looks at what is typed)."""
        c, system = self.counter, self.system
        memory = self.memory.tokens
        sys_tokens = max(0, system.front - memory)
        summary_tokens = system.summary
        sys_tokens += self.definitions_tokens  # sent with every request, like the prompt
        anchored = self.calibration.history_tokens(system.message.text, self.history.active)
        tools, tools_saved = self.tool_outputs.tally()
        history = (max(0, anchored - sys_tokens - summary_tokens - memory)
                   if anchored is not None else self.history.tokens(c) - tools_saved)
        sending = bool(pending or attached)
        pending_tokens = c.text(pending) + MESSAGE_OVERHEAD + attached if sending else 0
        if sending and anchored is not None:
            pending_tokens += round(self.calibration.framing or 0.0)  # framed like the others
        recalled = self.recall(pending, 1.0, None, None).tokens if pending else 0
        return self.budget.usage(system=sys_tokens, summary=summary_tokens, history=history,
                                 pending=pending_tokens, source=c.source,
                                 window_source=self.window_source, recalled=recalled,
                                 tools=min(tools, history), memory=memory,
                                 attached=attached if sending else 0)
