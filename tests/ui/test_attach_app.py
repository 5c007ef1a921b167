"""Attachments in the app, driven by Pilot against a fake provider on loopback: /attach shows
the file above the prompt with its tokens, the gauge counts it before anything is sent, the
send carries it as it was read, and what cannot be attached says why and leaves the prompt."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import Static

from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.ui.widgets.attachment_bar import AttachmentBar
from jarvis_tui.ui.widgets.mention_list import MentionList
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from jarvis_tui.ui.widgets.tool_block import ToolBlock
from tests.fakeserver import SentImage
from tests.images import image
from tests.ui.app_helpers import SIZE, make_app, notices, prompt, type_and_send, wait_for

CODE = "def deploy(port):\n    serve(port)\n\n\ndef serve(port):\n    raise OSError(port)\n"


def bar(app) -> AttachmentBar:
    return app.chat.query_one(AttachmentBar)


def working_in(tmp_path: Path, monkeypatch, files: dict[str, str | bytes]) -> Path:
    """A working folder holding `files` (path -> text or bytes), made the current one."""
    work = tmp_path / "work"
    work.mkdir()
    for name, data in files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    monkeypatch.chdir(work)
    return work


async def test_attach_shows_the_cost_and_the_send_carries_the_file(fake_server, tmp_path,
                                                                 monkeypatch):
    work = working_in(tmp_path, monkeypatch, {"deploy.py": CODE})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach deploy.py")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        chip = bar(app).chips[0]
        assert chip.label.startswith("deploy.py · 77 B · ") and chip.label.endswith(" tokens")
        assert bar(app).display and "Sending adds" in bar(app).footer
        tokens = int(chip.label.split(" · ")[2].split()[0])
        # Counted before sending: the gauge's pending message is the file's block.
        gauge = app.chat.query_one(TokenGauge)
        assert gauge.usage.pending >= tokens > 20
        # Its own segment and row, apart from what is typed.
        assert gauge.usage.attached == tokens
        row = next(line for line in str(gauge.render()).splitlines() if "attached files" in line)
        assert row.rstrip().endswith(f"{tokens:,}")
        assert any("deploy.py is attached" in n for n in notices(app))
        await type_and_send(pilot, "why does it fail?")
        await wait_for(pilot, lambda: fake_server.chat_requests, "the request")
        sent = fake_server.chat_requests[-1].body["messages"][-1]["content"]
        assert sent.startswith("Attached file deploy.py (6 lines, 77 B):\n```python\n")
        assert sent.endswith("\n\nwhy does it fail?")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply")
        assert not bar(app).chips and not bar(app).display
        stored = app.session._store.messages(app.chat.cid)[0]
        assert stored.attachments[0].path == str(work / "deploy.py")


async def test_what_cannot_be_attached_and_taking_one_away(fake_server, tmp_path, monkeypatch):
    working_in(tmp_path, monkeypatch, {"a.txt": "first file\n", "b.txt": "second file\n"})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach nothing.txt")
        await wait_for(pilot, lambda: any("Not attached" in n for n in notices(app)),
                       "the refusal")
        assert "Not attached: there is no file or folder at nothing.txt" in notices(app)
        assert not bar(app).chips
        await type_and_send(pilot, "/attach a.txt")
        await type_and_send(pilot, "/attach b.txt")
        await wait_for(pilot, lambda: len(bar(app).chips) == 2, "two chips")
        await type_and_send(pilot, "/detach 3")
        assert "There is no attachment 3: /detach N (1 to 2), or /detach for all" \
            in notices(app)
        await type_and_send(pilot, "/detach 1")
        assert [c.label.split(" · ")[0] for c in bar(app).chips] == ["b.txt"]
        await pilot.click(AttachmentBar, offset=(4, 0))  # a click on its line takes it away
        await wait_for(pilot, lambda: not bar(app).chips, "the chip clicked away")
        assert not bar(app).display and fake_server.chat_requests == []
        assert prompt(app).text == ""


async def test_a_file_larger_than_the_window_goes_as_a_digest_the_model_reads(
        fake_server, tmp_path, monkeypatch):
    log = "".join(f"2026-12-05 10:00:{i % 60:02d} INFO request {i} served in {i % 97} ms\n"
                  for i in range(1500))
    working_in(tmp_path, monkeypatch, {"big.log": log})
    app = make_app(fake_server, tmp_path, context_window=4096)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach big.log")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        # The default keeps the conversation whole: the digest, with the choices said.
        assert " · digest · " in bar(app).chips[0].label and not bar(app).chips[0].warning
        assert any("big.log (" in n and "it goes as a digest" in n and "/as 1 whole" in n
                   for n in notices(app))
        assert "Sending adds" in bar(app).footer and "more than the window" not in \
            bar(app).footer
        # Whole, it says what that costs before anything is sent.
        await type_and_send(pilot, "/as 1 whole")
        assert bar(app).chips[0].warning.startswith("larger than the window can hold (")
        assert "it goes cut to its start and end; /as 1 digest sends its digest" \
            in bar(app).chips[0].warning
        assert "more than the window" in bar(app).footer
        await type_and_send(pilot, "/as 1 1-20")
        part = size_text(len("".join(log.splitlines(keepends=True)[:20]).encode()))
        assert bar(app).chips[0].label.startswith(f"big.log (lines 1-20) · {part} · ")
        assert not bar(app).chips[0].warning
        await type_and_send(pilot, "/as 1 2000-2100")
        assert any("lines 2000-2100 are not in it" in n for n in notices(app))
        await type_and_send(pilot, "/as 2 whole")
        assert any("How attachment N goes: /as N whole" in n for n in notices(app))
        await type_and_send(pilot, "/as 1 digest")
        assert " · digest · " in bar(app).chips[0].label
        # Sent: the digest, and the model reads lines of it without asking anyone.
        await type_and_send(pilot, 'call read_attachment {"path": "big.log", "first_line": '
                                   '700, "last_line": 701}')
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and len(fake_server.chat_requests) >= 2, "the reply")
        question, *_, result = [m for m in fake_server.chat_requests[-1].body["messages"]
                                if m["role"] in ("user", "tool")]
        assert question["content"].startswith("Attached file (digest only; it is too large")
        assert "request 700 served" not in question["content"]
        assert result["content"].splitlines()[1:] == [
            "   700\t2026-12-05 10:00:39 INFO request 699 served in 20 ms",
            "   701\t2026-12-05 10:00:40 INFO request 700 served in 21 ms"]
        (read,) = [b for b in app.chat.query(ToolBlock) if b.is_builtin]
        assert str(read.title()) == "📎 read big.log, lines 700-701"  # one line, no approval


async def test_the_bar_says_how_many_turns_a_send_folds_and_the_send_folds_them(
        fake_server, tmp_path, monkeypatch):
    notes = "".join(f"Note {i}: the deploy step {i} waits for the database to settle.\n"
                    for i in range(130))
    working_in(tmp_path, monkeypatch, {"notes.txt": notes})
    app = make_app(fake_server, tmp_path, context_window=4096, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(4):
            await type_and_send(pilot, f"Question {i}: " + "tell me about windows. " * 20)
            await wait_for(pilot, lambda n=i: app.chat.reply.question is None
                           and len(fake_server.chat_requests) > n, "a reply")
        await type_and_send(pilot, "/attach notes.txt")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        footer = bar(app).footer
        assert "where older turns are summarised first (" in footer
        said = int(footer.split("summarised first (")[1].split(" turn")[0])
        assert said >= 1
        await type_and_send(pilot, "And with these notes?")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.summary is not None, "the compaction and reply")
        covered = [m for m in app.chat.session.messages if m.covered and m.role == "user"]
        assert len(covered) == said


async def test_at_offers_paths_as_typed_and_tab_attaches_one(fake_server, tmp_path,
                                                             monkeypatch):
    working_in(tmp_path, monkeypatch, {"src/deploy.py": CODE, "src/notes.md": "notes\n",
                                       "build/deploy.o": b"\0", ".gitignore": "build/\n"})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box = prompt(app)
        box.focus()
        await pilot.press("l", "o", "o", "k", "space", "@")
        listing = app.chat.query_one(MentionList)
        await wait_for(pilot, lambda: listing.open and app.chat.paths.done, "the @ list")
        await pilot.press("d", "e", "p")
        await wait_for(pilot, lambda: listing.picked() == "src/deploy.py", "the match")
        assert listing.option_count == 1  # build/ is ignored by .gitignore
        await pilot.press("tab")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        assert bar(app).chips[0].label.startswith("src/deploy.py · ")
        assert box.text == "look " and not listing.open
        # Esc closes the list and leaves what was typed; Enter then sends.
        await pilot.press("@", "n", "o")
        await wait_for(pilot, lambda: listing.open, "the list again")
        await pilot.press("escape")
        assert not listing.open and box.text == "look @no"
        assert app.chat.reply.question is None  # Esc closed the list, it stopped nothing


async def test_a_file_gone_or_changed_before_the_send_stops_it(fake_server, tmp_path,
                                                               monkeypatch):
    work = working_in(tmp_path, monkeypatch, {"a.txt": "as attached\n"})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach a.txt")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        (work / "a.txt").write_text("edited after it was attached\n", encoding="utf-8")
        await type_and_send(pilot, "what does it say?")
        await wait_for(pilot, lambda: any("Not sent" in n for n in notices(app)), "the stop")
        assert ("Not sent: a.txt changed since it was attached; /detach it and attach it "
                "again to send it as it is now") in notices(app)
        assert prompt(app).text == "what does it say?" and bar(app).chips
        (work / "a.txt").unlink()
        prompt(app).clear()
        await type_and_send(pilot, "and now?")
        await wait_for(pilot, lambda: any("is gone" in n for n in notices(app)), "the stop")
        assert ("Not sent: a.txt is gone since it was attached; /detach it, or attach it again"
                in notices(app))
        assert prompt(app).text == "and now?" and fake_server.chat_requests == []


async def test_a_pasted_path_is_attached_with_one_key(fake_server, tmp_path, monkeypatch):
    work = working_in(tmp_path, monkeypatch, {"notes.md": "the notes\n"})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box = prompt(app)
        box.focus()
        await pilot.press("s", "e", "e", "space")
        app.post_message(events.Paste(f"'{work / 'notes.md'}'"))  # a file manager's quotes
        await wait_for(pilot, lambda: "Ctrl+T attaches the file" in str(
            app.chat.query_one("#status", Static).content), "the hint")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        assert box.text == "see " and bar(app).chips[0].label.startswith("notes.md · ")
        await pilot.press("ctrl+t")  # nothing pasted any more
        assert "There is no pasted path to attach" in " ".join(notices(app))


async def test_an_image_is_scaled_sent_and_shown_as_a_picture(fake_server, tmp_path,
                                                             monkeypatch):
    working_in(tmp_path, monkeypatch, {"shot.png": image(4000, 3000, "PNG", (30, 160, 90))})
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach shot.png")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        # OpenAI's limit for a detailed image: 2048 on the long side, 768 on the short.
        label = bar(app).chips[0].label
        assert label.startswith("shot.png · 1024x768 · ") and label.endswith(" tokens")
        assert any("shot.png is 4000x3000 pixels; it goes scaled down to 1024x768" in n
                   for n in notices(app))
        await type_and_send(pilot, "what is this?")
        await wait_for(pilot, lambda: fake_server.chat_requests
                       and app.chat.reply.question is None, "the reply")
        assert fake_server.chat_requests[-1].images == [SentImage("image/png", 1024, 768)]
        shown = app.chat.query(".picture")
        assert len(shown) == 1
        cells = shown.first(Static).render()
        assert "▀" in str(cells) and len(str(cells).splitlines()) <= 12
        body = app.chat.query("MessageView.-user .body").last(Static).render()
        sent_size = label.split(" · ")[2]  # the scaled bytes, as the chip said
        assert f"📎 shot.png · 1024x768 · {sent_size}" in str(body)
        assert "what is this?" in str(body)
        wire = fake_server.chat_requests[-1].body["messages"][-1]["content"][-1]["text"]
        assert wire.startswith(f"[Attached image shot.png: 1024x768 pixels, {sent_size}]")


async def test_the_bundled_model_is_not_sent_an_image(fake_server, tmp_path, monkeypatch):
    working_in(tmp_path, monkeypatch, {"shot.png": image(64, 64)})
    app = make_app(fake_server, tmp_path, model="qwen2.5-coder-0.5b-instruct")
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach shot.png")
        await wait_for(pilot, lambda: any("takes no images" in n for n in notices(app)),
                       "the refusal")
        assert ("Not attached: qwen2.5-coder-0.5b-instruct takes no images; choose a model "
                "that reads images (the model setting) to send shot.png") in notices(app)
        assert not bar(app).chips


async def test_for_the_bundled_model_a_large_file_goes_as_its_first_lines(fake_server, tmp_path,
                                                                          monkeypatch):
    log = "".join(f"2026-12-05 10:00:{i % 60:02d} INFO request {i} served\n" for i in range(3000))
    working_in(tmp_path, monkeypatch, {"big.log": log})
    app = make_app(fake_server, tmp_path, model="qwen2.5-coder-0.5b-instruct",
                   context_window=4096)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/attach big.log")
        await wait_for(pilot, lambda: bar(app).chips, "the chip")
        label, budget = bar(app).chips[0].label, app.chat.session.usage().budget
        assert label.startswith("big.log (lines 1-") and not bar(app).chips[0].warning
        tokens = int(label.split(" · ")[-1].split()[0].replace(",", ""))
        assert budget // 4 < tokens <= budget // 2 + 60  # the lines within half the budget
        assert any("this model does not read files in ranges: lines 1-" in n
                   and "of 3,000 go" in n for n in notices(app))
