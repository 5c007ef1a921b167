"""Slash commands, keys, sessions, language and the background compaction, driven by Pilot."""

from __future__ import annotations

import json
import re
import threading
import tomllib
from dataclasses import replace

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.help import HelpScreen
from jarvis_tui.ui.screens.recall import RecallScreen
from jarvis_tui.ui.screens.sessions import SessionsScreen
from jarvis_tui.ui.widgets.conversation import MAX_VIEWS, PAGE, Conversation
from jarvis_tui.ui.widgets.message_view import MessageView
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.core.recall.test_recall import FACT_EN, lossy
from tests.engine_helpers import is_summary_request, summarising_replies
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    prompt,
    screen_text,
    send_and_wait,
    talk_then_compact,
    type_and_send,
    views,
    wait_for,
)


async def test_pin_export_and_copy(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "the staging host is 10.0.0.7")
        await type_and_send(pilot, "/pin")
        await pilot.pause()
        last = views(app)[-1]
        assert last.message.pinned and "📌" in str(last.query_one(".label").content)
        assert app.session._store.messages(app.chat.cid)[-1].pinned
        assert any(n.startswith("📌 Pinned") for n in notices(app))

        md, js = tmp_path / "out.md", tmp_path / "out.json"
        await type_and_send(pilot, f"/export {md}")
        await type_and_send(pilot, f"/export {js}")
        await pilot.pause()
        assert "the staging host is 10.0.0.7" in md.read_text()
        data = json.loads(js.read_text())
        assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
        await type_and_send(pilot, f"/export {tmp_path}/missing/dir/x.md")
        await pilot.pause()
        assert any(n.startswith("Could not export") for n in notices(app))

        await pilot.press("f4")
        assert app.clipboard == app.chat.session._engine.messages[-1].content


async def test_unknown_command_keeps_the_text_and_double_slash_sends(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/compcat now")
        await pilot.pause()
        assert prompt(app).text == "/compcat now"
        assert any("Unknown command /compcat" in n for n in notices(app))
        assert fake_server.requests == []
        await send_and_wait(pilot, "//compcat is a typo")
        assert fake_server.chat_requests[-1].body["messages"][-1]["content"] == \
            "/compcat is a typo"
        await send_and_wait(pilot, "/usr/bin/env is missing")  # a path, not a command
        assert views(app)[-2].message.content == "/usr/bin/env is missing"


async def test_help_lists_keys_and_commands(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        # Taller than the screen: the commands below the keys are reached by scrolling.
        text = screen_text(app)
        for _ in range(4):  # page by page: the commands outgrew two screenfuls
            await pilot.press("pagedown")
            await pilot.pause()
            text += screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        text += screen_text(app)
        for needle in ("/compact", "/pin", "/export", "/new", "/cost", "Summary", "Settings",
                       "Ctrl+J", "F2"):
            assert needle in text, needle
        await pilot.press("escape")
        await type_and_send(pilot, "/help")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_new_session_sessions_screen_and_resume(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first session topic")
        first = app.chat.cid
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.chat.cid != first and views(app) == []
        await send_and_wait(pilot, "第二个会话")
        second = app.chat.cid
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, SessionsScreen)
        assert "first session topic" in screen_text(app) and "第二个会话" in screen_text(app)
        app.screen.dismiss(first)
        await wait_for(pilot, lambda: app.chat.cid == first, "the resumed session")
        assert views(app)[0].message.content == "first session topic"
    # The last session used (here: resumed) reopens at start.
    again = make_app(fake_server, tmp_path, store=store)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.chat.cid == first
        await type_and_send(pilot, "/new")
        await pilot.pause()
        assert again.chat.cid not in (first, second) and views(again) == []
        await type_and_send(pilot, "/new")  # an empty session is not multiplied
        await pilot.pause()
    assert len(store.list_conversations()) == 3


async def test_long_sessions_mount_only_the_newest_views(fake_server, tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation()
    for i in range(MAX_VIEWS + 50):
        store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant", f"m{i}"))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = views(app)
        assert len(shown) == PAGE and shown[-1].message.content == f"m{MAX_VIEWS + 49}"
        earlier = f"… {MAX_VIEWS + 50 - PAGE} earlier messages above; scroll up to load them"
        assert any(n.startswith(earlier) for n in notices(app))
        await send_and_wait(pilot, "one more")
        assert len(views(app)) == PAGE + 2 and views(app)[-2].message.content == "one more"
        assert any(n.startswith(earlier) for n in notices(app))


async def test_chinese_interface(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "Enter 发送" in text and "帮助" in text and "新会话" in text


async def test_background_compaction_after_a_reply_and_send_waits(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    gate = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        for i in range(10):
            if app.chat.session._engine.usage().over_threshold:
                break
            fake_server.faults.clear()
            fake_server.faults.extend([None, ("hold", gate)])  # this reply, then a held summary
            await send_and_wait(pilot, f"question {i}: " + "explain the window " * 20)
        # The reply finished over the threshold: the compaction runs with nobody sending.
        await wait_for(pilot, lambda: app.chat.compaction_work.running, "the background compaction")
        assert app.chat.reply.question is None
        assert app.chat.query_one(TokenGauge).compacting
        assert app.chat.query_one(SummaryPanel).compacting
        await type_and_send(pilot, "next question")
        await pilot.pause()
        assert "Compacting the conversation first" in str(
            app.chat.query_one("#status").content)
        asked_while_held = len(fake_server.chat_requests)
        gate.set()
        await wait_for(pilot, lambda: not app.chat.reply.on_its_way
                       and not app.chat.compaction_work.running, "the reply after the compaction")
        # The held summary was asked first, and the question went out only after it was written.
        assert len(fake_server.chat_requests) == asked_while_held + 1
        summary, reply = fake_server.chat_requests[-2:]
        assert is_summary_request(summary.body)
        assert not is_summary_request(reply.body)
        assert [m["content"] for m in reply.body["messages"] if m["role"] == "user"][-1] \
            == "next question"
        assert app.chat.session._engine.summary is not None
        assert views(app)[-1].message.content.startswith("Reply")


async def test_themes_from_files_bad_file_reported_and_switch_saved(fake_server, tmp_path):
    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "broken.toml").write_text('name = "broken"\nprimary = "not-a-colour"\n')
    (themes / "mine.toml").write_text('name = "mine"\ndark = true\nprimary = "#88c0d0"\n')
    app = make_app(fake_server, tmp_path, config_text='model = "fake-model"\n')
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert {"jarvis-dark", "jarvis-light", "mine"} <= set(app.available_themes)
        assert "broken" not in app.available_themes
        shown = [n.message for n in app._notifications]
        assert any("broken.toml" in m for m in shown)
        assert app.theme == "jarvis-dark"
        app.theme = "mine"  # what the command palette's theme picker does
        await pilot.pause()
        assert tomllib.loads((tmp_path / "config.toml").read_text())["theme"] == "mine"


async def test_language_switch_from_settings_applies_at_once(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hello")
        await pilot.press("f3")
        app.screen.query_one("#field-language").value = "zh"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: chinese_and_loaded(app, 2), "the Chinese interface")
        footer = {b.binding.description for b in app.screen.active_bindings.values()}
        assert {"发送", "帮助", "摘要", "设置", "新会话"} <= footer
        assert [v.message.content for v in views(app)][0] == "hello"  # the session stays


async def test_missing_api_key_is_explained_before_sending(tmp_path):
    app = make_app("https://api.openai.com/v1", tmp_path, api_key="")
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "hello")
        await pilot.pause()
        assert any("No API key" in n for n in notices(app))
        assert prompt(app).text == "hello" and views(app) == []


async def test_scroll_keys_move_the_conversation_while_the_prompt_has_focus(fake_server,
                                                                             tmp_path):
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation()
    for i in range(60):
        store.add_message(conv.id, Message("user" if i % 2 == 0 else "assistant", f"line {i}"))
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        conversation = app.chat.query_one(Conversation)
        bottom = conversation.scroll_y
        assert bottom == conversation.max_scroll_y > 0
        await pilot.press("shift+pageup")
        # Away from the bottom (reaching the top may page older messages in above, which
        # moves scroll_y itself on, not the view).
        await wait_for(pilot, lambda: conversation.scroll_y < conversation.max_scroll_y,
                       "scrolling up")
        assert app.focused is prompt(app)
        await pilot.press("ctrl+down", "ctrl+down", "ctrl+down")
        await wait_for(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y,
                       "scrolling back down")


async def test_gauge_follows_typing_and_the_streaming_reply(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "token " * 300
    fake_server.chunk_delay = 0.01
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        gauge = app.chat.query_one(TokenGauge)
        assert gauge.used == 0
        await pilot.press(*"请把这段话翻译成英文")
        await wait_for(pilot, lambda: gauge.usage.pending > 0, "the draft counted")
        typed = gauge.used
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        await wait_for(pilot, lambda: gauge.used > typed + 50, "the streaming reply counted")
        await wait_for(pilot, lambda: app.chat.reply.question is None, "the reply ends")
        assert gauge.usage.pending == 0 and gauge.used == gauge.usage.history > typed


async def test_language_switch_waits_for_a_streaming_reply(fake_server, tmp_path):
    fake_server.reply_fn = lambda body: "word " * 300
    fake_server.chunk_delay = 0.01
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "talk")
        await wait_for(pilot, lambda: app.chat.reply.view is not None, "the reply starts")
        await app.apply_settings(replace(app.settings, language="zh"))
        assert app.chat.reply.question is not None  # not stopped by the redraw
        await wait_for(pilot, lambda: chinese_and_loaded(app, 2), "the Chinese interface")
        assert app.chat.reply.question is None
        assert [v.message.status for v in views(app)] == ["complete", "complete"]


async def test_the_window_is_asked_for_when_the_session_opens(make_fake_server, tmp_path):
    fake = make_fake_server(limit=3000, flavor="llamacpp")
    app = make_app(fake, tmp_path, context_window=0)
    async with app.run_test(size=SIZE) as pilot:
        gauge = app.chat.query_one(TokenGauge)
        await wait_for(pilot, lambda: gauge.usage is not None
                       and gauge.usage.context_window == 3000, "the detected window")
        assert gauge.usage.window_source == "detected from the server"
        assert any("3000-token context window" in n for n in notices(app))
        assert fake.chat_requests == []  # nothing was sent to find out


def chinese_and_loaded(app, messages: int) -> bool:
    """The new chat screen has loaded the session: its status line is set (in Chinese) and the
    messages are mounted. The placeholder alone is Chinese as soon as the screen composes."""
    status = app.chat.query("#status")
    return bool(status) and str(status.first().content).startswith("Enter 发送") \
        and len(app.chat.query(MessageView)) == messages


async def test_recall_lists_matches_and_enter_pins_a_summarised_turn_back(fake_server, tmp_path):

    lossy(fake_server)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120,
                   recall_budget=0.0)  # only the pin may bring it back
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [FACT_EN, "tell me about windows", "and tokens"])
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction")
        fact = next(m for m in app.chat.session._engine.messages if m.content == FACT_EN)
        assert fact.covered and not fact.pinned
        await type_and_send(pilot, "/recall")
        await wait_for(pilot, lambda: any("Usage: /recall" in n for n in notices(app)),
                       "the usage line")
        await type_and_send(pilot, "/recall zebra crossing")
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the recall list")
        assert "Nothing earlier in this session matches" in screen_text(app)
        await pilot.press("escape")
        await type_and_send(pilot, "/recall launch budget")
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen), "the recall list")
        shown = screen_text(app)
        assert "launch budget is 4,200 euros" in shown and "in the summary" in shown
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", shown)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is app.chat, "the chat screen")
        assert fact.pinned and app.session._store.messages(app.chat.cid)[0].pinned
        assert any(n.startswith("📌 Pinned") for n in notices(app))
        await send_and_wait(pilot, "so what do we do next?")
        sent = [m["content"] for m in fake_server.chat_requests[-1].body["messages"]]
        assert FACT_EN in sent  # verbatim, as a message of its own, though summarised
        await pilot.press("f3")  # the settings say what pinned messages take
        await wait_for(pilot, lambda: app.screen.query("#pinned"), "the settings")
        pinned = str(app.screen.query_one("#pinned").render())
        assert pinned.startswith("Pinned messages: 2, ") and "tokens" in pinned  # the turn


async def test_a_question_about_a_summarised_fact_says_it_was_recalled(fake_server, tmp_path):
    lossy(fake_server)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [FACT_EN, "tell me about windows", "and tokens"])
        await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction")
        await send_and_wait(pilot, "How much was the launch budget Anna approved?")
        said = [n for n in notices(app) if n.startswith("↺ Recalled 1 earlier turn")]
        assert len(said) == 1
        sent = fake_server.chat_requests[-1].body["messages"]
        # Beside the question, not in the system message (which then keeps the cached prefix).
        assert "Recalled from earlier" not in sent[0]["content"]
        assert FACT_EN in sent[-1]["content"].split("Recalled from earlier in this conversation")[1]
