"""Screen snapshots (pytest-textual-snapshot) of the main screen mid-conversation, the summary
editor and the settings screen, in our dark and light themes.

The session is built in a real SQLite file with a fixed clock, so every run draws the same
screen. Update after a deliberate change with `pytest tests/ui/test_snapshots.py --snapshot-update`
and look at the SVGs (tests/ui/__snapshots__) before committing them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from itertools import count
from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.app import JarvisApp
from tests.engine_helpers import BASE

# The developers' loop leaves the pixel pictures out (`-m "not snapshot"`, see README).
pytestmark = pytest.mark.snapshot

SIZE = (110, 34)
START = 1_790_000_000.0  # a fixed moment, so the summary panel shows the same time every run

TURNS = [
    ("我们要把日志服务迁移到新的集群，先列出步骤。",
     "好的，迁移步骤：\n\n1. 备份 `/var/log/app`\n2. 在新集群部署 **collector**\n3. 切换 DNS"),
    ("The collector config is at /etc/collector.yaml, port 8443.",
     "Noted: `/etc/collector.yaml`, port **8443**. Keep TLS on."),
    ("How do I check the new collector is receiving logs?",
     "Tail its own log and send a test line:\n\n```bash\nlogger -t probe hello\n"
     "journalctl -u collector -n 20\n```\n\nIf `probe` shows up, it works. "
     "A literal [bold]tag[/] stays text."),
]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def build_app(tmp_path: Path, theme: str, memory: bool = False) -> JarvisApp:
    ticks = count()
    store = Store(tmp_path / "sessions.db", clock=lambda: START + next(ticks))
    conv = store.create_conversation(model="qwen2.5-7b-instruct")
    stored: list[Message] = []
    for i, (question, answer) in enumerate(TURNS):
        for role, text in (("user", question), ("assistant", answer)):
            msg = Message(role, text, created_at=START + i)
            stored.append(store.add_message(conv.id, msg))
    store.add_summary(conv.id, "目标：把日志服务迁移到新集群。\n步骤：备份 /var/log/app，部署 "
                      "collector，切换 DNS。", stored[:2], kind="auto", model="qwen2.5-7b-instruct")
    if memory:  # entries sent, one left out for a small budget, and a suggestion
        store.add_memory("The collector listens on port 8443 with TLS on", conversation_id=conv.id,
                         message_id=stored[2].id)
        store.add_memory("I prefer the command first, then the why", kind="preference")
        store.add_memory("我们决定用 PostgreSQL 作为主数据库", kind="decision", state="suggested",
                         conversation_id=conv.id)
        pinned = store.add_memory("My name is Ada")
        store.update_memory(pinned.id, pinned=True)
    settings = replace(BASE, model="qwen2.5-7b-instruct", base_url="http://127.0.0.1:8080/v1",
                       context_window=4096, theme=theme, language="en",
                       memory_budget=40 if memory else BASE.memory_budget)
    return JarvisApp(settings, store,
                     config_file=Path("/home/you/.config/jarvis-tui/config.toml"))


def steady(*keys: str):
    """Press keys, then stop cursors blinking so the picture does not depend on the moment."""

    async def run(pilot):
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)  # the gauge counts a draft once typing pauses
        # A screen just pushed focuses its box after a refresh, which a loaded machine may not
        # have drawn yet: without the focus, the box's cursor is missing from the picture. The
        # box draws its cursor from has_focus, which follows screen.focused one event later.
        for _ in range(250):
            focused = pilot.app.screen.focused
            if focused is not None and focused.has_focus:
                break
            await pilot.pause(0.02)
        for box in [*pilot.app.screen.query(TextArea), *pilot.app.screen.query(Input)]:
            box.cursor_blink = False
            if isinstance(box, TextArea):
                # A line drawn while the blink was off is cached under the same key as one
                # drawn with the blink stopped (Textual 8 keys the cursor only while it
                # blinks), so it would come back without the cursor: draw the lines anew.
                box._line_cache.clear()
                box.refresh()
        await pilot.pause()

    return run


@pytest.mark.parametrize("theme", ["jarvis-dark", "jarvis-light"])
def test_main_screen_mid_conversation(snap_compare, tmp_path, theme):
    assert snap_compare(build_app(tmp_path, theme), terminal_size=SIZE,
                        run_before=steady(*"and rollback?"))


@pytest.mark.parametrize("theme", ["jarvis-dark", "jarvis-light"])
def test_summary_editor(snap_compare, tmp_path, theme):
    assert snap_compare(build_app(tmp_path, theme), terminal_size=SIZE, run_before=steady("f2"))


@pytest.mark.parametrize("theme", ["jarvis-dark", "jarvis-light"])
def test_settings_screen(snap_compare, tmp_path, theme):
    assert snap_compare(build_app(tmp_path, theme), terminal_size=SIZE, run_before=steady("f3"))


@pytest.mark.parametrize("theme", ["jarvis-dark", "jarvis-light"])
def test_memory_screen(snap_compare, tmp_path, theme):
    assert snap_compare(build_app(tmp_path, theme, memory=True), terminal_size=SIZE,
                        run_before=steady("f6"))


@pytest.mark.parametrize("theme", ["jarvis-dark", "jarvis-light"])
def test_next_request_screen(snap_compare, tmp_path, theme):
    """F7 with a draft typed: the parts with their tokens, the summary opened (Tab to it)."""
    assert snap_compare(build_app(tmp_path, theme, memory=True), terminal_size=SIZE,
                        run_before=steady(*"and rollback?", "f7", "tab", "tab", "enter"))


def build_tool_app(tmp_path: Path) -> JarvisApp:
    """A turn that used tools: a small result, a long one (collapsed), a refused call."""
    ticks = count()
    store = Store(tmp_path / "sessions.db", clock=lambda: START + next(ticks))
    conv = store.create_conversation(model="qwen2.5-7b-instruct")

    def call(i: int, name: str, args: str) -> dict:
        return {"id": f"call_{i}", "type": "function",
                "function": {"name": name, "arguments": args}}

    log = "\n".join(f"commit {i:040x}\nAuthor: Ada <ada@example.com>\n\n    Revision {i}"
                    for i in range(30, 0, -1))
    messages = [
        Message("user", "What changed in the repo lately? 看一下状态和日志。"),
        Message("assistant", "", tool_calls=[
            call(1, "git_status", '{"repo_path": "/srv/app"}'),
            call(2, "git_log", '{"repo_path": "/srv/app", "max_count": 30}'),
            call(3, "git_reset", '{"repo_path": "/srv/app"}')]),
        Message("tool", "On branch main\nChanges not staged: module.py [bold]x[/]",
                tool_call_id="call_1", name="git_status"),
        Message("tool", log, tool_call_id="call_2", name="git_log"),
        Message("tool", "Error: the user did not allow this call of git_reset",
                tool_call_id="call_3", name="git_reset"),
        Message("assistant", "Thirty revisions of `module.py`; one unstaged change."),
    ]
    for i, msg in enumerate(messages):
        msg.created_at = START + i
        store.add_message(conv.id, msg)
    settings = replace(BASE, model="qwen2.5-7b-instruct", base_url="http://127.0.0.1:8080/v1",
                       context_window=4096, theme="jarvis-dark", language="en")
    return JarvisApp(settings, store,
                     config_file=Path("/home/you/.config/jarvis-tui/config.toml"))


def test_tool_calls_and_results(snap_compare, tmp_path):
    assert snap_compare(build_tool_app(tmp_path), terminal_size=(110, 40), run_before=steady())


async def settled(pilot) -> None:
    """Until the conversation's size and scroll stop moving (a notice just mounted wraps and
    scrolls over a few refreshes, sooner or later on a loaded machine)."""
    conversation = pilot.app.screen.query_one("#conversation")
    seen, same = None, 0
    for _ in range(250):
        now = (conversation.virtual_size, conversation.scroll_y, conversation.max_scroll_y)
        same = same + 1 if now == seen else 0
        if same >= 5:
            return
        seen = now
        await pilot.pause(0.02)


def attached(work: Path):
    """/attach a file, then @ with a few letters: the bar above the prompt and the @ list."""
    inner = steady(*"see @dep")

    async def run(pilot):
        await pilot.pause()
        box = pilot.app.screen.query_one(TextArea)
        box.load_text("/attach deploy.py")
        await pilot.press("enter")
        for _ in range(250):
            if pilot.app.screen.attached:
                break
            await pilot.pause(0.02)
        await settled(pilot)  # the notice said so: the conversation grew by its lines
        await inner(pilot)
        for _ in range(250):  # the walk runs in a thread: the list is whole once it ends
            paths = pilot.app.screen.paths
            if paths is not None and paths.done and pilot.app.screen._shown[1]:
                break
            await pilot.pause(0.02)
        await pilot.pause()

    return run


@pytest.mark.parametrize("theme", ["jarvis-dark"])
def test_attachments_and_the_at_list(snap_compare, tmp_path, theme, monkeypatch):
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "deploy.py").write_text("def deploy(port):\n    serve(port)\n", encoding="utf-8")
    (work / "deploy_notes.md").write_text("# Deploy\n\nPort 8443.\n", encoding="utf-8")
    (work / "src" / "app.py").write_text("print('app')\n", encoding="utf-8")
    monkeypatch.chdir(work)
    # Tall enough for the whole conversation: where a scrolled one rests after the notice
    # depends on the moment its lines wrapped, which the picture must not.
    assert snap_compare(build_app(tmp_path, theme), terminal_size=(110, 58),
                        run_before=attached(work))
