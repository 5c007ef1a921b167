"""Steering a conversation in the app, as a user does it: /retry, /older and /newer, /edit and
resend, /forget and undo, /fork; each checked by what the next request to the fake server
holds, and by what the store and the export keep."""

from __future__ import annotations

import json

from jarvis_tui.core.store.store import Store
from jarvis_tui.ui.screens.confirm import ConfirmScreen
from tests.engine_helpers import summarising_replies
from tests.ui.app_helpers import (
    make_app,
    notices,
    prompt,
    send_and_wait,
    type_and_send,
    views,
    wait_for,
)

SIZE = (110, 36)


def sent(fake) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of the last chat request, system message left out."""
    return [m["content"] for m in fake.chat_requests[-1].body["messages"][1:]]


async def command_and_wait(pilot, app, text: str) -> None:  # type: ignore[no-untyped-def]
    before = len(app.chat.session._engine.messages)
    await type_and_send(pilot, text)
    await wait_for(pilot, lambda: app.chat.reply.question is None
                   and len(app.chat.session._engine.messages) >= before, text)
    await pilot.pause()


async def test_retry_keeps_both_replies_and_the_versions_switch(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first")
        await send_and_wait(pilot, "second")
        old = views(app)[-1].message
        # Before any retry nothing has versions: /older says so and changes nothing.
        await type_and_send(pilot, "/older")
        await pilot.pause()
        assert notices(app)[-1:] == ["This message has no other versions."]
        assert views(app)[-1].message is old
        requests = len(fake_server.chat_requests)
        await type_and_send(pilot, "/retry")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) > requests
                       and app.chat.reply.question is None, "the second answer")
        await pilot.pause()
        # The same request as the one the first reply answered, byte for byte: cached.
        assert fake_server.chat_requests[-1].body == fake_server.chat_requests[-2].body
        shown = [v.message.content for v in views(app)]
        assert shown[-1].startswith("Reply 3") and old.content not in shown
        assert any("Answering the question again" in n for n in notices(app))
        assert app.chat.session.branches.alternatives(views(app)[-1].message) == (2, 2)
        # /older brings the first reply back, and the next question follows it.
        await type_and_send(pilot, "/older")
        await pilot.pause()
        assert views(app)[-1].message is old
        await send_and_wait(pilot, "third")
        assert sent(fake_server)[-2:] == [old.content, "third"]
        # /older again: the newest message with versions is that reply, already the first of
        # its two, so nothing further that way: the same turns stay shown.
        shown = [v.message for v in views(app)]
        await type_and_send(pilot, "/older")
        await pilot.pause()
        assert [v.message for v in views(app)] == shown and shown[-3] is old
        assert app.chat.session.branches.alternatives(old) == (1, 2)
    with Store(tmp_path / "sessions.db") as store:
        contents = [m.content for m in store.messages(store.latest_conversation().id)]
    assert old.content in contents and any(c.startswith("Reply 3") for c in contents)


async def test_ctrl_r_answers_again(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "question")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: len(fake_server.chat_requests) == 2
                       and app.chat.reply.question is None, "the second answer")
        assert views(app)[-1].message.content.startswith("Reply 2")
        assert len(views(app)) == 2


async def test_edit_the_last_message_and_resend_starts_a_branch(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("one", "two", "three"):
            await send_and_wait(pilot, text)
        await type_and_send(pilot, "/edit")
        await pilot.pause()
        box = prompt(app)
        assert box.text == "three"
        three = app.chat.session.messages[-2]
        assert box.edit_of == three.id
        box.load_text("three, better")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.messages[-1].role == "assistant"
                       and "better" in app.chat.session.messages[-2].content, "the resend")
        assert sent(fake_server) == ["one", "Reply 1: one", "two", "Reply 2: two",
                                     "three, better"]
        assert [v.message.content for v in views(app)][-2:] == [
            "three, better", "Reply 4: three, better"]
        assert any("new branch" in n for n in notices(app))
    with Store(tmp_path / "sessions.db") as store:
        cid = store.latest_conversation().id
        data = store.export(cid)
    assert len(data["messages"]) == 8  # nothing deleted
    off = [m["content"] for m in data["messages"] if not m["on_branch_shown"]]
    assert off == ["three", "Reply 3: three"]


async def test_forget_takes_a_turn_out_and_undo_brings_it_back(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "keep me")
        await send_and_wait(pilot, "a pasted mistake " * 30)
        before = app.chat.session.usage().history
        await type_and_send(pilot, "/forget")
        await pilot.pause()
        assert app.chat.session.usage().history < before
        assert any("taken out of every request" in n for n in notices(app))
        assert [v.message.excluded for v in views(app)] == [False, False, True, True]
        await send_and_wait(pilot, "next")
        assert not any("mistake" in t for t in sent(fake_server))
        assert "keep me" in sent(fake_server)
        await type_and_send(pilot, "/forget")  # the last turn now is "next": taken out too
        await pilot.pause()
        await type_and_send(pilot, "/forget undo")
        await pilot.pause()
        await type_and_send(pilot, "/forget undo")
        await pilot.pause()
        await send_and_wait(pilot, "and now")
        assert any("mistake" in t for t in sent(fake_server)) and "next" in sent(fake_server)
        await app.chat.run_command("export", str(tmp_path / "out.json"))
        await pilot.pause()
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [m["excluded"] for m in data["messages"]].count(True) == 0
    assert len(data["messages"]) == 8


async def test_fork_opens_a_new_session_titled_by_where_it_came_from(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "plan the trip")
        await send_and_wait(pilot, "by train")
        first = app.chat.session.id
        await type_and_send(pilot, "/fork")
        await pilot.pause()
        assert app.chat.session.id != first
        assert "fork from" in app.chat.title and "Reply 2" in app.chat.title
        assert any("Forked into a new session" in n for n in notices(app))
        assert [v.message.content for v in views(app)][:2] == ["plan the trip",
                                                               "Reply 1: plan the trip"]
        await send_and_wait(pilot, "by plane instead")
        assert sent(fake_server)[-3:] == ["by train", "Reply 2: by train", "by plane instead"]
    with Store(tmp_path / "sessions.db") as store:
        assert len(store.messages(first)) == 4  # the old session is as it was


async def test_editing_a_summarised_message_offers_a_fork(fake_server, tmp_path):
    summarising_replies(fake_server, chat_words=60)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "the very first question")
        for i in range(12):
            if app.chat.session.summary is not None:
                break
            await send_and_wait(pilot, f"question {i}: " + "explain the window " * 20)
        await wait_for(pilot, lambda: app.chat.session.summary is not None
                       and not app.chat.compaction_work.running, "a summary")
        first = app.chat.session.messages[0]
        assert first.covered
        old_id = app.chat.session.id
        # As Enter does with the prompt editing that message (e on it, in message mode).
        await app.chat.resend(first.id, "the very first question, edited", prompt(app))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.session.id != old_id, "the fork")
        await pilot.pause()
        assert prompt(app).text == "the very first question, edited"
        # Nothing came before the first message: no fork, and no empty title (“”) quoted.
        said = [n for n in notices(app) if n.startswith("⑂")]
        assert said == ["⑂ Nothing came before the message you are editing, so it is in the "
                        "prompt of a new, empty session: change it and press Enter. The old "
                        "session is unchanged (Ctrl+O lists both)."], said
        assert app.chat.session.messages == []
        await send_and_wait(pilot, prompt(app).text)
        assert sent(fake_server) == ["the very first question, edited"]


def selected(app):  # type: ignore[no-untyped-def]
    from jarvis_tui.ui.widgets.conversation import Conversation

    return app.chat.query_one(Conversation).selected_view


async def select_message(pilot, app, content: str) -> None:  # type: ignore[no-untyped-def]
    """Tab into the conversation (unless there already), Home, and Down until the message
    reading `content` is selected."""
    from jarvis_tui.ui.widgets.conversation import Conversation

    if not app.chat.query_one(Conversation).has_focus:
        await pilot.press("tab")
        await pilot.pause()
    await pilot.press("home")
    await pilot.pause()
    for _ in range(20):
        if selected(app) is not None and selected(app).message.content == content:
            return
        await pilot.press("down")
        await pilot.pause()
    raise AssertionError(f"never selected {content!r}: focus {app.focused!r}, selected "
                         f"{selected(app) and selected(app).message.content!r}, shown "
                         f"{[v.message.content for v in views(app)]}")


async def test_keys_on_a_selected_message_steer_the_conversation(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("one", "two", "three"):
            await send_and_wait(pilot, text)
        # e on an earlier question: edited in the prompt, resent as a branch from there.
        await select_message(pilot, app, "two")
        await pilot.press("e")
        await pilot.pause()
        box = prompt(app)
        assert box.has_focus and box.text == "two" and box.edit_of is not None
        assert "Editing" in str(app.chat.query_one("#history").content)
        box.load_text("two, rephrased")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.messages[-1].content.startswith("Reply 4"),
                       "the answer on the new branch")
        assert sent(fake_server) == ["one", "Reply 1: one", "two, rephrased"]
        # The edited question shows its versions, and < brings the old branch back whole.
        question = views(app)[2]
        assert "2/2" in str(question.query_one(".label").content)
        await select_message(pilot, app, "two, rephrased")
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert [v.message.content for v in views(app)][2:] == [
            "two", "Reply 2: two", "three", "Reply 3: three"]
        # r on an earlier reply answers its question again, as a branch from it.
        await select_message(pilot, app, "Reply 1: one")
        await pilot.press("r")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.messages[-1].content.startswith("Reply 5"),
                       "the second answer to the first question")
        assert sent(fake_server) == ["one"]
        assert [v.message.content for v in views(app)] == ["one", "Reply 5: one"]
        # x on it takes the turn out (dimmed, marked), x again brings it back.
        await select_message(pilot, app, "Reply 5: one")
        await pilot.press("x")
        await pilot.pause()
        assert all(v.has_class("-excluded") for v in views(app))
        assert "excluded" in str(views(app)[1].query_one(".label").content)
        await pilot.press("x")
        await pilot.pause()
        assert not any(v.has_class("-excluded") for v in views(app))
        # f forks a new session from the selected message.
        first = app.chat.session.id
        await select_message(pilot, app, "one")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.chat.session.id != first, "the fork")
        assert [v.message.content for v in views(app)] == ["one"]
        assert "fork from “one”" in app.chat.title
    with Store(tmp_path / "sessions.db") as store:
        assert len(store.messages(first)) == 9  # every version kept


async def test_a_branch_compacts_on_its_own_turns_and_keeps_the_cache_prefix(fake_server,
                                                                             tmp_path):
    summarising_replies(fake_server, chat_words=60)
    app = make_app(fake_server, tmp_path, context_window=2048, response_reserve=256,
                   system_reserve=128, keep_recent_turns=1, summary_max_tokens=120)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "start here")
        await send_and_wait(pilot, "the old direction, codename HERON")
        old_question = app.chat.session.messages[-2]
        await type_and_send(pilot, "/edit")
        await pilot.pause()
        prompt(app).load_text("the new direction, codename PELICAN")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.messages[-1].role == "assistant", "the resend")
        # Append-only from here: each request starts with the one before and its reply.
        for i in range(12):
            if app.chat.session.summary is not None:
                break
            before = fake_server.chat_requests[-1].body["messages"]
            await send_and_wait(pilot, f"branch turn {i}: " + "explain the window " * 20)
            await wait_for(pilot, lambda: not app.chat.compaction_work.running, "the compaction")
            now = fake_server.chat_requests[-1].body["messages"]
            if app.chat.session.summary is None:
                assert now[:len(before)] == before
        summary = app.chat.session.summary
        assert summary is not None and "HERON" not in summary.content
        covered = [m.content for m in app.chat.session.compaction.covered()]
        assert "the new direction, codename PELICAN" in covered
        assert old_question.content not in covered
        # The old branch has no summary: switching to it, the panel and the request say so.
        app.chat.query_one("#conversation").focus()
        await pilot.pause()
        for view in views(app):
            if view.message.content.startswith("the new direction"):
                app.chat.query_one("#conversation").select(view)
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert app.chat.session.summary is None
        assert old_question in app.chat.session.messages
        await send_and_wait(pilot, "back on the old road")
        system = fake_server.chat_requests[-1].body["messages"][0]["content"]
        assert "PELICAN" not in system and "HERON" in json.dumps(
            fake_server.chat_requests[-1].body["messages"])


async def test_r_on_an_earlier_failed_question_keeps_the_turns_after_it(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first")
        fake_server.faults.append(("status", 400, {}, {"error": {
            "message": "bad request", "type": "invalid_request_error"}}))
        await send_and_wait(pilot, "second")
        await send_and_wait(pilot, "third")
        await select_message(pilot, app, "second")
        await pilot.press("r")
        await wait_for(pilot, lambda: app.chat.reply.question is None
                       and app.chat.session.messages[-1].role == "assistant"
                       and "second" in app.chat.session.messages[-1].content,
                       "the answer to the question asked again")
        await pilot.pause()
        assert sent(fake_server) == ["first", "Reply 1: first", "second"]
        said = notices(app)
        assert not any("stays as version" in n for n in said), said
        assert any("turns after it" in n for n in said), said
        # The question shows its versions; < on it brings back the turns after it.
        assert [v.message.content for v in views(app)][:3] == ["first", "Reply 1: first",
                                                              "second"]
        assert "2/2" in str(views(app)[2].query_one(".label").content)
        await select_message(pilot, app, "second")
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert [v.message.content for v in views(app)][2:4] == ["second", "third"]
