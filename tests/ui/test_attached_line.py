"""A file sent with a question shows in the conversation as one line (name, size, lines), not
as the thousands of lines it holds: right after the send, and in a session opened again from
the store. The message keeps the whole file for the model, V and copy."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.core.attach.message import Sending, message_with
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.messages import Attached, Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.widgets.attached_line import user_body
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    screen_text,
    send_and_wait,
    type_and_send,
    views,
    wait_for,
)

LOG = "".join(f"2026-12-05 10:00:{i % 60:02d} worker step {i:04d} done\n" for i in range(2000))
QUESTION = "why does [b]step[/b] 1999 take [red]so long[/red]?"


def body(view) -> str:  # type: ignore[no-untyped-def]
    return str(view.query_one(".body", Static).content)


def working_in(tmp_path: Path, monkeypatch) -> Path:
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    (work / "logs" / "worker.log").write_text(LOG, encoding="utf-8")
    (work / "notes [draft].md").write_text("# Notes\n\nstep 3 is slow\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


async def attach(pilot, given: str) -> None:  # type: ignore[no-untyped-def]
    before = len(pilot.app.chat.attached)
    await type_and_send(pilot, f"/attach {given}")
    await wait_for(pilot, lambda: len(pilot.app.chat.attached) > before, f"{given} attached")


async def test_a_sent_file_shows_as_one_line(fake_server, tmp_path, monkeypatch):
    working_in(tmp_path, monkeypatch)
    # Room for the whole log: one the window cannot hold goes as its digest.
    app = make_app(fake_server, tmp_path, context_window=131_072)
    async with app.run_test(size=SIZE) as pilot:
        await attach(pilot, "logs/worker.log")
        await send_and_wait(pilot, QUESTION)
        shown = body(views(app)[0])
        size = size_text(len(LOG))
        assert shown == f"📎 logs/worker.log · {size} · 2,000 lines\n\n{QUESTION}"
        screen = screen_text(app)
        assert f"logs/worker.log · {size} · 2,000 lines" in screen
        assert "[b]step[/b] 1999" in screen  # the user's brackets, not markup
        assert "worker step 0000" not in screen and "worker step 1999" not in screen
        # Only the screen is shorter: the file went whole, and the message keeps every line.
        sent = fake_server.chat_requests[-1].body["messages"][-1]["content"]
        assert sent.startswith(f"Attached file logs/worker.log (2,000 lines, {size}):\n")
        assert LOG in views(app)[0].message.content


async def test_a_reopened_session_shows_each_file_as_one_line(fake_server, tmp_path,
                                                               monkeypatch):
    work = working_in(tmp_path, monkeypatch)
    outside = tmp_path / "elsewhere" / "deploy.py"
    outside.parent.mkdir()
    outside.write_text("def deploy():\n    pass\n", encoding="utf-8")
    store = Store(tmp_path / "sessions.db")
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await attach(pilot, "logs/worker.log:10-29")
        await attach(pilot, "notes [draft].md")
        await attach(pilot, "logs")
        await attach(pilot, str(outside))
        await send_and_wait(pilot, QUESTION)
        live = body(views(app)[0])
    part = size_text(len("".join(LOG.splitlines(keepends=True)[9:29]).encode()))
    lines = [f"📎 logs/worker.log (lines 10-29) · {part}",
             "📎 notes [draft].md · 24 B · 3 lines",
             "📎 logs/ · listing",
             "📎 deploy.py · 23 B · 2 lines"]  # outside the working folder: its name only
    assert live == "\n".join(lines) + f"\n\n{QUESTION}"

    again = make_app(fake_server, tmp_path, store=store, language="zh")
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(views(again)) == 2, "the session reopened")
        assert views(again)[0].message.attachments  # read back from the store
        assert body(views(again)[0]) == "\n".join([
            f"📎 logs/worker.log（第 10-29 行）· {part}",
            "📎 notes [draft].md · 24 B · 3 行",
            "📎 logs/ · 文件夹清单",
            "📎 deploy.py · 23 B · 2 行"]) + f"\n\n{QUESTION}"
        screen = screen_text(again)
        assert "worker step 0010" not in screen and "step 3 is slow" not in screen
        assert str(work) not in screen and str(outside) not in screen


def test_an_image_a_digest_and_a_record_that_does_not_fit():
    image = "[Attached image shot.png: 640x480 pixels, 12.0 KB]"
    digest = "Attached file (digest only; it is too large to send whole): big.log: log, …"
    content = f"{image}\n\n{digest}\n\nwhat is [this]?"
    at = content.index(digest)
    message = Message("user", content, attachments=(
        Attached("/home/u/shot.png", "image", "", 12_288, 0, 0, len(image), width=640,
                 height=480, media_type="image/png"),
        Attached("/var/log/big.log", "text", "", 9_000_000, 0, at, at + len(digest),
                 how="digest")))
    assert user_body(message, "en", Path("/home/u")).plain == (
        "📎 shot.png · 640x480 · 12.0 KB\n"
        "📎 big.log · 8.6 MB · digest (the model reads it in ranges)\n\nwhat is [this]?")
    # A span past the text (a record from another message) hides nothing of it.
    odd = Message("user", "just words", attachments=(
        Attached("/x", "text", "", 1, 0, 5, 500),))
    assert user_body(odd, "en").plain == "just words"
    # A name's invisible marks are written out: the line shows the name the file system has.
    tricky = Message("user", image, attachments=(
        Attached("/home/u/gpj.\u202egnp", "image", "", 10, 0, 0, len(image), width=1,
                 height=1),))
    assert user_body(tricky, "en", Path("/home/u")).plain.startswith(
        "📎 gpj.<U+202E>gnp · 1x1 · ")


async def test_huge_words_after_a_file_are_cut_as_any_huge_message(fake_server, tmp_path):
    (tmp_path / "a.txt").write_text("one line\n", encoding="utf-8")
    pasted = "".join(f"pasted line {i}\n" for i in range(5_000)) + "THE END"
    with Store(tmp_path / "sessions.db") as store:
        conv = store.create_conversation()
        store.add_message(conv.id, message_with(pasted, [Sending(read_path("a.txt", tmp_path))]))
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(views(app)) == 1, "the session")
        view = views(app)[0]
        assert body(view).startswith("📎 a.txt · 9 B · 1 line\n\npasted line 0\n")
        assert "characters" in str(view.query_one(".cut", Static).content)
        assert str(view.query_one(".tail", Static).content).endswith("THE END")
