"""Tool calls and their results in the conversation.

A tool message keeps the one-view-per-record model of the message window (paging, pruning,
dimming work on it unchanged): its view holds one `ToolBlock`, a Collapsible titled with the
server, the tool and its arguments, holding the arguments whole and the output; under it one
line says how it went and how large the output is. While the call waits for approval or runs,
the block stands in for a result that is not stored yet and the line is a spinner.

Everything shown here comes from the model or a tool server: it is cleaned of terminal
sequences and drawn as text (Content / markup=False), never as markup.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Collapsible, Static

from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.calls.tool_args import arguments_or_none
from jarvis_tui.core.messages import FAILED, PARTIAL, Message
from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.core.tools.history_tool import is_history_search
from jarvis_tui.core.tools.results import CANCELLED, ERROR_PREFIX, INTERRUPTED, is_error_result
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.texts.notices import builtin_line
from jarvis_tui.ui.languages import ui_language

# A result longer than this many lines starts collapsed; a short one is read at a glance.
COLLAPSE_LINES = 12
TITLE_ARGS = 60  # characters of the arguments in the title
# Drawing a huge output costs a layout of it all; the rest stays in the store and in /export.
SHOWN_CHARS = 40_000
SHOWN_LINES = 400
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

# The engine's words for a refused call: a stored result keeps no outcome of its own.
DENIED = ("the user did not allow this call of ", "is not allowed to run without asking")

TOOL_BLOCK_TEXTS = Texts(
    en={
        "calls": "⚙ asks for {names}",
        "size": "{chars} characters · {tokens} tokens",
        "seconds": "{s:.1f}s",
        "ok": "✓",
        "error": "✗ error",
        "denied": "⊘ denied",
        "unknown": "✗ no such tool",
        "bad_arguments": "✗ bad arguments",
        "cancelled": "■ cancelled",
        "approval": "⏸ waiting for your approval",
        "running": "running {name}… {s}s · Esc stops it",
        "stub": "sent as a stub",
        "more": "… {n} more characters not shown here (stored whole; /export writes them)",
        "arguments": "arguments",
        "output": "output",
        "no_output": "(no output)",
    },
    zh={
        "calls": "⚙ 调用 {names}",
        "size": "{chars} 个字符 · {tokens} token",
        "seconds": "{s:.1f} 秒",
        "error": "✗ 出错",
        "denied": "⊘ 已拒绝",
        "unknown": "✗ 没有这个工具",
        "bad_arguments": "✗ 参数有误",
        "cancelled": "■ 已取消",
        "approval": "⏸ 等待你的批准",
        "running": "正在运行 {name}… {s} 秒 · 按 Esc 停止",
        "stub": "已以摘要行发送",
        "more": "… 还有 {n} 个字符未在此显示（已完整保存；/export 可导出）",
        "arguments": "参数",
        "output": "输出",
        "no_output": "（无输出）",
    },
)


@dataclass
class ToolInfo:
    """What a tool view shows beyond its message: the call (its arguments live in the
    assistant message before it), the server, and how the call went (live: from the engine's
    events; stored: from the message's status)."""

    call: ToolCall | None = None
    server: str = ""
    state: str = "done"  # "approval", "running" or "done"
    outcome: str = ""
    seconds: float | None = None
    started: float = 0.0  # monotonic, while running


def one_line(arguments: str, limit: int = TITLE_ARGS) -> str:
    """The arguments as compact JSON on one line, cut with … past `limit` characters."""
    parsed = arguments_or_none(arguments or "{}")
    text = arguments if parsed is None else json.dumps(parsed, ensure_ascii=False)
    text = " ".join(visible(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def pretty(arguments: str) -> str:
    """The arguments whole, indented; as written when they are not a JSON object (or are
    JSON Python will not read)."""
    parsed = arguments_or_none(arguments or "{}")
    return visible(arguments if parsed is None else
                   json.dumps(parsed, ensure_ascii=False, indent=2))


def stored_outcome(message: Message) -> str:
    """How a stored call went, as far as the record says (a live one knows exactly): the
    engine stores every failure as "Error: why", for the model to read."""
    text = message.content
    if message.status in (FAILED, PARTIAL) or text in (f"{ERROR_PREFIX}{CANCELLED}",
                                                        f"{ERROR_PREFIX}{INTERRUPTED}"):
        return "cancelled"
    if not is_error_result(message):
        return "ok"
    return "denied" if any(words in text for words in DENIED) else "error"


def find_call(records: list[Message], index: int) -> ToolCall | None:
    """The call a tool result answers: in the assistant message a few records before it."""
    wanted = records[index].tool_call_id
    for i in range(index - 1, -1, -1):
        msg = records[i]
        if msg.role == "assistant" and msg.tool_calls:
            for raw in msg.tool_calls:
                if raw.get("id") == wanted:
                    return ToolCall.from_wire(raw)
        if msg.role == "user":
            break
    return None


def calls_line(message: Message, lang: str) -> str:
    names = [ToolCall.from_wire(c).name for c in message.tool_calls or ()]
    return TOOL_BLOCK_TEXTS(lang, "calls", names=visible(", ".join(names)))


class ToolBlock(Vertical):
    DEFAULT_CSS = """
    ToolBlock { height: auto; }
    ToolBlock Collapsible { padding: 0; border-top: none; background: transparent; }
    ToolBlock Collapsible > Contents { padding: 0 0 0 2; }
    ToolBlock .args { color: $text-muted; }
    ToolBlock .output { height: auto; }
    ToolBlock .more { color: $text-muted; text-style: italic; }
    ToolBlock .status { color: $text-muted; height: 1; padding: 0 0 0 2; }
    ToolBlock.-error .status { color: $error; }
    ToolBlock.-denied .status, ToolBlock.-cancelled .status { color: $warning; }
    ToolBlock.-running .status, ToolBlock.-approval .status { color: $accent; }
    """

    def __init__(self, message: Message, info: ToolInfo, tokens: int | None = None) -> None:
        super().__init__()
        self.message = message
        self.info = info
        self.tokens = tokens
        self.stubbed = False
        self._timer: Timer | None = None

    @property
    def lang(self) -> str:
        return ui_language(self.app)

    @property
    def is_builtin(self) -> bool:
        """A call of a built-in tool: one line, "↺ searched earlier turns: …", "📎 read …"."""
        if self.info.call is not None:
            return builtin_line(self.info.call, self.lang) is not None
        return is_history_search(self.message.name or "")

    def title(self) -> Content:
        info, msg = self.info, self.message
        if info.call is not None and (line := builtin_line(info.call, self.lang)) is not None:
            return Content(visible(line))
        name = info.call.name if info.call is not None else (msg.name or "?")
        where = f"{info.server} · {name}" if info.server else name
        args = one_line(info.call.arguments) if info.call is not None else ""
        return Content(visible(f"⚙ {where}  {args}".rstrip()))

    def compose(self) -> ComposeResult:
        output = visible(self.message.content)
        lines = output.count("\n") + 1
        collapsed = (self.info.state != "done" or lines > COLLAPSE_LINES
                     or self.is_builtin)  # what it found is the model's to read
        with Collapsible(title=self.title(), collapsed=collapsed):  # type: ignore[arg-type]
            if self.info.call is not None:
                yield Static(pretty(self.info.call.arguments), markup=False, classes="args")
            if self.info.state == "done":
                yield from self._output(output)
        # Written now, not first on mount: a settled message is drawn once, from what it
        # composed.
        yield Static(self.status_text(), markup=False, classes="status")

    def _output(self, output: str) -> ComposeResult:
        if not output:
            yield Static(TOOL_BLOCK_TEXTS(self.lang, "no_output"), markup=False, classes="more")
            return
        shown = output[:SHOWN_CHARS]
        cut = shown.split("\n")
        if len(cut) > SHOWN_LINES:
            shown = "\n".join(cut[:SHOWN_LINES])
        yield Static(shown, markup=False, classes="output")
        if len(shown) < len(output):
            yield Static(TOOL_BLOCK_TEXTS(self.lang, "more", n=f"{len(output) - len(shown):,}"),
                         markup=False,
                         classes="more")

    def on_mount(self) -> None:
        self._restate()

    def on_unmount(self) -> None:
        self._stop_timer()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _restate(self) -> None:
        state = self.info.state
        for name in ("approval", "running", "error", "denied", "cancelled"):
            self.set_class(name in (state, self._outcome_class()), f"-{name}")
        # A search that went well is its title alone; one that failed says how.
        quiet = self.is_builtin and state == "done" and self.info.outcome in ("", "ok")
        if (status := self._status()) is not None:
            status.display = not quiet
        if state == "running" and self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        elif state != "running":
            self._stop_timer()
        self._tick()

    def _outcome_class(self) -> str:
        outcome = self.info.outcome
        if outcome in ("unknown", "bad_arguments"):
            return "error"
        return outcome

    def status_text(self) -> str:
        info, lang = self.info, self.lang
        if info.state == "approval":
            return TOOL_BLOCK_TEXTS(lang, "approval")
        if info.state == "running":
            seconds = int(time.monotonic() - info.started)
            frame = SPINNER[int(time.monotonic() * 10) % len(SPINNER)]
            name = info.call.name if info.call is not None else (self.message.name or "")
            return f"{frame} " + TOOL_BLOCK_TEXTS(lang, "running", name=visible(name), s=seconds)
        tokens = "?" if self.tokens is None else f"{self.tokens:,}"
        parts = [TOOL_BLOCK_TEXTS(lang, "size", chars=f"{len(self.message.content):,}",
                                  tokens=tokens)]
        if info.seconds is not None:
            parts.append(TOOL_BLOCK_TEXTS(lang, "seconds", s=info.seconds))
        if self.stubbed:
            parts.append(TOOL_BLOCK_TEXTS(lang, "stub"))
        outcome = info.outcome or "ok"
        # "✓ 21 characters …", but "⊘ denied · 17 characters …"
        return TOOL_BLOCK_TEXTS(lang,
                                outcome) + (" " if outcome == "ok" else " · ") + " · ".join(parts)

    def _status(self) -> Static | None:
        # None when the app quits as the block mounts: its children are never mounted then.
        return next(iter(self.query(".status").results(Static)), None)

    def _tick(self) -> None:
        if self.is_mounted and (status := self._status()) is not None:
            status.update(self.status_text())

    def set_stubbed(self, stubbed: bool) -> None:
        if stubbed != self.stubbed:
            self.stubbed = stubbed
            self._tick()

    async def set_state(self, state: str) -> None:
        """The live call moved on: waiting for approval → running."""
        if state == "running":
            self.info.started = time.monotonic()
        self.info.state = state
        self._restate()

    async def finish(self, result: Message, outcome: str, seconds: float | None,
                     tokens: int | None) -> None:
        """The call ended: show its stored result."""
        self._stop_timer()
        self.message, self.tokens = result, tokens
        self.info.state, self.info.outcome, self.info.seconds = "done", outcome, seconds
        await self.recompose()
        self._restate()


def count_tokens(app: object, text: str) -> int | None:
    """`text` counted as the gauge counts it; None where no session is open (a bare widget)."""
    try:
        return app.session.tokens(text)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a count is a nicety, never a reason to fail a view
        return None


def server_of(app: object, name: str) -> str:
    """The server offering tool `name` now ("" when unknown: no servers, or it went away)."""
    lookup = getattr(app, "tool_server", None)
    return lookup(name) if callable(lookup) else ""
