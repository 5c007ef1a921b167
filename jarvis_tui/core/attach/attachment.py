"""An attachment as read: what the chip shows, the message carries and the store keeps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TEXT = "text"
LISTING = "listing"
IMAGE = "image"


@dataclass(frozen=True)
class Attachment:
    path: str  # absolute, as it was when attached
    shown: str  # as the user reads it: relative to the working folder when under it
    kind: str  # TEXT, LISTING or IMAGE
    text: str  # as sent ("" for an image)
    size: int  # bytes on disk (a folder: its listing's)
    mtime: float
    sha256: str  # of the bytes read (a folder: of its listing)
    data: bytes = b""  # an image's bytes as read
    media_type: str = "text/plain"
    encoding: str = "utf-8"  # the text's, as read
    width: int = 0  # an image's pixels
    height: int = 0

    @property
    def name(self) -> str:
        return Path(self.path).name or self.path

    @property
    def lines(self) -> int:
        return self.text.count("\n") + (bool(self.text) and not self.text.endswith("\n"))
