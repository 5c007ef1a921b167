"""`ask --attach PATH`: the files the question carries, read and checked before anything is
created (a refused file costs no session and no request), and a line for a file that changed
since this session last sent it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from jarvis_tui.cli_errors import CliError
from jarvis_tui.core.attach.attachment import IMAGE
from jarvis_tui.core.attach.message import Sending, message_with, sending_of
from jarvis_tui.core.attach.refusal import NO_VISION, AttachRefused
from jarvis_tui.core.messages import Message
from jarvis_tui.core.pasted import Spans
from jarvis_tui.core.providers.local_server import may_read_images
from jarvis_tui.core.session import ChatSession, Store
from jarvis_tui.texts.attach_texts import BAR_TEXTS, changed_line, refusal_line


def read_attachments(given: list[str], language: str, cwd: Path | None = None,
                     model: str = "") -> list[Sending]:
    """Each of `given` as it will be sent; CliError with the first refusal's line (an image,
    for `model` the bundled one, which takes none)."""
    cwd = cwd or Path.cwd()
    sendings = []
    for path in given:
        try:
            sending = sending_of(path, cwd)
            if sending.attachment.kind == IMAGE and not may_read_images(model):
                raise AttachRefused(NO_VISION, path=sending.attachment.shown, model=model)
        except AttachRefused as refused:
            raise CliError(refusal_line(language, refused)) from None
        sendings.append(sending)
    return sendings


def warn_changed(store: Store, conv_id: int, sendings: list[Sending], language: str,
                 say: Callable[[str], None]) -> None:
    """One line for each file this session sent before that is not the same now."""
    for sending in sendings:
        att = sending.attachment
        before = store.last_sent(conv_id, att.path)
        if before is not None and before.sha256 != att.sha256:
            say("jarvis-tui: " + changed_line(language, att.shown, before.size, att.size))


@dataclass(frozen=True)
class Attaching:
    """The question `ask` was given with its files: it is made once the session knows the
    window, so that a file larger than it goes as its digest (unless `whole`)."""

    text: str
    pasted: Spans
    sendings: list[Sending]
    whole: bool = False

    def question(self, session: ChatSession, language: str,
                 say: Callable[[str], None]) -> Message:
        for sending in self.sendings:
            if sending.attachment.kind == IMAGE and not session.takes_images():
                raise CliError(refusal_line(language, AttachRefused(
                    NO_VISION, path=sending.attachment.shown, model=session.settings.model)))
        sendings = session.as_sent(self.sendings)
        if self.whole:  # scaled images, but every text file whole
            sendings = [replace(c, how=g.how, first=g.first, last=g.last)
                        for g, c in zip(self.sendings, sendings, strict=True)]
        for given, chosen in zip(self.sendings, sendings, strict=True):
            was, now = given.attachment, chosen.attachment
            if (now.width, now.height) != (was.width, was.height):
                tokens = session.attachment_tokens([chosen])[0]
                say("jarvis-tui: " + BAR_TEXTS(language, "scaled", name=was.shown,
                                               width=was.width, height=was.height,
                                               sent=f"{now.width}x{now.height}",
                                               tokens=f"{tokens:,}").removeprefix("📎 "))
            if chosen.how != given.how:
                tokens = session.attachment_tokens([given])[0]
                say("jarvis-tui: " + BAR_TEXTS(language, f"ask_{chosen.how}",
                                               name=given.attachment.shown,
                                               tokens=f"{tokens:,}", last=chosen.last,
                                               lines=f"{was.lines:,}",
                                               budget=f"{session.usage().budget:,}"))
        return message_with(self.text, sendings, self.pasted)
