"""Copying text out of the app: to the terminal's clipboard, and to a file.

Textual copies by writing OSC 52 to the terminal. Some terminals ignore it, tmux drops it unless
told otherwise, and none of them answers, so a copy that went nowhere looks like one that worked.
Every copy is therefore also written to one file the user can open or `cat`, and where the
terminal is known to ignore OSC 52 the line says so first.

Both get the text as `terminal_safe` makes it: a copy is pasted into a shell, which reads it
through a terminal, so an `ESC[201~` in a reply would end bracketed paste and run what follows
without Enter, and `cat copied.txt` would obey OSC 52 and title sequences.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import platformdirs

from jarvis_tui.core.files import write_whole
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.settings.config import APP_NAME
from jarvis_tui.texts.i18n import Texts

CLIPBOARD_TEXTS = Texts(
    en={"copied": "Copied {what} to the clipboard (OSC 52). If your terminal blocks that, it is "
                  "also in {path}",
        "doubtful": "Your terminal may not take OSC 52 copies: {what} is in {path} (it was "
                    "sent to the clipboard too)",
        "copied_unwritten": "Copied {what} to the clipboard (OSC 52); writing it to {path} as "
                            "well failed: {why}",
        "doubtful_unwritten": "Your terminal may not take OSC 52 copies, and {what} could not "
                              "be written to {path} either: {why}"},
    zh={"copied": "已把{what}复制到剪贴板（OSC 52）。如果终端拦截了它，内容也在 {path}",
        "doubtful": "你的终端可能不接受 OSC 52 复制：{what}已写入 {path}（也已发往剪贴板）",
        "copied_unwritten": "已把{what}复制到剪贴板（OSC 52）；同时写入 {path} 失败：{why}",
        "doubtful_unwritten": "你的终端可能不接受 OSC 52 复制，{what}也无法写入 {path}：{why}"},
)


def copy_file_path() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME)) / "copied.txt"


def tmux_clipboard() -> str | None:
    """tmux's set-clipboard option ("on", "external", "off"), None when tmux cannot say."""
    try:
        done = subprocess.run(["tmux", "show-options", "-sv", "set-clipboard"],
                              capture_output=True, text=True, timeout=1, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def osc52_doubtful(env: Mapping[str, str] | None = None,
                   tmux_option: Callable[[], str | None] = tmux_clipboard) -> bool:
    """Whether this terminal is known to drop OSC 52 writes. Most take them (iTerm2, kitty,
    WezTerm, Alacritty, foot, Windows Terminal, xterm with its default window ops)."""
    env = os.environ if env is None else env
    if env.get("TERM_PROGRAM") == "Apple_Terminal":
        return True
    if env.get("VTE_VERSION"):  # GNOME Terminal, Tilix, Terminator ...: VTE ignores OSC 52
        return True
    if env.get("TERM") == "linux":  # the Linux console has no clipboard
        return True
    if env.get("STY"):  # GNU screen keeps OSC 52 to itself
        return True
    # tmux passes an application's OSC 52 on only with set-clipboard on (its default,
    # "external", is for tmux's own copies).
    return bool(env.get("TMUX")) and tmux_option() != "on"


def copy_out(copy_to_clipboard: Callable[[str], None], text: str, what: str, path: Path,
             lang: str, doubtful: bool | None = None) -> tuple[str, str]:
    """Copy `text` by OSC 52 and to `path`; the line that says where it went, and its notice
    kind. `what` names it inside that line ("the python block (12 lines)")."""
    text = terminal_safe(text)
    copy_to_clipboard(text)
    if doubtful is None:
        doubtful = osc52_doubtful()
    try:
        write_whole(path, text)
    except OSError as err:
        key = "doubtful_unwritten" if doubtful else "copied_unwritten"
        return CLIPBOARD_TEXTS(lang, key, what=what, path=path, why=err.strerror or err), "warning"
    return CLIPBOARD_TEXTS(lang, "doubtful" if doubtful else "copied", what=what, path=path), \
        "warning" if doubtful else "info"
