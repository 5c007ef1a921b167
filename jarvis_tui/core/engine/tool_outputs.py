"""How the requests send tool results: whole, cut to their share of the budget, or stubbed.

Held by the engine, apart from it: these steps need only the history, the counts, what was sent
in place of a message (SentTexts) and the session's meta, never the round around them. Each
decision is kept (in SentTexts, and the stubs in the session's meta) so that later requests, and
a restart, send the same bytes and the provider's prompt cache stays good.
"""

from __future__ import annotations

from dataclasses import replace

from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget
from jarvis_tui.core.engine.sent_texts import SentTexts
from jarvis_tui.core.messages import Message
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.session_meta import SessionMeta
from jarvis_tui.core.tools.outputs import (
    RawCounts,
    cut_output,
    is_cut,
    prune,
    stub_for,
    tool_tokens,
)
from jarvis_tui.core.window.calibration import Calibration
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD

STUBS_KEY = "tool_stubs"  # session meta: ids of tool results sent as stubs


class ToolOutputShaper:
    """Decides, once per tool result, what the requests send for it, and counts what that
    saves. `calibration` rather than its counter: a new model brings a new counter."""

    def __init__(self, settings: Settings, history: History, calibration: Calibration,
                 sent: SentTexts, meta: SessionMeta) -> None:
        self.settings = settings
        self._history = history
        self._calibration = calibration
        self._sent = sent
        self._meta = meta
        self._shaped: set[int] = set()  # tool results already weighed against their share
        self._tally_cache: tuple[object, tuple[int, int]] = (None, (0, 0))

    def apply(self, settings: Settings) -> None:
        if settings.tool_output_share != self.settings.tool_output_share:
            # Tool results are weighed against the new share; a stub stays a stub.
            self._shaped.clear()
            self._sent.texts = {i: t for i, t in self._sent.texts.items() if not is_cut(t)}
        self.settings = settings

    def tally(self) -> tuple[int, int]:
        """(tokens tool calls and results take as sent, tokens their stored form has beyond
        that); counted again only when the history, what was sent, or the factor changed."""
        active = self._history.active
        counter = self._calibration.counter
        # A stub replacing a cut keeps the count of texts: their lengths tell the change.
        texts = self._sent.texts
        key = (id(active), len(active), len(texts), sum(map(len, texts.values())),
               counter.factor)
        if self._tally_cache[0] != key:
            sent = tool_tokens(active, self._sent.texts, counter)
            stored = tool_tokens(active, {}, counter)
            self._tally_cache = (key, (sent, max(0, stored - sent)))
        return self._tally_cache[1]

    def shape(self, budget: Budget) -> bool:
        """Results over their share of the budget are sent head and tail from now on (decided
        once each, so later requests send the same bytes). True when one was cut now."""
        weighed, cuts = self.cuts(budget)
        self._shaped.update(weighed)
        self._sent.texts.update(cuts)
        return bool(cuts)

    def cuts(self, budget: Budget) -> tuple[list[int], dict[int, str]]:
        """What `shape` would decide now, without keeping it: the results weighed for the
        first time, and those of them cut (id -> head and tail). The next request's preview
        reads it too, so it shows the cut the round is about to make."""
        share = max(int(budget.tokens * self.settings.tool_output_share), 64)
        weighed: list[int] = []
        cuts: dict[int, str] = {}
        # Weighed by the raw estimate: the calibration moves with every reply, and a session
        # opened again must cut each result where it was cut before (the same bytes).
        raw = RawCounts(self._calibration.counter)
        for msg in self._history.active:
            if (msg.role != "tool" or msg.id is None or msg.id in self._sent.texts
                    or msg.id in self._shaped):
                continue
            weighed.append(msg.id)
            if raw.text(msg.content) + MESSAGE_OVERHEAD > share:
                cut = cut_output(msg.content, share, raw)
                if cut is not None:
                    cuts[msg.id] = cut
        return weighed, cuts

    def prune(self, *, deeper: bool = False) -> ev.ToolOutputsPruned | None:
        """Older tool results become one-line stubs in the request (the newest
        `tool_keep_outputs` stay whole): tried before any summary is made. `deeper`: every
        result before the newest user message, when that was not enough (a small window,
        where two outputs fill the room a summary would leave)."""
        active = self._history.active
        keep = self.settings.tool_keep_outputs
        if deeper:
            last_user = next((i for i in range(len(active) - 1, -1, -1)
                              if active[i].role == "user"), 0)
            keep = sum(m.role == "tool" for m in active[last_user:])
        pruned = prune(active, keep, self._sent.texts, self._calibration.counter)
        if not pruned.stubs:
            return None
        self._sent.texts.update(pruned.stubs)
        # Kept with the session: a restart sends them stubbed as before (the same bytes, the
        # provider's cache still good), instead of whole until the threshold is passed again.
        stubbed = set(self._meta.get(STUBS_KEY) or []) | set(pruned.stubs)
        self._meta.remember(STUBS_KEY, sorted(stubbed))
        self._calibration.forget_anchor()  # the server counted them whole
        return ev.ToolOutputsPruned(len(pruned.stubs), pruned.freed, tuple(pruned.stubs))

    def as_sent(self, messages: list[Message]) -> list[Message]:
        """Messages as the requests sent them, for the summariser: tool results cut or stubbed,
        and anything cut to fit as its head and tail. Read whole, a 20,000-token git log or a
        paste three times the window would cost a dozen chunked requests, and chunks cut it in
        the middle anyway. The stored originals stay whole; the ledger reads them for details.
        A message that only carried recalled turns is summarised as itself."""
        texts = self._sent.texts
        return [replace(m, content=texts[m.id])
                if m.id in texts and (m.role == "tool" or self._sent.cut(m)) else m
                for m in messages]

    def restore_stubs(self) -> None:
        """The stubs earlier runs sent in place of tool results still in the request."""
        ids = self._meta.get(STUBS_KEY)
        if not isinstance(ids, list) or not ids:
            return
        wanted = {i for i in ids if isinstance(i, int)}
        active = self._history.active
        for msg in active:
            if msg.role == "tool" and msg.id in wanted:
                self._sent.texts[msg.id] = stub_for(active, msg, self._calibration.counter)
                self._shaped.add(msg.id)
