"""Where a detail was said decides what it is worth: the user's own prose over the assistant's,
over pasted code, logs and tool output; a paste is one digest line, not dozens of identifiers;
errors are the ones that happened, not the ones a program's source names."""

from __future__ import annotations

from pathlib import Path

from jarvis_tui.core import events as ev
from jarvis_tui.core.details.blocks import spans
from jarvis_tui.core.details.extract import Detail, details_in, details_of
from jarvis_tui.core.details.ledger import join, ledger_for, split
from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter
from tests.engine_helpers import is_summary_request, make_engine, send

COUNTER = TokenCounter("gpt-4o-mini")
# Source pasted into a chat: CPython's, kept in the repository (its README says which).
CPYTHON = Path(__file__).resolve().parents[2] / "data" / "cpython"
LOCKS = (CPYTHON / "asyncio_locks.py.txt").read_text(encoding="utf-8")
DECODER = (CPYTHON / "json_decoder.py.txt").read_text(encoding="utf-8")
LOG = """\
2026-11-30 09:14:02,118 INFO  worker-3 picked job 88213 (export_csv)
2026-11-30 09:14:02,740 WARN  worker-3 slow query 1,840 ms on orders_by_day
2026-11-30 09:14:03,002 ERROR worker-3 job 88213 failed: psycopg.OperationalError: refused
2026-11-30 09:14:03,004 INFO  worker-3 retry 1/3 in 2 s
Traceback (most recent call last):
  File "/srv/jobs/export.py", line 41, in run
    rows = fetch(conn, day)
  File "/srv/jobs/db.py", line 12, in fetch
    return conn.execute(SQL, (day,)).fetchall()
psycopg.OperationalError: connection to server at "10.4.0.7", port 5433 failed
"""


def kinds(details: list[Detail], source: str | None = None) -> list[str]:
    return [d.kind for d in details if source is None or d.source == source]


def test_a_pasted_source_file_is_one_digest_line_not_its_identifiers():
    text = ("The gateway listens on port 8443, remember that. Here's asyncio/locks.py:\n"
            + LOCKS + "\nWhy does it hang here?")
    found = details_in(Message("user", text, id=1))
    pasted = [d for d in found if d.source == "paste"]
    assert [d.kind for d in pasted] == ["paste"]  # no calls as commands, no `raise` as errors
    digest = pasted[0].text
    assert digest.startswith("asyncio/locks.py: python, ")
    assert "Lock" in digest and "Semaphore" in digest
    assert not any("acquire(" in d.text or "RuntimeError" in d.text for d in found)
    user = [d.text for d in found if d.source == "user"]
    assert "8443" in user


def test_a_log_and_a_traceback_give_the_errors_that_happened():
    text = "日志如下：\n" + LOG + "\n我们决定先把连接池调到 40。"
    found = details_in(Message("user", text, id=2))
    errors = [d.text for d in found if d.kind == "error"]
    assert len(errors) == 2  # the first and the last, not every line naming one
    assert "ERROR worker-3 job 88213 failed" in errors[0]
    assert errors[1].startswith("psycopg.OperationalError: connection to server")
    assert all(d.source == "paste" for d in found if d.kind in ("error", "paste"))
    decisions = [d for d in found if d.kind == "decision"]
    assert decisions and decisions[0].source == "user"


def test_source_code_naming_errors_is_not_an_error_that_happened():
    found = details_in(Message("user", "看一下这个文件 json/decoder.py：\n" + DECODER, id=3))
    assert kinds(found, "paste") == ["paste"]
    assert "error" not in kinds(found)


def test_a_tool_result_is_its_call_and_size_and_its_failures():
    call = {"id": "c1", "type": "function",
            "function": {"name": "git_show", "arguments": '{"revision": "HEAD~3"}'}}
    out = "commit 1a2b3c4d5e\nAuthor: Dana <d@x>\nDate:   Mon\n\n    fix retry\n" + "+ line\n" * 40
    found = details_of([
        Message("assistant", "", tool_calls=[call], id=4),
        Message("tool", out, tool_call_id="c1", name="git_show", id=5),
        Message("tool", "Error: fatal: bad revision 'HEAD~99'", tool_call_id="c2",
                name="git_show", id=6)])
    tools = [d for d in found if d.kind == "tool"]
    assert tools[0].text.startswith("git_show revision=HEAD~3: ")
    assert "error" in kinds(found, "tool")
    assert not any(d.kind == "command" for d in found)


def test_markdown_lists_and_a_short_shell_fence_stay_prose():
    reply = ("Plan:\n- Use PostgreSQL for sessions\n- Port 8443 for the gateway\n"
             "- Deploy on Friday\n\nRun:\n```bash\nkubectl rollout restart deploy/gateway\n```\n")
    assert not any(s.block for s in spans(reply))
    found = details_in(Message("assistant", reply, id=7))
    assert ("command", "kubectl rollout restart deploy/gateway") in [
        (d.kind, d.text) for d in found]
    assert all(d.source == "assistant" for d in found)


def test_the_ledger_marks_where_a_detail_came_from_and_reads_it_back():
    details = [Detail("number", "8443", "port 8443", source="user"),
               Detail("error", "E: disk full", "", source="tool"),
               Detail("paste", "a.py: python, 3 lines", "", source="paste"),
               Detail("path", "/srv/x", "", source="assistant")]
    text = join("Gist.", details)
    assert "- error (tool): E: disk full" in text and "- path (reply): /srv/x" in text
    _, back = split(text)
    assert [(d.kind, d.source) for d in back] == [
        ("number", "user"), ("error", "tool"), ("paste", "paste"), ("path", "assistant")]


def test_over_budget_pasted_details_go_before_any_the_user_said():
    said = [Message("user", f"Note: the staging box for team {i} is /srv/team{i}/env.", id=i)
            for i in range(6)]
    pastes = [Message("user", f"here's mod{i}.py:\n" + LOCKS[i * 900:(i + 4) * 900], id=100 + i)
              for i in range(12)]
    folded = said + pastes
    text = ledger_for("Gist.", None, folded, folded, COUNTER, 160)
    _, kept = split(text)
    assert [d.text for d in kept if d.kind == "path"] == [f"/srv/team{i}/env" for i in range(6)]
    assert COUNTER.text(join("", kept)) <= 160


async def test_facts_survive_a_working_session_of_pasted_code(fake_server, tmp_path):
    """The issue's case: facts said once in prose, then pastes of a source file, then the
    question; with a summariser that keeps nothing, the ledger still carries every fact."""
    fake_server.reply_fn = lambda body: (
        "Summary: the user is debugging locks." if is_summary_request(body) else "Looking.")
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, context_window=4096)
    facts = ["The gateway listens on port 8443.", "Ops phone is +1 415 555 0142.",
             "我们决定用 PostgreSQL 存会话。", "Flight is CA1732 on Friday."]
    for fact in facts:
        await send(engine, fact)
    compactions = 0
    for i in range(16):
        part = LOCKS[(i % 6) * 3000:(i % 6 + 1) * 3000]
        async for event in engine.stream_reply(f"here's part {i} of asyncio/locks.py:\n" + part):
            compactions += isinstance(event, ev.CompactionFinished)
    assert compactions >= 3
    _, kept = split(engine.summary.content)
    assert {d.text for d in kept} >= {"8443", "+1 415 555 0142", "CA1732"}
    assert not any(d.kind == "command" for d in kept)


def test_the_ledger_grows_with_the_window(fake_server, tmp_path):
    rooms = [make_engine(fake_server, tmp_path / str(w), context_window=w).details_max_tokens
             for w in (4096, 16384, 131072)]
    assert rooms[0] >= 256 and rooms[0] < rooms[1] < rooms[2]
    off = make_engine(fake_server, tmp_path / "off", details_share=0.0)
    assert off.details_max_tokens == 0


async def _folded_port_session(fake_server, tmp_path, **settings):  # type: ignore[no-untyped-def]
    fake_server.reply_fn = lambda body: (
        "Summary: setting up ingestion." if is_summary_request(body) else "OK.")
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, context_window=4096,
                         **settings)
    await send(engine, "The ingest service listens on port 7070, the rest is default.")
    for i in range(8):
        await send(engine, f"here's part {i} of the log:\n" + LOG * 3)
    assert engine.summary is not None
    return engine


async def test_a_question_in_the_other_language_finds_the_folded_port(fake_server, tmp_path):
    """No word shared, other language: "端口" asks for a port, "来着" points back; with no
    ledger to hold it, the newest turn that said a port in its own words comes back (not the
    log's port 5433)."""
    engine = await _folded_port_session(fake_server, tmp_path, details_share=0.0)
    await send(engine, "那个服务的端口是多少来着？")
    last = fake_server.chat_requests[-1].body["messages"][-1]["content"]
    assert "listens on port 7070" in last


async def test_the_ledger_is_the_first_place_a_shape_is_found(fake_server, tmp_path):
    engine = await _folded_port_session(fake_server, tmp_path)
    await send(engine, "那个服务的端口是多少来着？")
    body = fake_server.chat_requests[-1].body["messages"]
    assert "7070" in body[0]["content"]  # in the ledger, below the summary
    assert "listens on port 7070" not in body[-1]["content"]  # nothing recalled: front kept
