"""One message in the conversation: a label line and the text. Replies are Markdown, streamed
through Markdown.get_stream so a long reply is never re-rendered whole for every chunk. A message
past huge_text.CUT_AT characters is shown cut: its head, a line saying what is not shown and how
to read it (V), and its end."""

from __future__ import annotations

import asyncio
import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from jarvis_tui.core.messages import FAILED, PARTIAL, Message
from jarvis_tui.core.next_request import CUT, LEFT_OUT, RECALLED, STUBBED
from jarvis_tui.core.safety.textsafe import SafeStream, terminal_safe
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui import full_gc
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.widgets import huge_text, settled
from jarvis_tui.ui.widgets.attached_line import user_body, working_folder
from jarvis_tui.ui.widgets.picture import picture
from jarvis_tui.ui.widgets.tool_block import (
    ToolBlock,
    ToolInfo,
    calls_line,
    count_tokens,
    server_of,
    stored_outcome,
)

MESSAGE_TEXTS = Texts(
    en={"user": "You", "assistant": "Jarvis", "tool": "Tool", "system": "System",
        "streaming": "writing…", "partial": "partial: stopped or cut off",
        "failed": "not answered", "pinned": "📌 pinned", "covered": "in the summary",
        "excluded": "excluded", "empty": "(empty reply)",
        "link": "Link (not opened, copied to the clipboard): {href}",
        "req_cut": "✂ sent cut", "req_recalled": "↩ recalled",
        "req_left out": "not sent: no room"},
    zh={"user": "你", "assistant": "Jarvis", "tool": "工具", "system": "系统",
        "streaming": "输出中…", "partial": "不完整：已停止或被中断",
        "failed": "未得到回复", "pinned": "📌 已固定", "covered": "已摘要",
        "excluded": "已排除", "empty": "（空回复）",
        "link": "链接（未打开，已复制到剪贴板）：{href}",
        "req_cut": "✂ 截断发送", "req_recalled": "↩ 已召回",
        "req_left out": "未发送：放不下"},
)

# The request states a message's label marks, and the theme variable each is drawn in: a cut or
# a message left out loses the model something; a recalled one is back in full.
MARK_COLOURS = {CUT: "warning", LEFT_OUT: "error", RECALLED: "success"}


# Each batch of text handed to the Markdown widget costs a relayout of the screen (one to three
# passes of 10-40 ms on a 2-core VM, bench/ui/ui.py), and a key typed meanwhile waits for it. Chunks
# arrive up to a few hundred times a second; the document takes what came in at most this often
# (the first chunk at once).
STREAM_FLUSH_S = 0.2
# While the user types, the keys come first: streamed text goes to the document only just after a
# keystroke has been drawn, and at most every TYPING_FLUSH_S, so the relayout falls in a pause
# between keys and few keys ever meet one. Once no key has come for TYPING_IDLE_S, the clock
# takes over again and the reply catches up.
TYPING_FLUSH_S = 2.0
TYPING_IDLE_S = 0.5


class MessageView(Vertical):
    class Flushed(TextualMessage):
        """Streamed text went to the document."""

        def __init__(self, view: MessageView) -> None:
            super().__init__()
            self.view = view

    DEFAULT_CSS = """
    MessageView { height: auto; margin: 0 0 1 0; padding: 0 1; }
    MessageView .label { color: $text-muted; text-style: bold; height: 1; }
    MessageView.-user { border-left: tall $primary; background: $boost; }
    MessageView.-assistant { border-left: tall $accent; }
    MessageView.-user .label { color: $primary; }
    MessageView.-assistant .label { color: $accent; }
    MessageView.-covered { opacity: 55%; }
    MessageView.-excluded { opacity: 40%; }
    MessageView.-tool { border-left: tall $panel; }
    MessageView .calls { color: $text-muted; }
    MessageView .cut { color: $warning; text-style: italic; margin: 1 0; }
    MessageView.-partial { border-left: tall $warning; }
    MessageView.-failed { border-left: tall $error; }
    MessageView Markdown { margin: 0; padding: 0; background: transparent; }
    MessageView .body { height: auto; }
    /* Textual draws fence text in a fixed light grey that vanishes on a light theme. */
    MessageView MarkdownFence { color: $foreground; }
    /* Last, to win over the role's bar; a tint of the accent reads on dark and light themes. */
    MessageView.-selected { border-left: thick $accent; background: $accent 15%; }
    MessageView.-selected .label { text-style: bold reverse; }
    """

    def __init__(self, message: Message, tool: ToolInfo | None = None) -> None:
        super().__init__(classes=f"-{message.role}")
        self.message = message
        self.tool = tool  # a tool result's call and outcome (role "tool" only)
        self._stream: MarkdownStream | None = None
        self._safe = SafeStream()
        self.streaming = False
        self._unsent: list[str] = []  # streamed text the Markdown widget has not been given yet
        # Streamed text not yet in message.content: appending each chunk to it would copy the
        # whole reply per chunk (quadratic); it is joined in once per flush instead.
        self._received: list[str] = []
        self._fed = 0  # characters of the reply the Markdown document was given
        self._cut = False  # the reply passed huge_text.CUT_AT: the rest is not given to it
        self._sent_at = 0.0  # when it was last given some
        self._flush_timer: Timer | None = None
        self._typed_at = -TYPING_IDLE_S  # when the user last typed in the prompt
        self._flush_queued = False  # a flush is on its way (after a frame, or next in the loop)
        # One flush at a time, and the stream stopped only between flushes: a flush waits on
        # mounting drawn lines, and a stop in that gap made its write fail ("Can't write to the
        # stream after it has stopped") and lose its text.
        self._flushing = asyncio.Lock()
        self._holds_gc = False
        self._settles = True  # finished blocks are drawn once (widgets/settled.py)
        self._alternatives = (1, 1)  # (which, of how many) versions of this message

    def compose(self) -> ComposeResult:
        label = Static(self._label_text(), markup=False, classes="label")
        label.display = self._label_shown()
        yield label
        if self.message.role == "tool":
            yield self._tool_block()  # its output is shown cut already (tool_block.py)
            return
        if self.message.role == "user" and self.message.attachments:
            yield from self._with_files()
            return
        part = huge_text.cut(self.message.content)
        text = terminal_safe(part.head if part is not None else self.message.content)
        if self.message.role == "assistant":
            # A link in a reply can hide where it goes: a click shows and copies the address
            # instead of opening it.
            yield Markdown(text, classes="body", open_links=False)
        else:
            # What the user typed is shown exactly as typed: not Markdown, not markup.
            yield Static(text, markup=False, classes="body")
        if part is not None:
            self._fed, self._cut = len(part.head), True
            yield from self._cut_widgets(part)
        if self.message.role == "assistant" and self.message.tool_calls:
            yield Static(calls_line(self.message, ui_language(self.app)), markup=False,
                         classes="calls")

    def _with_files(self) -> ComposeResult:
        """A user's message carrying files: a line for each file, then the words typed; cut,
        as any message, when the words alone are huge."""
        lang = ui_language(self.app) if self.is_attached else "en"
        body = user_body(self.message, lang, working_folder())
        for att in self.message.attachments:  # the images as sent, before the words
            if att.kind == "image" and att.body and (shown := picture(att.body)) is not None:
                yield Static(shown, classes="picture")
        part = huge_text.cut(body.plain)
        if part is None:
            yield Static(body, classes="body")
            return
        yield Static(body[:len(part.head)], classes="body")
        yield Static(huge_text.marker(lang, part), markup=False, classes="cut")
        yield Static(body[len(body.plain) - len(part.tail):], classes="tail")

    def _cut_widgets(self, part: huge_text.Cut) -> ComposeResult:
        lang = ui_language(self.app) if self.is_attached else "en"
        yield Static(huge_text.marker(lang, part), markup=False, classes="cut")
        yield Static(terminal_safe(part.tail), markup=False, classes="tail")

    @property
    def text(self) -> str:
        """The message's text so far (a streaming reply's, every chunk received)."""
        self._take_received()
        return self.message.content

    def _take_received(self) -> None:
        if self._received:
            self.message.content += "".join(self._received)
            self._received.clear()

    def _tool_block(self) -> ToolBlock:
        msg = self.message
        info = self.tool or ToolInfo(outcome=stored_outcome(msg))
        if not info.server:
            info.server = server_of(self.app, info.call.name if info.call else msg.name or "")
        self.tool = info
        tokens = count_tokens(self.app, msg.content) if info.state == "done" else None
        block = ToolBlock(msg, info, tokens)
        block.stubbed = msg.id in getattr(self.parent, "stubbed", ())  # paged back in
        return block

    @property
    def tool_block(self) -> ToolBlock | None:
        blocks = self.query_children(ToolBlock)
        return blocks.first() if blocks else None

    def _label_shown(self) -> bool:
        # A tool result's block names the tool; the label says only what it adds.
        msg = self.message
        return (msg.role != "tool" or msg.pinned or msg.covered or msg.excluded
                or self._alternatives[1] > 1 or self._request_state() is not None)

    def set_alternatives(self, index: int, count: int) -> None:
        """This message is version `index` (from 1) of `count` (a regenerated reply, an edited
        question): the label shows "‹ 2/3 ›" when there is more than one."""
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"alternative {index} of {count}")
        self._alternatives = (index, count)
        self.refresh_state()

    def on_mount(self) -> None:
        self.refresh_state()

    def _label_text(self) -> Text:
        lang = ui_language(self.app) if self.is_attached else "en"
        msg = self.message
        parts = [MESSAGE_TEXTS(lang, msg.role) if msg.role in ("user", "assistant", "tool",
                                                               "system")
                 else msg.role]
        if self.streaming:
            parts.append(MESSAGE_TEXTS(lang, "streaming"))
        elif msg.status == PARTIAL:
            parts.append(MESSAGE_TEXTS(lang, "partial"))
        elif msg.status == FAILED:
            parts.append(MESSAGE_TEXTS(lang, "failed"))
        elif msg.role == "assistant" and not msg.content.strip() and not msg.tool_calls:
            parts.append(MESSAGE_TEXTS(lang, "empty"))
        if msg.pinned:
            parts.append(MESSAGE_TEXTS(lang, "pinned"))
        if msg.covered:
            parts.append(MESSAGE_TEXTS(lang, "covered"))
        if msg.excluded:
            parts.append(MESSAGE_TEXTS(lang, "excluded"))
        index, count = self._alternatives
        if count > 1:
            parts.append(f"‹ {index}/{count} ›")
        label = Text(" · ".join(parts))
        if (state := self._request_state()) is not None:
            colour = self.app.theme_variables.get(MARK_COLOURS[state]) if self.is_attached else None
            label.append(" · ")
            label.append(MESSAGE_TEXTS(lang, f"req_{state}"), style=colour or "")
        return label

    def _request_state(self) -> str | None:
        """What the next request does with this message, when the label does not say it yet:
        verbatim says nothing, and "pinned", "in the summary", "excluded", "not answered" and
        a tool block's "stubbed" are said already."""
        msg = self.message
        state = getattr(self.parent, "request_states", {}).get(msg.id)
        if state == LEFT_OUT and msg.status == FAILED:
            return None
        return state if state in MARK_COLOURS else None

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.app.copy_to_clipboard(event.href)
        self.app.notify(MESSAGE_TEXTS(ui_language(self.app), "link",
                                      href=terminal_safe(event.href)),
                        markup=False)

    def refresh_state(self) -> None:
        """Re-read status, pinned, covered and excluded from the message record."""
        msg = self.message
        self.set_class(msg.covered, "-covered")
        self.set_class(msg.excluded, "-excluded")
        self.set_class(msg.status == PARTIAL and not self.streaming, "-partial")
        self.set_class(msg.status == FAILED, "-failed")
        if self.is_mounted:
            label = self.query_one(".label", Static)
            label.update(self._label_text())
            label.display = self._label_shown()
            block = self.tool_block
            if block is not None:
                states = getattr(self.parent, "request_states", {})
                block.set_stubbed(msg.id in getattr(self.parent, "stubbed", ())
                                  or states.get(msg.id) == STUBBED)

    # -- streaming ------------------------------------------------------------------------

    @property
    def markdown_stream_open(self) -> bool:
        """Whether the reply still streams into a Markdown widget: bench/ui/ui.py reads it to
        know the reply was drawn whole, so the bench does not lean on the attribute behind it."""
        return self._stream is not None

    def start_stream(self) -> None:
        self.streaming = True
        self._stream = Markdown.get_stream(self.query_one(Markdown))
        # Drawn lines carry the theme's colours and the width they were drawn at.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        if not self._holds_gc:
            self._holds_gc = True
            full_gc.hold()
        self.refresh_state()

    async def write(self, chunk: str) -> None:
        text = self._safe.feed(chunk)
        if self._stream is None and not self._cut:  # not streaming into this view
            self.message.content += text
            return
        if not text:
            return
        self._received.append(text)
        self._unsent.append(text)
        if self._flush_timer is None and not self._flush_queued:
            self._arm_flush()

    def typing(self) -> None:
        """The user typed in the prompt: pace the document by the keys for a while."""
        self._typed_at = now = time.monotonic()
        if (self._unsent and not self._flush_queued
                and now - self._sent_at >= TYPING_FLUSH_S):
            self._flush_queued = True
            self.call_after_refresh(self._flush)

    def _arm_flush(self) -> None:
        """Flush when due by the clock; while the user types, not before the keys pause."""
        self._flush_timer = None
        now = time.monotonic()
        due = max(self._sent_at + STREAM_FLUSH_S, self._typed_at + TYPING_IDLE_S)
        if due > now:
            self._flush_timer = self.set_timer(due - now, self._arm_flush)
        else:
            self._flush_queued = True
            self.call_later(self._flush)

    async def _flush(self) -> None:
        self._flush_queued = False
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        async with self._flushing:
            self._take_received()
            if not self._unsent or (self._stream is None and not self._cut):
                return
            text = "".join(self._unsent)
            self._unsent.clear()
            self._sent_at = time.monotonic()
            if self._cut or self._fed + len(text) > huge_text.CUT_AT:
                await self._write_cut()
            else:
                await self._settle()
                await self._stream.write(text)
                self._fed += len(text)
        self.post_message(self.Flushed(self))

    async def _write_cut(self) -> None:
        """Past CUT_AT characters: the document is swapped for the head a stored message of
        this size shows, and the stream stops; from then on only the line saying how much is
        not shown, and the end, change."""
        whole = self.message.content
        if not self._cut:
            part = huge_text.cut(whole)
            if part is None:
                return
            self._cut, self._fed = True, len(part.head)
            stream, self._stream = self._stream, None
            if stream is not None:
                await stream.stop()
                await settled.unsettle(stream.markdown_widget)
                await stream.markdown_widget.update(terminal_safe(part.head))
        part = huge_text.cut(whole, head=self._fed)
        if part is None:
            return
        lang = ui_language(self.app)
        line = huge_text.streaming_marker(lang, part.hidden) if self.streaming \
            else huge_text.marker(lang, part)
        shown = self.query_children(".cut")
        if shown:
            shown.first(Static).update(line)
            self.query_one(".tail", Static).update(terminal_safe(part.tail))
        else:
            await self.mount(Static(line, markup=False, classes="cut"),
                             Static(terminal_safe(part.tail), markup=False, classes="tail"))

    def on_resize(self) -> None:
        md = self._stream.markdown_widget if self._stream is not None else None
        if md is not None and any(image.drawn_width != md.outer_size.width
                                  for image in md.query_children(settled.SettledImage)):
            self._redraw()

    def _redraw(self) -> None:
        """Show the real blocks again; the next batches settle them anew."""
        if self._stream is not None:
            self.call_later(settled.unsettle, self._stream.markdown_widget)

    async def _settle(self) -> None:
        md = self._stream.markdown_widget if self._stream is not None else None
        if md is None or not self._settles:
            return
        with self.app.batch_update():
            try:
                drawn = settled.settle(md)
            except Exception:  # noqa: BLE001 - it leans on Textual's compositor; never fail a reply
                self._settles = False
                await settled.unsettle(md)
                return
            if drawn is not None:
                image, replaced = drawn
                await md.mount(image, before=settled.live_blocks(md)[0])
                await md.remove_children(replaced)

    async def finish(self, final: Message | None) -> None:
        """The stream ended; `final` is the stored message (None when nothing was kept)."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        tail = self._safe.flush()
        if self._stream is not None or self._cut:
            if tail:
                self._unsent.append(tail)
            await self._flush()
        if self._stream is not None:
            async with self._flushing:
                stream, self._stream = self._stream, None
                await stream.stop()
                await settled.unsettle(stream.markdown_widget)
        self._unsent.clear()
        self._take_received()
        self.streaming = False
        if final is not None:
            self.message = final
        if self._cut:
            await self._write_cut()  # the line now says how to read it all
        if final is not None:
            if final.tool_calls and not self.query_children(".calls"):
                await self.mount(Static(calls_line(final, ui_language(self.app)), markup=False,
                                        classes="calls"))
        self.refresh_state()
        if self._holds_gc:
            # The put-off collection may run once the whole reply is on the screen.
            self.call_after_refresh(self._release_gc)

    def _release_gc(self) -> None:
        if self._holds_gc:
            self._holds_gc = False
            full_gc.release(self.app.set_timer)

    def on_unmount(self) -> None:
        self._release_gc()  # removed while streaming (a session switched, the view pruned)
