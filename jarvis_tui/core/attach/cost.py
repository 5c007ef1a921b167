"""What an attachment costs before it is sent: its block's tokens as the request's counter
counts them, and an image's by the formula its provider publishes (core/window/image_cost.py),
at the size it is sent at.
"""

from __future__ import annotations

import math
from dataclasses import replace

from jarvis_tui.core.attach.attachment import IMAGE, Attachment
from jarvis_tui.core.attach.message import Sending, block
from jarvis_tui.core.window.image_cost import ANTHROPIC, OLLAMA, OPENAI, image_cost
from jarvis_tui.core.window.tokens import TokenCounter

# Anthropic refuses an image whose base64 is over 5 MB (the encoded length, not the file's); a
# photo's PNG can be that at 1568 pixels, and goes as a JPEG instead.
MAX_BASE64 = 5 * 1024 * 1024

__all__ = ["ANTHROPIC", "OLLAMA", "OPENAI", "image_cost", "sendable", "sending_tokens"]


def sending_tokens(sending: Sending, counter: TokenCounter, protocol: str) -> int:
    """What `sending` adds to the request: its block and the blank line after it, and an
    image's own tokens."""
    tokens = counter.text(block(sending) + "\n\n")
    att = sending.attachment
    if att.kind == IMAGE:
        tokens += image_cost(protocol, att.width, att.height).tokens
    return tokens


def sendable(att: Attachment, protocol: str) -> Attachment:
    """`att` as `protocol`'s provider takes it: an image larger than its limit scaled down to
    it here (the provider would scale it anyway, and the bytes sent, stored and counted are
    then the ones it reads); anything else as it is. The path, sha256 and size stay the file's:
    a resend is compared with the file on disk."""
    if att.kind != IMAGE:
        return att
    cost = image_cost(protocol, att.width, att.height)
    # A GIF goes as its first frame in PNG, scaled or not: what the providers read of one,
    # and OpenAI refuses an animated one.
    if cost.scaled_from(att.width, att.height) or att.media_type == "image/gif":
        from jarvis_tui.core.attach.images import scaled

        media = "image/png" if att.media_type == "image/gif" else att.media_type
        att = replace(att, data=scaled(att, cost.width, cost.height), width=cost.width,
                      height=cost.height, media_type=media)
    if math.ceil(len(att.data) / 3) * 4 > MAX_BASE64:
        from jarvis_tui.core.attach.images import as_jpeg

        att = replace(att, data=as_jpeg(att), media_type="image/jpeg")
    return att
