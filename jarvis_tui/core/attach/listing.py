"""A folder attached: its listing, as `tree.walk` sees it (the .gitignore honoured), a line an
entry with its size, near entries first, at most MAX_ENTRIES of them. The model learns what is
there and can ask for a file; the files themselves are not read."""

from __future__ import annotations

import hashlib
from pathlib import Path

from jarvis_tui.core.attach.attachment import LISTING, Attachment
from jarvis_tui.core.attach.tree import walk

MAX_ENTRIES = 500


def size_text(size: int) -> str:
    """1,234 B / 12.3 KB / 4.5 MB / 2.0 GB: bytes as a person reads them (powers of 1024)."""
    if size < 1024:
        return f"{size:,} B"
    value = size / 1024
    for unit in ("KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} TB"


def listing(path: Path, shown: str, mtime: float, *, hidden: bool = False) -> Attachment:
    lines, files, folders, more = [], 0, 0, False
    for entry in walk(path, hidden=hidden):
        if len(lines) >= MAX_ENTRIES:  # a home folder holds millions: not walked to the end
            more = True
            break
        if entry.folder:
            folders += 1
            lines.append(f"{entry.path}/")
        else:
            files += 1
            lines.append(f"{entry.path}  {size_text(entry.size)}")
    head = f"{shown.rstrip('/')}/: a folder"
    if more:
        lines.append(f"... (more entries, not listed: the first {MAX_ENTRIES} are)")
    counts = f" ({files:,} files and {folders:,} folders listed; .gitignore honoured)"
    text = head + counts + ("\n" + "\n".join(lines) if lines else "\n(empty)")
    data = text.encode("utf-8")
    return Attachment(str(path), shown, LISTING, text, len(data), mtime,
                      hashlib.sha256(data).hexdigest())
