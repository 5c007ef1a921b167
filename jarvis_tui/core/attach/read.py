"""A path the user attaches, read once and checked: a text file as UTF-8 text, a folder as its
listing, an image as its bytes and size. Everything else is refused with what was found.

Nothing here waits unbounded: a FIFO or a device is refused from its stat, before it is
opened (and opened without blocking, should it be swapped in between); a file is read up to
its limit and no further, so /dev/zero's endless bytes or a 2 GB log cost one stat.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import stat
from pathlib import Path

from jarvis_tui.core.attach import refusal as r
from jarvis_tui.core.attach.attachment import LISTING, TEXT, Attachment
from jarvis_tui.core.attach.images import read_image
from jarvis_tui.core.attach.listing import listing
from jarvis_tui.core.attach.refusal import AttachRefused
from jarvis_tui.core.attach.sniff import IMAGE_SUFFIXES, binary_kind, image_format
from jarvis_tui.core.safety.textsafe import visible

MAX_TEXT_BYTES = 16 * 1024 * 1024  # a text file: far past any window, so a part or a digest
MAX_IMAGE_BYTES = 32 * 1024 * 1024  # an image file as read (it is scaled down to send)
DETECT_BYTES = 64 * 1024  # what the encoding detector reads of a file that is not UTF-8

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_NOT_FILES = ((stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "character device"),
              (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def shown_path(path: Path, cwd: Path) -> str:
    """`path` as the user reads it: relative to `cwd` when under it, else as it is."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def check_name(name: str) -> None:
    """Refuse a path that would not show as it is: control characters (a newline, an escape)
    or marks that reorder or hide text (bidi controls, zero-width characters), or bytes that
    are no UTF-8 (kept by Python as lone surrogates). The chip, the message and the model
    would each read another name."""
    lines = name.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    shown = visible(lines.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    if shown != name:
        raise AttachRefused(r.BAD_NAME, shown=shown)


def read_path(given: str | Path, cwd: Path, *, hidden: bool = False) -> Attachment:
    """The attachment `given` names (relative to `cwd`), read now; AttachRefused otherwise.
    `hidden`: a folder's listing shows its hidden entries too."""
    check_name(str(given))
    path = Path(os.path.abspath(cwd / Path(given).expanduser()))
    shown = shown_path(path, cwd)
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise AttachRefused(r.MISSING, path=shown, dangling=True) from None
        raise AttachRefused(r.MISSING, path=shown) from None
    except OSError as e:
        raise _refusal(e, shown) from None
    if stat.S_ISDIR(st.st_mode):
        return listing(path, shown, st.st_mtime, hidden=hidden)
    for test, what in _NOT_FILES:
        if test(st.st_mode):
            raise AttachRefused(r.NOT_FILE, path=shown, what=what)
    suffix_format = IMAGE_SUFFIXES.get(path.suffix.lower())
    limit = MAX_IMAGE_BYTES if suffix_format else MAX_TEXT_BYTES
    if st.st_size > limit:
        raise AttachRefused(r.TOO_BIG, path=shown, size=st.st_size, limit=limit)
    data = _read(path, shown, limit, st)
    found = image_format(data[:16])
    if found or suffix_format:
        return read_image(path, shown, data, st.st_mtime, claimed=suffix_format, found=found)
    text, encoding = decode(data, shown)
    return Attachment(str(path), shown, TEXT, text, len(data), st.st_mtime,
                      hashlib.sha256(data).hexdigest(), encoding=encoding)


def _read(path: Path, shown: str, limit: int, before: os.stat_result) -> bytes:
    """The file's bytes, at most `limit`; refused when what was opened is not what was stat'ed
    (swapped for a FIFO or a device) or changed while it was read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise _refusal(e, shown) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise AttachRefused(r.CHANGED, path=shown)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        after = os.fstat(fd)
    except OSError as e:
        raise _refusal(e, shown) from None
    finally:
        os.close(fd)
    if total > limit:
        raise AttachRefused(r.TOO_BIG, path=shown, size=max(total, after.st_size), limit=limit)
    if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns) or total != st.st_size \
            or (st.st_ino, st.st_dev) != (before.st_ino, before.st_dev):
        raise AttachRefused(r.CHANGED, path=shown)
    return b"".join(chunks)


def decode(data: bytes, shown: str) -> tuple[str, str]:
    """(text, encoding): UTF-8, or UTF-8/16/32 with a byte-order mark. Any other encoding is
    refused with its name (as detected): decoded on a guess, a GBK file read as Latin-1 would
    be sent as nonsense the model answers anyway."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec), codec.removesuffix("-sig")
            except UnicodeDecodeError:
                break
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            if binary_kind(data[:8192]) is None:
                return text.replace("\r\n", "\n"), "utf-8"
    kind = binary_kind(data[:8192])
    encoding = _detected(data[:DETECT_BYTES]) if kind in (None, "binary data") else None
    if encoding:
        raise AttachRefused(r.ENCODING, path=shown, encoding=encoding)
    raise AttachRefused(r.BINARY, path=shown, what=kind or "binary data")


def _detected(sample: bytes) -> str | None:
    """The encoding charset-normalizer finds text in, or None when it finds none."""
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    if best is None or best.encoding in ("utf_8", "ascii"):
        return None
    return best.encoding.replace("_", "-").upper()


def _refusal(e: OSError, shown: str) -> AttachRefused:
    if e.errno == errno.ELOOP:
        return AttachRefused(r.LOOP, path=shown)
    if e.errno in (errno.EACCES, errno.EPERM):
        return AttachRefused(r.DENIED, path=shown)
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return AttachRefused(r.MISSING, path=shown)
    return AttachRefused(r.READ_ERROR, path=shown, why=e.strerror or str(e))


def still_as_read(att: Attachment) -> None:
    """Refuse (VANISHED, CHANGED) a file that is gone or not what was read when it was
    attached: the send would carry a text the file no longer has, and the user believes it
    sends the file. A folder's listing is what it was; it is not checked again."""
    if att.kind == LISTING:
        return
    try:
        st = os.stat(att.path)
    except FileNotFoundError:
        raise AttachRefused(r.VANISHED, path=att.shown) from None
    except OSError as e:
        raise _refusal(e, att.shown) from None
    if st.st_size != att.size or st.st_mtime != att.mtime:
        raise AttachRefused(r.CHANGED, path=att.shown, since=True)
