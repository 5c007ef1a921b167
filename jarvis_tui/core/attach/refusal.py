"""Why a path cannot be attached: a reason and its facts, which the texts put in the user's
language (jarvis_tui/texts/attach_texts.py). The core says what it found, never how to say it."""

from __future__ import annotations

from typing import Any

# The reasons, each with the facts it carries.
MISSING = "missing"  # path
LOOP = "loop"  # path: a symlink that leads back to itself
DENIED = "denied"  # path: the user cannot read it
NOT_FILE = "not_file"  # path, what (fifo, character device, block device, socket)
TOO_BIG = "too_big"  # path, size, limit (bytes)
BINARY = "binary"  # path, what ("PDF document", "binary data")
ENCODING = "encoding"  # path, encoding (the one detected, "" if none)
BAD_NAME = "bad_name"  # shown: the path with its hidden characters written out
NOT_IMAGE = "not_image"  # path, claimed (the name's type), found (what the bytes are)
BROKEN_IMAGE = "broken_image"  # path, why
BOMB = "bomb"  # path, width, height, limit (pixels)
CHANGED = "changed"  # path: it changed while it was read, or since it was attached
VANISHED = "vanished"  # path: it was there when attached and is gone at the send
NO_VISION = "no_vision"  # path, model: the model takes no images
READ_ERROR = "read_error"  # path, why (the system's words)
BAD_RANGE = "bad_range"  # path, first, last, lines: PATH:FIRST-LAST past the file's lines
NOT_YET = "not_yet"  # path, what: a kind this command does not send yet
REASONS = (MISSING, LOOP, DENIED, NOT_FILE, TOO_BIG, BINARY, ENCODING, BAD_NAME, NOT_IMAGE,
           BROKEN_IMAGE, BOMB, CHANGED, VANISHED, NO_VISION, READ_ERROR, BAD_RANGE, NOT_YET)


class AttachRefused(Exception):
    def __init__(self, reason: str, **facts: Any) -> None:
        super().__init__(reason, facts)
        self.reason = reason
        self.facts = facts

    def __str__(self) -> str:  # for logs and tracebacks; the user reads the texts' line
        return f"{self.reason}: {self.facts}"
