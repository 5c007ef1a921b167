"""The built-in read_attachment tool against the fake server over loopback and a real store: not
offered until a file goes as a digest, then offered in every request of the branch; the model's
call reads numbered lines of the file as it was sent (never as the disk has it later), without
asking the user, within one result's cap; a part reads only its lines; bad arguments are
results the model reads."""

from __future__ import annotations

import json
from pathlib import Path

from jarvis_tui.core import events as ev
from jarvis_tui.core.attach.message import DIGEST, PART, Sending, message_with
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.messages import READ_TOOL
from tests.core.tools.test_history_search import chat_bodies, never_asked, offered, stored_results
from tests.engine_helpers import kinds, make_engine, send

LOG_LINES = 3000


def big_log(folder: Path) -> Path:
    path = folder / "deploy.log"
    path.write_text("".join(f"2026-12-05 10:{i // 60 % 60:02d}:{i % 60:02d} INFO step {i} ok\n"
                            for i in range(1, LOG_LINES + 1)), encoding="utf-8")
    return path


def asking(sending: Sending, *calls: dict) -> object:
    """The user's message carrying `sending`, whose `call` lines the fake model makes."""
    lines = "\n".join(f"call {READ_TOOL} {json.dumps(c)}" for c in calls)
    return message_with(f"What happened in the log?\n{lines}", [sending])


async def test_a_digest_brings_the_tool_and_the_model_reads_lines_without_asking(
        fake_server, tmp_path):
    log = big_log(tmp_path)
    approve = never_asked()
    engine = make_engine(fake_server, tmp_path, approve=approve)
    await send(engine, "Hello.")
    assert "tools" not in chat_bodies(fake_server.chat_requests)[-1]  # no digest yet
    att = read_path(str(log), tmp_path)
    events = await send(engine, asking(Sending(att, DIGEST),
                                       {"path": att.shown, "first_line": 1500,
                                        "last_line": 1502}))
    assert "ToolApproval" not in kinds(events) and approve.asked == []
    done = next(e for e in events if isinstance(e, ev.ToolFinished))
    assert done.outcome == "ok"
    result = stored_results(engine)[-1]
    assert result.splitlines() == [
        f"{att.shown}, lines 1500-1502 of {LOG_LINES:,}:",
        "  1500\t2026-12-05 10:25:00 INFO step 1500 ok",
        "  1501\t2026-12-05 10:25:01 INFO step 1501 ok",
        "  1502\t2026-12-05 10:25:02 INFO step 1502 ok"]
    bodies = chat_bodies(fake_server.chat_requests)
    question = next(m for m in bodies[-2]["messages"] if m["role"] == "user"
                    and "digest only" in m["content"])
    assert "step 1500" not in question["content"]  # the digest, not the file
    assert offered(bodies[-2]) == offered(bodies[-1]) == [READ_TOOL]
    # The file as sent, not as the disk has it later; and the tool stays offered.
    log.write_text("rewritten\n", encoding="utf-8")
    await send(engine, f'call {READ_TOOL} {{"path": "deploy.log", "first_line": 2999}}')
    assert stored_results(engine)[-1].splitlines()[1:] == [
        "  2999\t2026-12-05 10:49:59 INFO step 2999 ok",
        "  3000\t2026-12-05 10:50:00 INFO step 3000 ok"]
    assert offered(chat_bodies(fake_server.chat_requests)[-1]) == [READ_TOOL]
    await engine.provider.aclose()


async def test_a_read_keeps_to_one_result_and_says_where_to_go_on(fake_server, tmp_path):
    att = read_path(str(big_log(tmp_path)), tmp_path)
    engine = make_engine(fake_server, tmp_path)
    await send(engine, asking(Sending(att, DIGEST), {"path": att.shown}))
    result = stored_results(engine)[-1]
    body, _, note = result.rpartition("\n(")
    cap = engine.front.result_cap()
    assert cap // 2 < engine.counter.text(body) <= cap  # the room used, not overrun
    shown = int(body.splitlines()[-1].split("\t")[0])
    assert body.splitlines()[0] == f"{att.shown}, lines 1-{shown} of {LOG_LINES:,}:"
    assert f"ask with first_line {shown + 1}" in note
    await engine.provider.aclose()


async def test_the_tool_is_there_after_a_restart_and_reads_from_the_store(fake_server,
                                                                         tmp_path):
    log = big_log(tmp_path)
    att = read_path(str(log), tmp_path)
    engine = make_engine(fake_server, tmp_path)
    await send(engine, asking(Sending(att, DIGEST)))
    conversation = engine.conversation.id
    await engine.provider.aclose()
    engine.store.close()
    log.unlink()
    again = make_engine(fake_server, tmp_path, conversation_id=conversation)
    await send(again, f'call {READ_TOOL} {{"path": "{log}", "first_line": 7, '
                      f'"last_line": 7}}')
    assert stored_results(again)[-1].endswith("     7\t2026-12-05 10:00:07 INFO step 7 ok")
    await again.provider.aclose()


async def test_a_part_reads_only_its_lines_and_bad_calls_are_results(fake_server, tmp_path):
    log = big_log(tmp_path)
    att = read_path(str(log), tmp_path)
    (tmp_path / "other").mkdir()
    whole = read_path(str(big_log(tmp_path / "other")), tmp_path)
    engine = make_engine(fake_server, tmp_path)
    # A digest of one file brings the tool; a part of another reads only its lines.
    await send(engine, message_with("Two logs.", [Sending(whole, DIGEST),
                                                  Sending(att, PART, 10, 12)]))
    await send(engine, "\n".join(f"call {READ_TOOL} {json.dumps(c)}" for c in (
        {"path": att.path, "first_line": 1},
        {"path": att.path, "first_line": 13},
        {"path": "nowhere.txt"},
        {"first_line": 3},
        {"path": att.path, "first_line": 12, "last_line": 11},
        {"path": att.path, "first_line": "11"})))
    results = stored_results(engine)[-6:]
    assert results[0].splitlines() == [
        f"{att.path}, lines 10-12 (attached: lines 10-12):",
        "    10\t2026-12-05 10:00:10 INFO step 10 ok",
        "    11\t2026-12-05 10:00:11 INFO step 11 ok",
        "    12\t2026-12-05 10:00:12 INFO step 12 ok"]
    assert results[1] == "Error: only lines 10-12 of it were attached; line 13 is not in it."
    assert results[2].startswith(f"Error: {READ_TOOL} was not run: no attached file is named "
                                 "'nowhere.txt'; the attached files are: ")
    assert att.path in results[2] and whole.path in results[2]
    assert results[3] == f"Error: {READ_TOOL} was not run: 'path' must name an attached file"
    assert results[4] == "Error: last_line (11) is before first_line (12)."
    assert results[5].splitlines()[1] == "    11\t2026-12-05 10:00:11 INFO step 11 ok"
    await engine.provider.aclose()


def test_a_read_is_one_line_in_both_languages():
    from jarvis_tui.core.calls.specs import ToolCall
    from jarvis_tui.texts.notices import builtin_line

    call = ToolCall("c1", READ_TOOL, '{"path": "logs/网关.log", "first_line": 9, '
                                     '"last_line": 40}')
    assert builtin_line(call) == "📎 read logs/网关.log, lines 9-40"
    assert builtin_line(call, "zh") == "📎 读取了 logs/网关.log 第 9-40 行"
    assert builtin_line(ToolCall("c2", READ_TOOL, '{"path": "a.py"}')) == \
        "📎 read a.py, from line 1"
    assert builtin_line(ToolCall("c3", READ_TOOL, '{"path": ')) is None
    assert builtin_line(ToolCall("c4", "git_log", "{}")) is None



async def test_a_file_sent_whole_is_read_from_its_block(fake_server, tmp_path):
    log = big_log(tmp_path)
    short = tmp_path / "notes.md"
    short.write_text("# Notes\n\n```sh\nmake deploy\n```\n", encoding="utf-8")
    engine = make_engine(fake_server, tmp_path)
    # The digest brings the tool; the whole file beside it is read from its own block,
    # its own fences and all.
    await send(engine, message_with("Two files.", [
        Sending(read_path(str(log), tmp_path), DIGEST), Sending(read_path(str(short), tmp_path))]))
    await send(engine, f'call {READ_TOOL} {{"path": "notes.md"}}')
    assert stored_results(engine)[-1].splitlines() == [
        "notes.md, lines 1-5 of 5:", "     1\t# Notes", "     2\t", "     3\t```sh",
        "     4\tmake deploy", "     5\t```"]
    await engine.provider.aclose()
