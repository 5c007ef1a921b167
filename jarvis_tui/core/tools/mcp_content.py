"""An MCP tool result as the text the model reads (and the store keeps).

Text is passed on as the server wrote it, escape sequences and markup included: the UI shows it
as text and the model may need it. Only what could break the store or the terminal's encoder
goes: NUL characters and lone surrogate halves. Other content kinds become one bracketed line
saying what was there, since the conversation holds text only.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types

from jarvis_tui.core.safety.textsafe import valid_unicode


def clean(text: str) -> str:
    """Text that SQLite and a UTF-8 terminal can take: no NUL, no lone surrogate."""
    return valid_unicode(text.replace("\x00", ""))


def _size(data: str) -> int:
    """The decoded size of base64 `data`, without decoding a large payload twice."""
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _part(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {_size(block.data):,} bytes]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return res.text
        mime = res.mime_type or "application/octet-stream"
        return f"[resource {res.uri}, {mime}, {_size(res.blob):,} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[link {block.uri}]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"


def result_text(result: types.CallToolResult) -> tuple[str, dict[str, Any]]:
    """The result's text, and what a UI may show beside it (the kinds of content there were).

    Text parts are joined with newlines; with no content at all, the structured content is
    given as JSON (servers that fill only that one exist)."""
    parts = [_part(block) for block in result.content]
    kinds = [getattr(block, "type", "?") for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False, indent=2)]
        kinds = ["structured"]
    return clean("\n".join(parts)), {"content": kinds}
