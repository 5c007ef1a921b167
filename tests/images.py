"""Images the attachment tests hand the app: a real one (Pillow writes it), and a PNG whose
header declares far more pixels than its few bytes hold (a decompression bomb)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def image(width: int, height: int, fmt: str = "PNG",
          color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, fmt)
    return out.getvalue()


def bomb(width: int, height: int) -> bytes:
    """A PNG whose header declares width x height, with one compressed row of data."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(width + 1))) + chunk(b"IEND", b""))
