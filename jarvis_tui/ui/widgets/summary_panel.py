"""The sidebar's collapsible view of the current conversation summary: what the model is told about
the turns that no longer fit, so the user can see what was kept and open it with F2."""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from jarvis_tui.core import costs
from jarvis_tui.core.compaction.size import SummarySize
from jarvis_tui.core.costs import CompactionCost, Price
from jarvis_tui.core.session import Summary
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.widgets.token_gauge import SPINNER, SPINNER_INTERVAL

SUMMARY_TEXTS = Texts(
    en={
        "title": "Summary",
        "empty": "No summary yet: older turns are summarised when the conversation reaches the "
                 "compaction threshold, or with /compact.",
        "covers": "covers {n} messages",
        "covers_one": "covers 1 message",
        "auto": "automatic",
        "manual": "/compact",
        "edited": "edited by you",
        "focus": "focus: ",
        "hint": "F2 view / edit",
        "compacting": "Compacting {n} messages…",
        "compacting_any": "Compacting…",
        "cost": "Last compaction: {n} requests · prompt {prompt} · out {out}",
        "cost_one": "Last compaction: 1 request · prompt {prompt} · out {out}",
        "freed": "freed {n} tokens",
        "size": "summary {summary}/{summary_budget} · details {details}/{details_budget}",
        "growth": "compaction {n}: {growth} tokens",
    },
    zh={
        "title": "摘要",
        "empty": "还没有摘要：对话达到压缩阈值时会总结较早的轮次，也可以用 /compact 手动压缩。",
        "covers": "涵盖 {n} 条消息",
        "covers_one": "涵盖 1 条消息",
        "auto": "自动",
        "manual": "/compact",
        "edited": "由你编辑",
        "focus": "重点：",
        "hint": "F2 查看 / 编辑",
        "compacting": "正在压缩 {n} 条消息…",
        "compacting_any": "正在压缩…",
        "cost": "上次压缩：{n} 次请求 · 提示 {prompt} · 输出 {out}",
        "cost_one": "上次压缩：1 次请求 · 提示 {prompt} · 输出 {out}",
        "freed": "腾出 {n} token",
        "size": "摘要 {summary}/{summary_budget} · 细节 {details}/{details_budget}",
        "growth": "第 {n} 次压缩：{growth} token",
    },
)

TIME_FORMAT = "%Y-%m-%d %H:%M"


class SummaryPanel(Widget):
    DEFAULT_CSS = """
    SummaryPanel {
        width: 100%;
        height: auto;
    }
    SummaryPanel Collapsible > Contents {
        padding: 0 1 0 1;
    }
    SummaryPanel #summary-scroll {
        height: auto;
        max-height: 12;
        scrollbar-size-vertical: 1;
    }
    SummaryPanel #summary-text.-empty, SummaryPanel #summary-meta, SummaryPanel #summary-hint,
    SummaryPanel #summary-size {
        color: $text-muted;
    }
    SummaryPanel #summary-cost {
        color: $text-muted;
    }
    SummaryPanel #summary-progress {
        color: $accent;
        display: none;
    }
    SummaryPanel.-compacting #summary-progress {
        display: block;
    }
    SummaryPanel.-empty #summary-meta, SummaryPanel.-empty #summary-hint,
    SummaryPanel.-empty #summary-size {
        display: none;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._summary: Summary | None = None
        self._summary_size: SummarySize | None = None
        self._compacting: int | None = None
        self._cost: CompactionCost | None = None
        self._price: Price | None = None
        self._frame = 0
        self._timer: Timer | None = None
        self.add_class("-empty")

    def compose(self) -> ComposeResult:
        with Collapsible(title=self._t("title"), collapsed=False, id="summary-collapsible"):
            yield Static(id="summary-progress", markup=False)
            with VerticalScroll(id="summary-scroll"):
                yield Static(id="summary-text", markup=False)
            yield Static(id="summary-size", markup=False)
            yield Static(id="summary-meta", markup=False)
            yield Static(id="summary-cost", markup=False)
            yield Static(self._t("hint"), id="summary-hint", markup=False)

    def on_mount(self) -> None:
        self._show()

    # -- public API ---------------------------------------------------------------------------

    @property
    def summary(self) -> Summary | None:
        return self._summary

    @property
    def compacting(self) -> bool:
        return self._compacting is not None

    def show_summary(self, summary: Summary | None, size: SummarySize | None = None) -> None:
        """The summary, and `size`: its tokens and its ledger's against their budgets, and what
        the newest compaction added (None: not shown)."""
        self._summary, self._summary_size = summary, size if summary is not None else None
        self.set_class(summary is None, "-empty")
        if self.is_mounted:
            self._show()

    def show_compaction(self, cost: CompactionCost | None, price: Price | None = None) -> None:
        """What the last compaction cost and freed (None: no compaction has counts), with its
        money when `price` prices its model."""
        self._cost, self._price = cost, price
        if self.is_mounted:
            self._show()

    @property
    def cost_text(self) -> str:
        return self._cost_text()

    def set_compacting(self, active: bool, messages: int = 0) -> None:
        self._compacting = max(0, messages) if active else None
        self.set_class(active, "-compacting")
        if active and self._timer is None:
            self._timer = self.set_interval(SPINNER_INTERVAL, self._spin)
        elif not active and self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.is_mounted:
            self._show_progress()

    # -- rendering ----------------------------------------------------------------------------

    def _t(self, key: str, **values: object) -> str:
        return SUMMARY_TEXTS(ui_language(self.app), key, **values)

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self._show_progress()

    def _show_progress(self) -> None:
        if not self.query("#summary-progress"):
            return
        n = self._compacting
        text = "" if n is None else (
            self._t("compacting", n=f"{n:,}") if n else self._t("compacting_any"))
        self.query_one("#summary-progress", Static).update(
            Content(f"{SPINNER[self._frame]} {text}" if text else ""))

    def _show(self) -> None:
        s = self._summary
        found = self.query("#summary-text")
        if not found:
            # Mounted, but the Collapsible's contents not yet (a recompose): on_mount comes back.
            self.call_after_refresh(self._show)
            return
        body = found.first(Static)
        body.set_class(s is None, "-empty")
        # Content(...) is plain text: a summary that looks like markup is shown as written.
        body.update(Content(self._t("empty") if s is None else s.content))
        self.query_one("#summary-meta", Static).update(Content("" if s is None else self._meta(s)))
        self.query_one("#summary-size", Static).update(Content(self.size_text))
        cost = self._cost_text()
        box = self.query_one("#summary-cost", Static)
        box.update(Content(cost))
        box.display = bool(cost)
        self._show_progress()

    def _cost_text(self) -> str:
        c = self._cost
        if c is None or c.requests <= 0:
            return ""
        key = "cost_one" if c.requests == 1 else "cost"
        parts = [self._t(key, n=f"{c.requests:,}", prompt=costs.tokens(c.prompt_tokens),
                         out=costs.tokens(c.completion_tokens))]
        if c.freed_tokens is not None:
            parts.append(self._t("freed", n=costs.tokens(c.freed_tokens)))
        if self._price is not None:
            parts.append(costs.money(costs.cost(self._price, c.prompt_tokens,
                                                c.completion_tokens, c.cached_tokens,
                                                c.cache_write_tokens), self._price.currency))
        return " · ".join(parts)

    @property
    def size_text(self) -> str:
        z = self._summary_size
        if z is None:
            return ""
        lines = [self._t("size", summary=f"{z.summary:,}", summary_budget=f"{z.summary_budget:,}",
                         details=f"{z.details:,}", details_budget=f"{z.details_budget:,}")]
        if z.compactions and z.growth is not None:
            lines.append(self._t("growth", n=f"{z.compactions:,}", growth=f"{z.growth:+,}"))
        return "\n".join(lines)

    def _meta(self, s: Summary) -> str:
        covers = (self._t("covers_one") if s.covered_count == 1
                  else self._t("covers", n=f"{s.covered_count:,}"))
        when = datetime.fromtimestamp(s.created_at).strftime(TIME_FORMAT)
        how = self._t(s.kind) if s.kind in ("auto", "manual", "edited") else s.kind
        lines = [covers, when, how]  # one per line: "covers … · date" overflows a 34-cell sidebar
        if s.focus:
            lines.append(self._t("focus") + s.focus)
        return "\n".join(lines)
