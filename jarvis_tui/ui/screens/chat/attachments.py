"""The chat screen's attachments: /attach reads a file (in a thread: a 16 MB file or an image
takes a moment) and puts it above the prompt with what it costs; /detach or a click takes it
away; the send carries them, and the gauge counts them while they wait."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from jarvis_tui.core.attach.attachment import IMAGE
from jarvis_tui.core.attach.complete import PathIndex, mention_at, pasted_path
from jarvis_tui.core.attach.cost import sendable
from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.core.attach.message import (
    DIGEST,
    PART,
    Sending,
    lines_of,
    message_with,
    sending_as,
    sending_of,
)
from jarvis_tui.core.attach.read import still_as_read
from jarvis_tui.core.attach.refusal import NO_VISION, AttachRefused
from jarvis_tui.core.messages import Message
from jarvis_tui.core.pasted import Spans
from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.texts.attach_texts import BAR_TEXTS, changed_line, refusal_line
from jarvis_tui.texts.i18n import plural_s
from jarvis_tui.ui.screens.chat.base import ChatBase
from jarvis_tui.ui.widgets.attachment_bar import AttachmentBar, Chip
from jarvis_tui.ui.widgets.mention_list import MentionList
from jarvis_tui.ui.widgets.prompt_input import PromptInput

MENTION_REFRESH_S = 0.1  # while the folder is walked, the @ list fills at this pace
PATHS_KEPT_S = 30.0  # a walk this old is done again by the next @ that opens the list


class ChatAttachments(ChatBase):
    paths: PathIndex | None = None  # the working folder's, walked on the first @
    _mention: tuple[int, str] | None = None  # where the @ being typed is, and its query
    _refill_timer: Timer | None = None
    _shown: tuple[int, bool] = (-1, False)  # the walk's count and end when the list was drawn
    _pasted_path: tuple[int, int, str] | None = None  # where a pasted path is in the prompt
    _paths_at = 0.0  # when `paths` was walked

    # -- a path pasted into the prompt -----------------------------------------------------

    @on(PromptInput.PastedLine)
    def _pasted_line(self, event: PromptInput.PastedLine) -> None:
        path = pasted_path(event.text, Path.cwd())
        self._pasted_path = (event.start, event.end, path) if path else None
        if path:
            self.query_one("#status", Static).update(BAR_TEXTS(self.lang, "pasted_path",
                                                               path=visible(path)))

    async def action_attach_pasted(self) -> None:
        box = self.query_one(PromptInput)
        found = self._pasted_path
        self._pasted_path = None
        # Still where it was pasted, as pasted (the user may have edited it since).
        if found is None or pasted_path(box.text[found[0]:found[1]], Path.cwd()) != found[2]:
            await self.say(BAR_TEXTS(self.lang, "no_pasted_path"), "info")
            return
        start, end, path = found
        box.delete(box.document.get_location_from_index(start),
                   box.document.get_location_from_index(end))
        self.set_status()
        await self.action_attach(path)

    # -- @ in the prompt ----------------------------------------------------------------

    def mention_update(self) -> None:
        """After an edit: open, narrow or close the @ list for the @path at the cursor."""
        box = self.query_one(PromptInput)
        found = mention_at(box.text, box.cursor_index)
        self._mention = found
        listing = self.query_one(MentionList)
        if found is None:
            if listing.open:
                listing.close()
                box.mentioning = False
            return
        stale = (self.paths is None or self.paths.root != str(Path.cwd())
                 or not listing.open and self.paths.done
                 and time.monotonic() - self._paths_at > PATHS_KEPT_S)
        if stale:  # a new @ a while after the last walk: files come and go, walk again
            self.paths, self._paths_at = PathIndex(Path.cwd()), time.monotonic()
            self._walk_paths(self.paths)
            if self._refill_timer is None:
                self._refill_timer = self.set_interval(MENTION_REFRESH_S, self._refill)
        self._show_matches()

    def _show_matches(self) -> None:
        if self._mention is None or self.paths is None:
            return
        listing = self.query_one(MentionList)
        found = self.paths.matches(self._mention[1])
        note = "" if self.paths.done else BAR_TEXTS(self.lang, "walking",
                                                     n=f"{self.paths.count:,}")
        if not found and self.paths.done:
            note = BAR_TEXTS(self.lang, "no_match", query=self._mention[1])
        listing.show_paths(found, note)
        self._shown = (self.paths.count, self.paths.done)
        self.query_one(PromptInput).mentioning = True

    def _refill(self) -> None:
        """While the list is open and the walk brought more paths (or ended), show them."""
        if self._mention is not None and self.paths is not None \
                and (self.paths.count, self.paths.done) != self._shown:
            self._show_matches()

    @work(thread=True, group="mention", exclusive=True, exit_on_error=False)
    def _walk_paths(self, index: PathIndex) -> None:
        worker = get_current_worker()
        index.fill(stop=lambda: worker.is_cancelled)

    @on(PromptInput.MentionKey)
    async def _mention_key(self, event: PromptInput.MentionKey) -> None:
        listing = self.query_one(MentionList)
        box = self.query_one(PromptInput)
        if event.key in ("up", "down"):
            listing.move(-1 if event.key == "up" else 1)
            return
        mention, picked = self._mention, listing.picked()
        listing.close()
        box.mentioning = False
        self._mention = None
        if event.key == "escape" or mention is None or picked is None:
            return
        box.take(mention[0])
        await self.action_attach(picked)
    def stale_attachment(self) -> str:
        """Why the send cannot carry what is attached (a file gone or changed since), or ""."""
        for sending in self.attached:
            try:
                still_as_read(sending.attachment)
            except AttachRefused as refused:
                return refusal_line(self.lang, refused)
        return ""

    def question_with_attachments(self, text: str, pasted: Spans) -> Message:
        """The message to send, carrying what is attached (then nothing is attached any more)."""
        if not self.attached:
            return Message("user", text, pasted=pasted)
        user = message_with(text, self.attached, pasted)
        self.attached = []
        self.show_attachments()
        return user

    async def action_attach(self, arg: str = "") -> None:
        given = arg.strip()
        if not given:  # from the palette: the command is typed for the user to finish
            prompt = self.query_one(PromptInput)
            if not prompt.text:
                prompt.load_text("/attach ")
                prompt.move_cursor(prompt.document.end)
                prompt.focus()
            await self.say(BAR_TEXTS(self.lang, "which"), "info")
            return
        try:
            sending = await asyncio.to_thread(sending_of, given, Path.cwd())
            if sending.attachment.kind == IMAGE and not self.session.takes_images():
                raise AttachRefused(NO_VISION, path=sending.attachment.shown,
                                    model=self.session.settings.model)
        except AttachRefused as refused:
            await self.say(refusal_line(self.lang, refused), "warning")
            return
        att = sending.attachment
        before = self.session.sent_before(att.path)
        if before is not None and before.sha256 != att.sha256:
            await self.say(BAR_TEXTS(self.lang, "changed", line=changed_line(
                self.lang, att.shown, before.size, att.size)), "warning")
        whole = sending
        if att.kind == IMAGE:  # scaled to the provider's limit: a moment for a photo
            sending = replace(sending, attachment=await asyncio.to_thread(
                sendable, att, self.session.settings.provider))
        sending = self.session.as_sent([sending])[0]
        self.attached.append(sending)
        tokens = self.show_attachments()[-1]
        sent = sending.attachment
        if (sent.width, sent.height) != (att.width, att.height):
            await self.say(BAR_TEXTS(self.lang, "scaled", name=att.shown, width=att.width,
                                     height=att.height, sent=f"{sent.width}x{sent.height}",
                                     tokens=f"{tokens:,}"))
            return
        if sending.how != whole.how:  # too large for the window: how it goes, the choices
            await self.say(BAR_TEXTS(
                self.lang, f"went_{sending.how}", name=att.shown, n=len(self.attached),
                tokens=f"{self.session.attachment_tokens([whole])[0]:,}",
                budget=f"{self.session.usage().budget:,}", last=sending.last,
                lines=f"{att.lines:,}"), "warning")
            return
        await self.say(BAR_TEXTS(self.lang, "attached", name=att.shown, tokens=f"{tokens:,}"))

    async def action_send_as(self, arg: str = "") -> None:
        """/as N whole|digest|FIRST-LAST: how attachment N goes."""
        words = arg.split()
        if not self.attached:
            await self.say(BAR_TEXTS(self.lang, "nothing"), "info")
            return
        if len(words) != 2 or not words[0].isdigit() \
                or not 1 <= int(words[0]) <= len(self.attached):
            await self.say(BAR_TEXTS(self.lang, "as_usage", n=len(self.attached)), "warning")
            return
        index = int(words[0]) - 1
        att = self.attached[index].attachment
        try:
            sending = sending_as(att, words[1])
        except AttachRefused as refused:
            await self.say(refusal_line(self.lang, refused), "warning")
            return
        except ValueError:
            await self.say(BAR_TEXTS(self.lang, "as_usage", n=len(self.attached)), "warning")
            return
        self.attached[index] = sending
        tokens = self.show_attachments()[index]
        await self.say(BAR_TEXTS(self.lang, f"as_{sending.how}", name=att.shown,
                                 tokens=f"{tokens:,}", first=sending.first,
                                 last=sending.last or att.lines))

    async def action_detach(self, arg: str = "") -> None:
        if not self.attached:
            await self.say(BAR_TEXTS(self.lang, "nothing"), "info")
            return
        which = arg.strip()
        if not which or which == "all":
            self.attached = []
            self.show_attachments()
            await self.say(BAR_TEXTS(self.lang, "detached_all"))
            return
        if not which.isdigit() or not 1 <= int(which) <= len(self.attached):
            await self.say(BAR_TEXTS(self.lang, "bad_index", arg=which, n=len(self.attached)),
                           "warning")
            return
        await self._remove_attachment(int(which) - 1)

    @on(AttachmentBar.Removed)
    async def _clicked_away(self, event: AttachmentBar.Removed) -> None:
        if event.index < len(self.attached):
            await self._remove_attachment(event.index)

    async def _remove_attachment(self, index: int) -> None:
        gone = self.attached.pop(index)
        self.show_attachments()
        await self.say(BAR_TEXTS(self.lang, "detached", name=gone.attachment.shown))

    def show_attachments(self) -> list[int]:
        """Redraw the bar and the gauge; each attachment's tokens."""
        tokens = self.session.attachment_tokens(self.attached)
        self.attached_tokens = sum(tokens)
        bar = self.query_one(AttachmentBar)
        if not self.attached:
            bar.show([])
            self.update_gauge(marks=False)
            return tokens
        usage = self.session.usage(pending=self.query_one(PromptInput).text,
                                   attached=self.attached_tokens)
        chips = [self._chip(i, s, n, usage.budget) for i, (s, n)
                 in enumerate(zip(self.attached, tokens, strict=True))]
        key = ("over" if usage.used > usage.budget
               else "compacts" if usage.over_threshold else "fits")
        folded = (self.session.turns_folded(self.query_one(PromptInput).text,
                                            self.attached_tokens) if key != "fits" else 0)
        bar.show(chips, BAR_TEXTS(self.lang, key, tokens=f"{sum(tokens):,}",
                                  used=f"{usage.used:,}", budget=f"{usage.budget:,}",
                                  threshold=f"{usage.threshold:,}", turns=folded,
                                  s=plural_s(folded)))
        self.update_gauge(marks=False)
        return tokens

    def _chip(self, index: int, sending: Sending, tokens: int, budget: int) -> Chip:
        att = sending.attachment
        sent = (len(lines_of(att.text, sending.first, sending.last).encode())
                if sending.how == PART else len(att.data) if att.kind == IMAGE else att.size)
        facts = {"name": att.shown, "size": size_text(sent), "tokens": f"{tokens:,}"}
        label = (BAR_TEXTS(self.lang, "chip_part", first=sending.first,
                           last=sending.last or att.lines, **facts)
                 if sending.how == PART
                 else BAR_TEXTS(self.lang, "chip_digest", **facts) if sending.how == DIGEST
                 else BAR_TEXTS(self.lang, "chip_image", pixels=f"{att.width}x{att.height}",
                                **facts) if att.kind == IMAGE
                 else BAR_TEXTS(self.lang, "chip", **facts))
        warning = (BAR_TEXTS(self.lang, "too_big", tokens=f"{tokens:,}", budget=f"{budget:,}",
                             n=index + 1, path=att.shown) if tokens > budget else "")
        return Chip(label, warning)
