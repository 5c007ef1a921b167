"""What the model is sent, in the app: each message's mark of its state in the next request,
and the "Next request" screen (F7, /request, the palette) in both languages."""

from __future__ import annotations

import json

from textual.widgets import Collapsible, Static

from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.specs import ONCE
from jarvis_tui.ui.screens.next_request import NextRequestScreen
from jarvis_tui.ui.widgets.message_view import MARK_COLOURS
from jarvis_tui.ui.widgets.text_pager import TextPager
from tests.core.engine.test_request_prefix import FACT
from tests.core.engine.test_tool_round import Box, always, numbered
from tests.engine_helpers import is_summary_request, make_engine, send, summarising_replies
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    prompt,
    send_and_wait,
    talk_then_compact,
    type_and_send,
    views,
    wait_for,
)

PASTE = "\n".join(f"log line {i}: connection reset by peer" for i in range(1500))
HOSTILE = "A literal [bold]tag[/] and [link=x]no link[/link]\x1b[31m stays text."


def label(view) -> str:  # type: ignore[no-untyped-def]
    return str(view.query_one(".label", Static).content)


async def open_report(pilot, how: str = "f7") -> NextRequestScreen:  # type: ignore[no-untyped-def]
    if how == "f7":
        await pilot.press("f7")
    else:
        await type_and_send(pilot, how)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, NextRequestScreen),
                   "the Next request screen")
    await pilot.pause()
    return pilot.app.screen


async def test_a_cut_paste_is_marked_in_its_header(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, compact_threshold=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, PASTE)
        paste = next(v for v in views(app) if v.message.content == PASTE)
        assert label(paste) == "You · ✂ sent cut"
        # In the theme's warning colour, not one of ours.
        mark = paste.query_one(".label", Static).content.spans[-1]  # type: ignore[union-attr]
        assert str(mark.style) == app.theme_variables[MARK_COLOURS["cut"]]
        dark = str(mark.style)
        app.theme = "jarvis-light"  # as the palette switches it
        await pilot.pause()
        mark = paste.query_one(".label", Static).content.spans[-1]  # type: ignore[union-attr]
        assert str(mark.style) == app.theme_variables[MARK_COLOURS["cut"]] != dark
        reply = views(app)[-1]
        assert label(reply) == "Jarvis"  # sent verbatim: nothing to say
        # Pinned: the label says "pinned", and the mark follows what the next request does.
        await type_and_send(pilot, "/pin")
        await wait_for(pilot, lambda: "📌" in label(views(app)[-1]), "the pin")
        assert label(views(app)[-1]) == "Jarvis · 📌 pinned"


async def test_the_marks_in_chinese(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, compact_threshold=1.0, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, PASTE)
        paste = next(v for v in views(app) if v.message.content == PASTE)
        assert label(paste) == "你 · ✂ 截断发送"


async def test_f7_shows_the_request_and_its_parts(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, system_prompt="Be brief.")
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, HOSTILE)
        prompt(app).load_text("and then?")
        screen = await open_report(pilot)
        report = screen.report
        assert report.wire[-1] == {"role": "user", "content": "and then?"}
        titles = [str(c.title) for c in screen.query(Collapsible)]
        assert titles[0] == f"System prompt · {report.parts[0].tokens:,} tokens"
        assert titles[1].startswith("You · verbatim · ")
        assert titles[2].startswith("Jarvis · verbatim · ")
        assert titles[3].startswith("You · your new message · ")
        total = str(screen.query_one("#total", Static).content)
        assert total.startswith(f"{report.tokens:,} of {report.budget:,} tokens")
        # Opened, the reply reads as the model receives it: brackets as text, no escape code.
        reply = screen.query(Collapsible)[2]
        reply.collapsed = False
        await pilot.pause()
        shown = str(reply.query_one(".part-text", Static).content)
        assert "[bold]tag[/]" in shown and "[link=x]no link[/link]" in shown
        assert "\x1b" not in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, NextRequestScreen), "closed")
        assert prompt(app).text == "and then?"  # the draft is still there


async def test_request_command_and_copy_as_json(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first question")
        screen = await open_report(pilot, "/request")
        wire = screen.report.wire
        await pilot.press("c")
        await wait_for(pilot, lambda: "next request as JSON" in (notices(app) or [""])[-1],
                       "the copy notice")
        copied = json.loads((tmp_path / "cache" / "copied.txt").read_text(encoding="utf-8"))
        assert copied == {"messages": wire}
        assert wire[-1]["content"].startswith("Reply")  # nothing typed: as it stands


async def test_the_screen_in_chinese(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, language="zh", compact_threshold=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, PASTE)
        screen = await open_report(pilot)
        assert screen.query_one("#dialog").border_title == "下一次请求：模型将收到的内容"
        titles = [str(c.title) for c in screen.query(Collapsible)]
        assert titles[0].startswith("系统提示词 · ")
        assert titles[1].startswith("你 · 截断（保留首尾） · ")
        assert screen.query("#compacts")  # past the threshold: said before the parts
        assert "已超过压缩阈值" in str(screen.query_one("#compacts", Static).content)


async def test_marks_follow_a_compaction_and_a_recall(fake_server, tmp_path):
    summarising_replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [FACT, *(f"Topic {i}: " + "filler words " * 60
                                                for i in range(3))])
        fact = next(v for v in views(app) if v.message.content == FACT)
        # Folded: the label's "in the summary" says it; the request adds nothing to say.
        await wait_for(pilot, lambda: label(fact) == "You · in the summary", "the fold")
        await send_and_wait(pilot, "Which port did the staging database db-staging-7 use?")
        await wait_for(pilot, lambda: label(fact) == "You · in the summary · ↩ recalled",
                       f"the recalled mark, not {label(fact)!r}")


async def test_a_turn_that_no_longer_fits_is_marked(fake_server, tmp_path):
    # Three turns the window cannot hold together, and a summariser that writes nothing: the
    # compactions fail and the window alone decides what is sent.
    fake_server.reply_fn = lambda body: "" if is_summary_request(body) else "Noted."
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        big = " ".join(f"word{i}" for i in range(700))
        for i in range(3):
            await send_and_wait(pilot, f"Part {i}: {big}")
        first = views(app)[0]
        assert label(first) == "You · not sent: no room"
        assert app.chat.session.request_states()[first.message.id] == "left out"
        assert label(views(app)[-2]) == "You"


async def test_a_stub_is_said_on_its_block_after_a_restart(make_fake_server, tmp_path):
    """Stubbed by a session run before: the app was never told (no event this run), the plan
    knows."""
    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(60, path))
    store = Store(tmp_path / "sessions.db")
    engine = make_engine(fake, tmp_path, store=store, tools=box, approve=always(ONCE),
                         tool_keep_outputs=1)
    for name in ("alpha", "beta", "gamma", "delta", "epsilon"):
        fake.script += [[{"name": "read", "arguments": {"path": name}}], f"read {name}"]
        await send(engine, f"read {name}")
    stubbed = [m.id for m in engine.messages if m.role == "tool"
               and engine.sent.texts.get(m.id, "").startswith("[Tool output not repeated")]
    assert stubbed
    app = make_app(fake, tmp_path, store=Store(tmp_path / "sessions.db"), tool_keep_outputs=1)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(v.tool_block for v in views(app)), "the tool blocks")
        await pilot.pause()
        blocks = {v.message.id: v.tool_block for v in views(app) if v.tool_block is not None}
        assert all("sent as a stub" in blocks[i].status_text() for i in stubbed if i in blocks)
        assert any(i in blocks for i in stubbed)
        newest = max(blocks)
        assert "sent as a stub" not in blocks[newest].status_text()


async def test_a_long_part_opens_in_a_pager(make_fake_server, tmp_path):
    app = make_app(make_fake_server(limit=32768), tmp_path, context_window=32768)
    async with app.run_test(size=SIZE) as pilot:
        long = "\n".join(f"row {i}: [dim]{'x' * 40}[/dim]" for i in range(600))
        await send_and_wait(pilot, long)
        screen = await open_report(pilot)
        part = next(i for i, p in enumerate(screen.report.parts) if p.text == long)
        assert screen.report.parts[part].state == "verbatim"
        collapsible = screen.query(Collapsible)[part]
        assert not collapsible.query(".part-text")  # drawn only once opened
        collapsible.collapsed = False
        await pilot.pause()
        pager = collapsible.query_one(TextPager)
        assert pager.text == long


async def test_one_message_is_counted_as_one(fake_server, tmp_path):
    """Issue 39, item 14: "(1 messages)"."""
    app = make_app(fake_server, tmp_path, system_prompt="")
    async with app.run_test(size=SIZE) as pilot:
        prompt(app).load_text("only this")
        screen = await open_report(pilot)
        assert len(screen.report.wire) == 1
        assert str(screen.query_one("#total", Static).content).endswith(" · 1 message")
        await pilot.press("c")
        await wait_for(pilot, lambda: "next request as JSON" in (notices(app) or [""])[-1],
                       "the copy notice")
        assert "the next request as JSON (1 message)" in notices(app)[-1]
