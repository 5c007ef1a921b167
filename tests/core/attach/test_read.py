"""Reading what the user attaches, on real files: each kind of bad input the issue names gets
its one reason, fast, and text comes back exactly as it will be sent."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from jarvis_tui.core.attach import refusal as r
from jarvis_tui.core.attach.attachment import IMAGE, LISTING, TEXT
from jarvis_tui.core.attach.read import MAX_TEXT_BYTES, _read, read_path
from jarvis_tui.core.attach.refusal import AttachRefused
from tests.images import bomb, image


def refused(path: str | Path, cwd: Path) -> AttachRefused:
    with pytest.raises(AttachRefused) as caught:
        read_path(path, cwd)
    return caught.value


def test_text_in_both_languages_comes_back_as_sent(tmp_path):
    text = "部署在 /srv/app，端口 8443。\nThe deploy listens on 8443.\n"
    (tmp_path / "notes.md").write_text(text, encoding="utf-8")
    att = read_path("notes.md", tmp_path)
    assert (att.kind, att.text, att.shown, att.lines) == (TEXT, text, "notes.md", 2)
    assert att.size == len(text.encode()) and len(att.sha256) == 64
    assert att.path == str(tmp_path / "notes.md")


def test_windows_line_ends_and_byte_order_marks(tmp_path):
    (tmp_path / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read_path("crlf.txt", tmp_path).text == "one\ntwo\n"
    (tmp_path / "u16.txt").write_bytes("中文 text".encode("utf-16"))
    att = read_path("u16.txt", tmp_path)
    assert (att.text, att.encoding) == ("中文 text", "utf-16")


def test_text_in_another_encoding_is_refused_with_its_name(tmp_path):
    text = "这是一个用国标码保存的中文文件，里面写着部署的步骤和端口号。" * 20
    (tmp_path / "gbk.txt").write_bytes(text.encode("gb18030"))
    why = refused("gbk.txt", tmp_path)
    assert why.reason == r.ENCODING and why.facts["encoding"] in ("GB18030", "GBK", "GB2312")


@pytest.mark.parametrize(("name", "data", "what"), [
    ("paper.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "PDF document"),
    ("tool", b"\x7fELF\x02\x01\x01\x00" + bytes(64), "ELF executable or library"),
    ("blob.bin", bytes(range(256)) * 4, "binary data"),
])
def test_binary_files_are_refused_with_their_type(tmp_path, name, data, what):
    (tmp_path / name).write_bytes(data)
    why = refused(name, tmp_path)
    assert (why.reason, why.facts["what"]) == (r.BINARY, what)


def test_fifo_and_dev_zero_are_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    start = time.monotonic()
    assert refused("pipe", tmp_path).facts["what"] == "fifo"
    assert refused("/dev/zero", tmp_path).facts == {"path": "/dev/zero",
                                                    "what": "character device"}
    assert time.monotonic() - start < 2


def test_a_two_gigabyte_file_is_refused_from_its_size(tmp_path):
    with open(tmp_path / "huge.log", "wb") as f:  # sparse: no 2 GB written
        f.truncate(2 * 1024**3)
    start = time.monotonic()
    why = refused("huge.log", tmp_path)
    assert why.reason == r.TOO_BIG and why.facts["size"] == 2 * 1024**3
    assert why.facts["limit"] == MAX_TEXT_BYTES and time.monotonic() - start < 1


def test_links_that_loop_or_lead_nowhere(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert refused("a", tmp_path).reason == r.LOOP
    (tmp_path / "gone").symlink_to(tmp_path / "nothing")
    assert refused("gone", tmp_path).facts == {"path": "gone", "dangling": True}
    assert refused("nothing-here.txt", tmp_path).facts == {"path": "nothing-here.txt"}


@pytest.mark.parametrize("name", ["evil\u202etxt.exe", "two\nlines.txt", "esc\x1b[31m.txt",
                                  "zero\u200bwidth.txt"])
def test_names_that_would_show_as_another_are_refused(tmp_path, name):
    (tmp_path / name).write_text("x", encoding="utf-8")
    why = refused(name, tmp_path)
    assert why.reason == r.BAD_NAME
    shown = why.facts["shown"]
    assert "\u202e" not in shown and "\n" not in shown and "\x1b" not in shown
    assert "\u200b" not in shown


def test_a_file_the_user_cannot_read():
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:  # one every user can enter
        os.chmod(folder, 0o755)
        secret = Path(folder) / "secret.txt"
        secret.write_text("x", encoding="utf-8")
        secret.chmod(0)
        if os.geteuid() != 0:
            assert refused(secret, Path(folder)).reason == r.DENIED
            return
        # Root reads every file: read it as an unprivileged user, in a process of its own
        # that gives up root once its imports are done.
        code = ("import os, sys; from pathlib import Path; "
                "from jarvis_tui.core.attach.read import read_path; "
                "from jarvis_tui.core.attach.refusal import AttachRefused\n"
                "os.setgid(65534); os.setuid(65534)\n"
                "try:\n    read_path(sys.argv[1], Path('/'))\n"
                "except AttachRefused as e:\n    print(e.reason)")
        done = subprocess.run([sys.executable, "-c", code, str(secret)], capture_output=True,
                              text=True, timeout=60, cwd=Path(__file__).parents[3])
        assert done.stdout.strip() == r.DENIED, done.stderr


def test_a_file_swapped_between_its_stat_and_its_read(tmp_path):
    (tmp_path / "one.txt").write_text("one", encoding="utf-8")
    (tmp_path / "two.txt").write_text("two", encoding="utf-8")
    with pytest.raises(AttachRefused) as caught:
        _read(tmp_path / "two.txt", "two.txt", 100, os.stat(tmp_path / "one.txt"))
    assert caught.value.reason == r.CHANGED


def test_a_folder_attaches_as_its_listing_with_gitignore_honoured(tmp_path):
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "src" / "deep" / "x.py").write_text("", encoding="utf-8")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_bytes(b"\0")
    (tmp_path / "debug.log").write_text("log", encoding="utf-8")
    (tmp_path / "keep.log").write_text("kept", encoding="utf-8")
    (tmp_path / ".env").write_text("KEY=1", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n", encoding="utf-8")
    att = read_path(".", tmp_path)
    assert att.kind == LISTING
    listed = att.text.splitlines()[1:]
    assert listed == ["keep.log  4 B", "src/", "src/app.py  12 B", "src/deep/",
                      "src/deep/x.py  0 B"]
    assert ".env" in read_path(".", tmp_path, hidden=True).text


def test_an_image_is_read_with_its_size(tmp_path):
    (tmp_path / "shot.png").write_bytes(image(640, 480))
    att = read_path("shot.png", tmp_path)
    assert (att.kind, att.media_type, att.width, att.height) == (IMAGE, "image/png", 640, 480)
    # Named as a PNG, written as a JPEG: sent as what its bytes are.
    (tmp_path / "renamed.png").write_bytes(image(32, 16, "JPEG"))
    assert read_path("renamed.png", tmp_path).media_type == "image/jpeg"


def test_images_that_lie_or_are_broken(tmp_path):
    (tmp_path / "fake.png").write_text("not an image at all", encoding="utf-8")
    why = refused("fake.png", tmp_path)
    assert why.facts == {"path": "fake.png", "claimed": "PNG", "found": "text"}
    (tmp_path / "cut.png").write_bytes(image(300, 300)[:200])
    assert refused("cut.png", tmp_path).reason == r.BROKEN_IMAGE


def test_a_decompression_bomb_is_refused_from_its_header(tmp_path):
    (tmp_path / "bomb.png").write_bytes(bomb(9000, 9000))  # 81 Mpx in a few bytes
    start = time.monotonic()
    why = refused("bomb.png", tmp_path)
    assert why.reason == r.BOMB and (why.facts["width"], why.facts["height"]) == (9000, 9000)
    (tmp_path / "bigger.png").write_bytes(bomb(100_000, 100_000))
    assert refused("bigger.png", tmp_path).reason == r.BOMB
    assert time.monotonic() - start < 2
