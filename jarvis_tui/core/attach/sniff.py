"""What a file's first bytes say it is: an image we can send, or a binary format to name when
it is refused ("a PDF document", not "binary data" when we can tell)."""

from __future__ import annotations

IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif",
               "webp": "image/webp"}
IMAGE_SUFFIXES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif",
                  ".webp": "webp"}

# (offset, magic, name): the formats a user is likely to try, named as a person would.
_BINARY = (
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive (or a Word, Excel, jar or wheel file)"),
    (0, b"\x1f\x8b", "gzip archive"),
    (0, b"BZh", "bzip2 archive"),
    (0, b"\xfd7zXZ\x00", "xz archive"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (0, b"Rar!\x1a\x07", "RAR archive"),
    (0, b"\x28\xb5\x2f\xfd", "zstd archive"),
    (257, b"ustar", "tar archive"),
    (0, b"\x7fELF", "ELF executable or library"),
    (0, b"MZ", "Windows executable"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\xca\xfe\xba\xbe", "Java class or Mach-O universal binary"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"ID3", "MP3 audio"),
    (0, b"OggS", "Ogg audio or video"),
    (0, b"fLaC", "FLAC audio"),
    (4, b"ftyp", "MP4 or QuickTime video"),
    (0, b"\x1aE\xdf\xa3", "Matroska or WebM video"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (0, b"BM", "BMP image"),
    (0, b"\x00\x00\x01\x00", "icon image"),
    (0, b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "old Office document"),
    (0, b"\x89HDF\r\n\x1a\n", "HDF5 data"),
    (0, b"\x93NUMPY", "numpy array"),
    (0, b"\x80\x04\x95", "Python pickle"),
)


def image_format(head: bytes) -> str | None:
    """png, jpeg, gif or webp when the bytes are one (whatever the name says), else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def binary_kind(head: bytes) -> str | None:
    """A name for a binary format the bytes start with; "binary data" for bytes no text has
    (a NUL, or mostly control bytes), None for what may be text."""
    for offset, magic, name in _BINARY:
        if head[offset:offset + len(magic)] == magic:
            return name
    sample = head[:8192]
    if b"\x00" in sample:
        return "binary data"
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return "binary data" if sample and controls > len(sample) // 10 else None
