"""An attached image as a small picture in the conversation: two pixels a cell, the upper half
block's colour above its background's, which every terminal with colour draws (Textual brings
truecolour down to what the terminal has). The graphics protocols (kitty's, sixel) would draw
it sharper, but the widget library for them queries the terminal when it is imported and
divides by its pixel size, which a multiplexer or a headless run reports as zero.
"""

from __future__ import annotations

import functools
import io

from textual.content import Content

MAX_COLUMNS = 48
MAX_ROWS = 12  # of text: 24 pixels high


@functools.lru_cache(maxsize=16)
def picture(data: bytes, columns: int = MAX_COLUMNS, rows: int = MAX_ROWS) -> Content | None:
    """`data` (an image's bytes) at most `columns` x `rows` cells, its shape kept (a cell is
    about twice as high as it is wide); None when the bytes do not decode."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.thumbnail((columns, rows * 2), Image.Resampling.BILINEAR)
            rgb = img.convert("RGB")
    except (OSError, ValueError, UnidentifiedImageError):
        return None
    width, height = rgb.size
    pixels = rgb.load()
    lines = []
    for y in range(0, height, 2):
        cells = []
        for x in range(width):
            top = pixels[x, y]
            bottom = pixels[x, y + 1] if y + 1 < height else None
            style = f"{_hex(top)} on {_hex(bottom)}" if bottom else _hex(top)
            cells.append(("▀", style))
        lines.append(Content.assemble(*cells))
    return Content("\n").join(lines)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)
