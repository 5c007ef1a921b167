"""The token-budget gauge in the sidebar: how full the request is, what fills it, where compaction
starts. Updated on every (debounced) keystroke and every streamed chunk, so an update only builds
one small Content; nothing is mounted."""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget

from jarvis_tui.core import costs
from jarvis_tui.core.budget import BudgetUsage
from jarvis_tui.core.costs import Counts, Price, Tally
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_INTERVAL = 0.1
NEAR = 0.85  # "near" starts at this fraction of the compaction threshold
MARKER = "▼"
FREE_GLYPH = "░"
FALLBACK_WIDTH = 32  # before the first layout the widget has no size yet
LEVEL_STYLES = {"ok": "$success", "near": "$warning", "over": "$error"}
MUTED = "$foreground-muted"
# The themes have no hue to spare (blue, teal, and the levels green, yellow, red): the tools
# segment is checkered in the plain text colour.
TOOLS_STYLE = "$foreground"

GAUGE_TEXTS = Texts(
    en={
        "title": "Token budget",
        "empty": "Nothing counted yet.",
        "used": "{used} / {budget} tokens",
        "system": "system over reserve",
        "memory": "memory",
        "summary": "summary",
        "recalled": "recalled",
        "history": "history",
        "tools": "tools",
        "reply": "reply",
        "files": "attached files",
        "typing": "typing",
        "free": "free",
        "window": "context window",
        "response_reserve": "response reserve",
        "system_reserve": "system reserve",
        "compacts_at": "compacts at {pct}% ({tokens} tokens)",
        "over_budget": "Over budget by {n} tokens: the oldest messages will be left out "
                       "of the request.",
        "compacting": "Compacting {n} messages…",
        "compacting_any": "Compacting…",
        "estimated": "≈ estimated",
        "calibrated": "calibrated from the server",
        "exact": "exact (tokenizer)",
        "ws_configured": "window: as configured",
        "ws_detected from the server": "window: reported by the server",
        "ws_learned from the server": "window: learned from an error",
        "ws_known model": "window: known for this model",
        "ws_default": "⚠ limit unknown: {n} assumed (F3)",
        "cost_last": "Last turn: prompt {prompt}{cached} · out {out}",
        "cost_session": "Session: {n} requests · prompt {prompt}{cached} · out {out}",
        "cost_session_one": "Session: 1 request · prompt {prompt}{cached} · out {out}",
        "cached": " ({n} cached, {share})",
        "cache_unknown": "cache: not reported",
        "cache_some": "cache: reported by {n} of {of}",
        "no_usage": "Last turn: the server reported no token counts",
        "partly_priced": "(some models have no price)",
    },
    zh={
        "title": "Token 预算",
        "empty": "尚未计数。",
        "used": "{used} / {budget} token",
        "system": "系统提示超出预留",
        "memory": "记忆",
        "summary": "摘要",
        "recalled": "找回",
        "history": "历史",
        "tools": "工具",
        "reply": "回复",
        "files": "附件",
        "typing": "输入中",
        "free": "剩余",
        "window": "上下文窗口",
        "response_reserve": "回复预留",
        "system_reserve": "系统预留",
        "compacts_at": "达到 {pct}% 时压缩（{tokens} token）",
        "over_budget": "超出预算 {n} token：最早的消息将不会随请求发送。",
        "compacting": "正在压缩 {n} 条消息…",
        "compacting_any": "正在压缩…",
        "estimated": "≈ 估算",
        "calibrated": "已根据服务器校准",
        "exact": "精确（分词器）",
        "ws_configured": "窗口：按设置",
        "ws_detected from the server": "窗口：服务器报告",
        "ws_learned from the server": "窗口：从报错中得知",
        "ws_known model": "窗口：已知模型",
        "ws_default": "⚠ 上限未知：暂按 {n}（F3 设置）",
        "cost_last": "上一轮：提示 {prompt}{cached} · 输出 {out}",
        "cost_session": "本会话：{n} 次请求 · 提示 {prompt}{cached} · 输出 {out}",
        "cost_session_one": "本会话：1 次请求 · 提示 {prompt}{cached} · 输出 {out}",
        "cached": "（缓存 {n}，{share}）",
        "cache_unknown": "缓存：服务器未报告",
        "cache_some": "缓存：{of} 次中 {n} 次有报告",
        "no_usage": "上一轮：服务器未报告 token 数",
        "partly_priced": "（部分模型未设价格）",
    },
)


def level_for(used: int, threshold: int) -> str:
    if used > threshold:
        return "over"
    return "near" if used >= threshold * NEAR else "ok"


def marker_column(threshold: int, budget: int, width: int) -> int:
    """Column of the threshold marker inside a bar of `width` cells that spans the budget."""
    if budget <= 0 or width <= 0:
        return 0
    return max(0, min(width - 1, threshold * width // budget))


def split_cells(sizes: list[int], width: int) -> list[int]:
    """Cells per segment; cumulative rounding so the cells always add up to exactly `width`."""
    total = sum(sizes)
    if total <= 0:
        return [0] * len(sizes)
    cells, cum, edge = [], 0, 0
    for size in sizes:
        cum += size
        end = round(cum * width / total)
        cells.append(end - edge)
        edge = end
    return cells


Part = str | tuple[str, str]  # plain text, or (text, style) with theme variables in the style


def wrap_cells(text: str, width: int, seps: tuple[str, ...] = (" · ", " ", "")) -> list[str]:
    """`text` in lines of at most `width` cells, broken after a separator where it can be, else
    at a space, else anywhere (CJK has no spaces to break at): a piece too long for a line is
    broken at the next separator down."""
    width = max(1, width)
    sep, finer = seps[0], seps[1:]
    out: list[str] = []
    line = ""
    for piece in text.split(sep) if sep else list(text):
        joined = f"{line}{sep}{piece}" if line else piece
        if cell_len(joined) <= width:
            line = joined
            continue
        if line:
            out.append(line)
        if cell_len(piece) <= width or not finer:
            line = piece
        else:
            *lines, line = wrap_cells(piece, width, finer)
            out.extend(lines)
    return [*out, line] if line or not out else out


def _row(width: int, left: list[Part], right: str, right_style: str = "") -> list[Part]:
    """`left` and `right` on one line, right-aligned; a single space apart if they do not fit."""
    used = sum(cell_len(p if isinstance(p, str) else p[0]) for p in left) + cell_len(right)
    return [*left, " " * max(1, width - used), (right, right_style)]


class TokenGauge(Widget):
    """Budget gauge. CSS classes -ok / -near / -over follow `level`; -empty before any usage."""

    DEFAULT_CSS = """
    TokenGauge {
        width: 100%;
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._usage: BudgetUsage | None = None
        self._reply = 0
        self._compacting: int | None = None  # message count while a compaction runs
        self._frame = 0
        self._timer: Timer | None = None
        self._content: Content | None = None
        self._built_width = -1
        self._shape: tuple[object, ...] = ()
        self._last: Counts | None = None
        self._last_known = False  # a round answered, so "no counts" is worth saying
        self._price: Price | None = None
        self._session: Tally | None = None
        self.add_class("-empty")

    # -- public API ---------------------------------------------------------------------------

    @property
    def usage(self) -> BudgetUsage | None:
        return self._usage

    @property
    def used(self) -> int:
        return (self._usage.used if self._usage else 0) + self._reply

    @property
    def level(self) -> str:
        """Level "ok", "near" or "over"; "ok" before the first update (see the -empty class)."""
        return level_for(self.used, self._usage.threshold) if self._usage else "ok"

    def update_usage(self, usage: BudgetUsage, reply_tokens: int = 0) -> None:
        self._usage = usage
        self._reply = max(0, reply_tokens)
        level = self.level
        for name in ("ok", "near", "over"):
            self.set_class(name == level, f"-{name}")
        self.remove_class("-empty")
        self._rebuild()

    def set_compacting(self, active: bool, messages: int = 0) -> None:
        self._compacting = max(0, messages) if active else None
        if active and self._timer is None:
            self._timer = self.set_interval(SPINNER_INTERVAL, self._spin)
        elif not active and self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._rebuild()

    @property
    def compacting(self) -> bool:
        return self._compacting is not None

    def update_cost(self, last: Counts | None, session: Tally | None,
                    price: Price | None = None, *, answered: bool = False) -> None:
        """The cost lines: the last request's counts (`answered`: a round finished, so no
        counts means the server gave none) and the session's totals; money when `price`
        prices the chat model (the session's own sums are priced model by model)."""
        self._last, self._session, self._price = last, session, price
        self._last_known = answered or last is not None
        self._content = None
        self.refresh(layout=True)  # the lines wrap to a count of their own

    def cost_lines(self, width: int | None = None) -> list[str]:
        """The cost lines as drawn, wrapped to `width` cells (the widget's own by default)."""
        width = self._width() if width is None else width
        return [line for text in self.cost_texts() for line in wrap_cells(text, width)]

    # -- rendering ----------------------------------------------------------------------------

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self._rebuild()

    def _width(self) -> int:
        return self.size.width or FALLBACK_WIDTH

    def _rebuild(self) -> None:
        # Lazy: a burst of updates between two frames builds the Content once, in render().
        self._content = None
        u = self._usage
        over = self.used - u.budget if u is not None else 0
        shape = (u is None, bool(u and u.system_overflow), len(f"{over:,}") if over > 0 else 0,
                 self._compacting is not None)
        # Layout is costly across the sidebar; only ask for it when the line count can change.
        self.refresh(layout=shape != self._shape)
        self._shape = shape

    def render(self) -> Content:
        width = self._width()
        if self._content is None or width != self._built_width:
            self._content = self._build(width)
            self._built_width = width
        return self._content

    def _t(self, key: str, **values: object) -> str:
        return GAUGE_TEXTS(ui_language(self.app), key, **values)

    def _build(self, width: int) -> Content:
        lines: list[list[Part]] = [[(self._t("title"), "bold")]]
        u = self._usage
        if u is None:
            lines += [[(self._t("empty"), MUTED)], [(FREE_GLYPH * width, MUTED)]]
        else:
            lines += self._gauge(u, width)
        if self._compacting is not None:
            text = (self._t("compacting", n=f"{self._compacting:,}") if self._compacting
                    else self._t("compacting_any"))
            lines.append([(SPINNER[self._frame], "$accent"), " ", text])
        lines += [[line] for line in self.cost_lines(width)]
        parts: list[Part] = []
        for line in lines:
            parts += line
            parts.append("\n")
        return Content.assemble(*parts[:-1])

    def cost_texts(self) -> list[str]:
        """The cost lines as written, before they wrap: the last turn's, the session's."""
        texts = []
        last, session = self._last, self._session
        if last is not None:
            line = self._t("cost_last", prompt=costs.tokens(last.prompt_tokens),
                           cached=self._cached(last.cached_tokens, last.prompt_tokens),
                           out=costs.tokens(last.completion_tokens))
            if last.cached_tokens is None:
                line += " · " + self._t("cache_unknown")
            if self._price is not None:
                line += " · " + costs.money(costs.cost(
                    self._price, last.prompt_tokens, last.completion_tokens,
                    last.cached_tokens, last.cache_write_tokens), self._price.currency)
            texts.append(line)
        elif self._last_known:
            texts.append(self._t("no_usage"))
        if session is not None and session.requests:
            key = "cost_session_one" if session.requests == 1 else "cost_session"
            share = session.cached_share
            cached = "" if session.cached_tokens is None or share is None else self._t(
                "cached", n=costs.tokens(session.cached_tokens), share=costs.share(share))
            line = self._t(key, n=f"{session.requests:,}", prompt=costs.tokens(
                session.prompt_tokens), cached=cached,
                out=costs.tokens(session.completion_tokens))
            if session.reported_requests == 0:
                line += " · " + self._t("cache_unknown")
            elif session.reported_requests < session.requests:
                line += " · " + self._t("cache_some", n=f"{session.reported_requests:,}",
                                        of=f"{session.requests:,}")
            if session.money:
                line += " · " + costs.moneys(session.money)
                if session.unpriced:
                    line += " " + self._t("partly_priced")
            texts.append(line)
        return texts

    def _cached(self, cached: int | None, prompt: int) -> str:
        if cached is None:
            return ""
        part = cached / prompt if prompt > 0 else 0.0
        return self._t("cached", n=costs.tokens(cached), share=costs.share(part))

    def _gauge(self, u: BudgetUsage, width: int) -> list[list[Part]]:
        level_style = LEVEL_STYLES[self.level]
        used = self.used
        pct = round(used * 100 / u.budget) if u.budget > 0 else 100
        free = max(0, u.budget - used)
        # Tool calls and results are part of the history as sent: drawn apart, not on top.
        tools = max(0, min(u.tools, u.history))
        attached = max(0, min(u.attached, u.pending))  # files waiting, inside what is typed
        # (key, tokens, glyph, style); system overflow, memory, recalled turns and tools only
        # appear when there are some.
        segments = [
            ("system", u.system_overflow, "█", "$error"),
            ("memory", u.memory, "▓", "$primary"),
            ("summary", u.summary, "▓", "$secondary"),
            ("recalled", u.recalled, "▓", "$accent"),
            ("history", u.history - tools, "█", level_style),
            ("tools", tools, "▚", TOOLS_STYLE),
            ("reply", self._reply, "▒", "$accent"),
            ("files", attached, "▤", "$warning"),
            ("typing", u.pending - attached, "▒", "$primary"),
            ("free", free, FREE_GLYPH, MUTED),
        ]
        segments = [s for s in segments if s[1] or s[0] not in ("system", "memory", "recalled",
                                                                  "tools", "files")]
        cells = split_cells([s[1] for s in segments], width)
        bar: list[Part] = [(glyph * n, style)
                           for (_, _, glyph, style), n in zip(segments, cells, strict=True) if n]
        drawn = sum(cells)
        if drawn < width:  # an empty budget: nothing to draw but the track
            bar.append((FREE_GLYPH * (width - drawn), MUTED))
        col = marker_column(u.threshold, u.budget, width)
        lines = [
            _row(width, [self._t("used", used=f"{used:,}", budget=f"{u.budget:,}")],
                 f"{pct}%", f"bold {level_style}"),
            [" " * col, (MARKER, level_style)],
            bar,
        ]
        for key, tokens, glyph, style in segments:
            lines.append(_row(width, [(glyph, style), " ", self._t(key)], f"{tokens:,}"))
        if used > u.budget:
            lines.append([(self._t("over_budget", n=f"{used - u.budget:,}"), "$error")])
        for key, tokens in (("window", u.context_window),
                            ("response_reserve", u.response_reserve),
                            ("system_reserve", u.system_reserve)):
            lines.append(_row(width, [(self._t(key), MUTED)], f"{tokens:,}", MUTED))
        key = f"ws_{u.window_source}"
        if u.window_source == "default":
            lines.append([(self._t(key, n=f"{u.context_window:,}"), "$warning")])
        elif key in GAUGE_TEXTS.tables["en"]:
            lines.append([(self._t(key), MUTED)])
        else:
            lines.append([(u.window_source, MUTED)])
        threshold_pct = round(u.threshold * 100 / u.budget) if u.budget > 0 else 0
        lines.append([self._t("compacts_at", pct=threshold_pct, tokens=f"{u.threshold:,}")])
        source = self._t(u.source) if u.source in ("estimated", "calibrated", "exact") else u.source
        lines.append([(source, MUTED)])
        return lines
