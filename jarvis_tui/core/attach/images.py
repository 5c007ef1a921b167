"""An image attached: its format from its bytes (not its name), its size, checked by decoding
it once, and scaled down to what a provider takes.

Pillow reads the header before any pixel, so an image that declares 100,000 x 100,000 pixels
in a few kilobytes (a decompression bomb) is refused from its header, never decoded.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path

from jarvis_tui.core.attach import refusal as r
from jarvis_tui.core.attach.attachment import IMAGE, Attachment
from jarvis_tui.core.attach.refusal import AttachRefused
from jarvis_tui.core.attach.sniff import IMAGE_TYPES, binary_kind

MAX_PIXELS = 50_000_000  # a 50-megapixel photo is the largest a camera makes; more is a bomb


def read_image(path: Path, shown: str, data: bytes, mtime: float, *, claimed: str | None,
               found: str | None) -> Attachment:
    """The image in `data`; `claimed`: the format its name says, `found`: the one its bytes
    say (None: not an image at all)."""
    if found is None:
        what = binary_kind(data[:8192]) or "text"
        raise AttachRefused(r.NOT_IMAGE, path=shown, claimed=(claimed or "").upper(),
                            found=what)
    width, height = _checked(data, shown, found)
    return Attachment(str(path), shown, IMAGE, "", len(data), mtime,
                      hashlib.sha256(data).hexdigest(), data=data,
                      media_type=IMAGE_TYPES[found], encoding="", width=width, height=height)


def _checked(data: bytes, shown: str, fmt: str) -> tuple[int, int]:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[fmt.upper()]) as img:
                width, height = img.size
                if width * height > MAX_PIXELS:
                    raise AttachRefused(r.BOMB, path=shown, width=width, height=height,
                                        limit=MAX_PIXELS)
                img.load()  # every pixel once: a truncated or damaged file shows here
    except AttachRefused:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise AttachRefused(r.BOMB, path=shown, width=0, height=0, limit=MAX_PIXELS) from None
    except (OSError, ValueError, SyntaxError, Image.UnidentifiedImageError) as e:
        raise AttachRefused(r.BROKEN_IMAGE, path=shown, why=str(e) or type(e).__name__) \
            from None
    return width, height


def scaled(image: Attachment, width: int, height: int) -> bytes:
    """The image's bytes at `width` x `height` (its size or smaller), in its own format (a GIF
    as its first frame, in PNG: what the providers read of it)."""
    from PIL import Image

    fmt = image.media_type.split("/")[1].upper()
    with Image.open(io.BytesIO(image.data)) as img:
        small = img.convert("RGBA" if img.mode in ("P", "LA", "RGBA") else "RGB")
        small = small.resize((width, height), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        if fmt == "JPEG":
            small.convert("RGB").save(out, "JPEG", quality=90)
        else:
            small.save(out, "PNG" if fmt == "GIF" else fmt)
    return out.getvalue()


def as_jpeg(image: Attachment, quality: int = 85) -> bytes:
    """The image as a JPEG at its size: a photo's PNG over a provider's byte limit."""
    from PIL import Image

    with Image.open(io.BytesIO(image.data)) as img:
        out = io.BytesIO()
        img.convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()
