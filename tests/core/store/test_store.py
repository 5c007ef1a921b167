"""The session store against real SQLite files in tmp_path."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from jarvis_tui.core.messages import FAILED, PARTIAL, Message
from jarvis_tui.core.store.db import MAX_ID, default_db_path
from jarvis_tui.core.store.export import to_markdown
from jarvis_tui.core.store.meta import UNREADABLE_META
from jarvis_tui.core.store.records import StoreError, StoreLocked
from jarvis_tui.core.store.schema import SCHEMA_VERSION
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.store.usage import MAX_COUNT
from tests.core.store.old_database import old_database
from tests.readonly import read_only


def chat(store: Store, conv_id: int, n: int) -> list[Message]:
    """n user/assistant pairs."""
    out = []
    for i in range(n):
        out.append(store.add_message(conv_id, Message("user", f"question {i}")))
        out.append(store.add_message(conv_id, Message("assistant", f"answer {i}")))
    return out


def test_create_list_latest(store: Store) -> None:
    assert store.latest_conversation() is None
    assert store.list_conversations() == []
    a = store.create_conversation(model="gpt-4o-mini")
    b = store.create_conversation(title="second")
    assert [c.id for c in store.list_conversations()] == [b.id, a.id]
    assert store.latest_conversation().id == b.id
    store.add_message(a.id, Message("user", "hello"))
    convs = store.list_conversations()
    assert [c.id for c in convs] == [a.id, b.id]  # a was updated last
    assert [c.message_count for c in convs] == [1, 0]
    assert convs[0].model == "gpt-4o-mini"
    assert convs[0].updated_at > convs[0].created_at
    assert [c.id for c in store.list_conversations(limit=1)] == [a.id]
    assert store.get_conversation(b.id).title == "second"
    assert store.get_conversation(9999) is None


def test_title_from_first_user_message(store: Store) -> None:
    conv = store.create_conversation()
    store.add_message(conv.id, Message("system", "ignored for titles"))
    long_text = "请帮我   写一个\n函数，" + "很长的问题" * 30
    store.add_message(conv.id, Message("user", long_text))
    title = store.get_conversation(conv.id).title
    assert "\n" not in title and "  " not in title
    assert title.startswith("请帮我 写一个 函数，很长的问题")
    assert len(title) == 60 and title.endswith("…")
    store.add_message(conv.id, Message("user", "a later question"))
    assert store.get_conversation(conv.id).title == title
    store.set_title(conv.id, "renamed")
    assert store.get_conversation(conv.id).title == "renamed"


def test_messages_persist_across_reopen(db_path: Path) -> None:
    calls = [{"id": "call_1", "type": "function",
              "function": {"name": "read", "arguments": '{"path": "a.txt"}'}}]
    with Store(db_path) as s:
        conv = s.create_conversation()
        sent = Message("user", "read a.txt")
        same = s.add_message(conv.id, sent)
        assert same is sent and sent.id is not None
        s.add_message(conv.id, Message("assistant", "", tool_calls=calls))
        s.add_message(conv.id, Message("tool", "contents", tool_call_id="call_1", name="read"))
        s.add_message(conv.id, Message("assistant", "done"))
    with Store(db_path) as s:
        got = s.messages(conv.id)
        assert [m.role for m in got] == ["user", "assistant", "tool", "assistant"]
        assert got[0].id == sent.id and got[0].content == "read a.txt"
        assert got[0].created_at == sent.created_at
        assert got[1].tool_calls == calls
        assert (got[2].tool_call_id, got[2].name) == ("call_1", "read")
        assert s.get_conversation(conv.id).message_count == 4
    raw = sqlite3.connect(db_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_chinese_content_round_trips(db_path: Path) -> None:
    text = "你好，贾维斯！请总结一下「上下文窗口」的含义。🙂\n第二行：数字 12345"
    with Store(db_path) as s:
        conv = s.create_conversation(title="中文对话")
        s.add_message(conv.id, Message("user", text))
        s.add_summary(conv.id, "用户询问上下文窗口。", s.messages(conv.id), kind="auto")
        s.set_meta(conv.id, "备注", "中文值")
    with Store(db_path) as s:
        assert s.messages(conv.id)[0].content == text
        assert s.get_conversation(conv.id).title == "中文对话"
        assert s.latest_summary(conv.id).content == "用户询问上下文窗口。"
        assert s.get_meta(conv.id, "备注") == "中文值"
        exported = json.dumps(s.export(conv.id), ensure_ascii=False)
        assert text in json.loads(exported)["messages"][0]["content"]


def test_partial_and_pinned_round_trip(db_path: Path) -> None:
    with Store(db_path) as s:
        conv = s.create_conversation()
        s.add_message(conv.id, Message("user", "write a poem"))
        reply = s.add_message(conv.id, Message("assistant", "Roses are", status=PARTIAL))
        failed = s.add_message(conv.id, Message("assistant", "", status=FAILED))
        reply.pinned = True
        reply.content = "Roses are red"
        s.update_message(reply)
    with Store(db_path) as s:
        got = s.messages(conv.id)
        assert (got[1].status, got[1].content, got[1].pinned) == (PARTIAL, "Roses are red", True)
        assert got[2].status == FAILED and got[2].id == failed.id
        assert got[0].pinned is False and got[0].status == "complete"
        with pytest.raises(ValueError):
            s.add_message(conv.id, Message("user", "x", status="bogus"))


def test_add_summary_marks_exactly_the_covered_messages(store: Store) -> None:
    conv = store.create_conversation()
    msgs = chat(store, conv.id, 5)  # 10 messages
    first = store.add_summary(conv.id, "turns 0-1", msgs[:4], kind="auto", model="m")
    assert all(m.summary_id == first.id for m in msgs[:4])  # in memory too
    assert all(m.summary_id is None for m in msgs[4:])
    stored = store.messages(conv.id)
    assert [m.summary_id for m in stored] == [first.id] * 4 + [None] * 6
    assert (first.first_message_id, first.last_message_id) == (msgs[0].id, msgs[3].id)
    assert first.covered_count == 4 and first.kind == "auto" and first.model == "m"

    # Incremental: the previous summary plus the next turn; old marks keep their first summary.
    second = store.add_summary(conv.id, "turns 0-2", msgs[4:6], kind="manual", focus="names")
    assert [m.summary_id for m in store.messages(conv.id)] == (
        [first.id] * 4 + [second.id] * 2 + [None] * 4
    )
    assert (second.first_message_id, second.last_message_id) == (msgs[0].id, msgs[5].id)
    assert second.covered_count == 6 and second.focus == "names"
    assert store.latest_summary(conv.id) == second
    assert [s.id for s in store.summaries(conv.id)] == [first.id, second.id]


def test_add_summary_is_atomic(store: Store) -> None:
    conv = store.create_conversation()
    other = store.create_conversation()
    msgs = chat(store, conv.id, 2)
    stranger = store.add_message(other.id, Message("user", "not in conv"))
    with pytest.raises(StoreError, match="not in conversation"):
        store.add_summary(conv.id, "bad", [*msgs, stranger], kind="auto")
    assert store.summaries(conv.id) == []
    assert all(m.summary_id is None for m in store.messages(conv.id))
    assert all(m.summary_id is None for m in msgs)  # memory untouched on failure
    with pytest.raises(ValueError):
        store.add_summary(conv.id, "x", [Message("user", "never stored")], kind="auto")
    with pytest.raises(ValueError):
        store.add_summary(conv.id, "x", msgs, kind="bogus")
    assert store.summaries(conv.id) == []


def test_edit_summary_keeps_the_old_one(store: Store) -> None:
    conv = store.create_conversation()
    msgs = chat(store, conv.id, 3)
    auto = store.add_summary(conv.id, "auto text", msgs[:4], kind="auto", focus="f", model="m")
    edited = store.edit_summary(auto.id, "user's better text")
    assert edited.id != auto.id and edited.replaces_id == auto.id and edited.kind == "edited"
    assert (edited.first_message_id, edited.last_message_id, edited.covered_count) == (
        auto.first_message_id, auto.last_message_id, auto.covered_count
    )
    assert store.latest_summary(conv.id) == edited
    assert [s.content for s in store.summaries(conv.id)] == ["auto text", "user's better text"]
    # Messages still point at the summary that first covered them.
    assert [m.summary_id for m in store.messages(conv.id)[:4]] == [auto.id] * 4
    with pytest.raises(StoreError, match="summary 999 does not exist"):
        store.edit_summary(999, "x")


def test_meta(store: Store) -> None:
    conv = store.create_conversation()
    assert store.get_meta(conv.id, "context_limit") is None
    assert store.get_meta(conv.id, "context_limit", 8192) == 8192
    store.set_meta(conv.id, "context_limit", 32768)
    store.set_meta(conv.id, "calibration", {"gpt-4o-mini": 1.07})
    assert store.get_meta(conv.id, "context_limit") == 32768
    assert store.get_meta(conv.id, "calibration") == {"gpt-4o-mini": 1.07}
    with pytest.raises(TypeError):
        store.set_meta(conv.id, "bad", object())
    with pytest.raises(StoreError):
        store.set_meta(12345, "x", 1)


def test_export_shape(store: Store) -> None:
    conv = store.create_conversation(model="gpt-4o")
    msgs = chat(store, conv.id, 2)
    summary = store.add_summary(conv.id, "summary", msgs[:2], kind="auto")
    store.set_meta(conv.id, "context_limit", 1000)
    data = json.loads(json.dumps(store.export(conv.id)))  # JSON-ready
    assert data["conversation"]["id"] == conv.id
    assert data["conversation"]["model"] == "gpt-4o"
    assert data["conversation"]["message_count"] == 4
    assert data["conversation"]["meta"] == {"context_limit": 1000}
    assert [m["covered"] for m in data["messages"]] == [True, True, False, False]
    assert [m["seq"] for m in data["messages"]] == [1, 2, 3, 4]
    assert [m["summary_id"] for m in data["messages"]] == [summary.id] * 2 + [None] * 2
    keys = {"id", "seq", "role", "content", "status", "pinned", "covered", "summary_id",
            "tool_calls", "tool_call_id", "created_at"}
    assert keys <= set(data["messages"][0])
    assert data["summaries"][0]["id"] == summary.id
    assert data["summaries"][0]["covered_count"] == 2
    with pytest.raises(StoreError):
        store.export(4242)


def test_no_api_key_column(store: Store) -> None:
    cols = set()
    for table in ("conversations", "messages", "summaries"):
        cols |= {row[1] for row in store._db.execute(f"PRAGMA table_info({table})")}
    assert not any("key" in c or "secret" in c or "token" in c for c in cols)


def test_corrupt_file_is_reported_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    garbage = bytes(range(256)) * 20
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        Store(path)
    text = str(info.value)
    assert str(path) in text and "not modified" in text and "\n" not in text
    assert path.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]


def test_damaged_sqlite_file_is_reported_and_left_alone(db_path: Path) -> None:
    with Store(db_path) as s:
        s.add_message(s.create_conversation().id, Message("user", "hi"))
    data = bytearray(db_path.read_bytes())
    data[16:100] = b"\xff" * 84  # page size and header fields: SQLite refuses the file
    db_path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="not modified"):
        Store(db_path)
    assert db_path.read_bytes() == bytes(data)


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE messages (x)")
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a jarvis-tui session store"):
        Store(path)
    assert path.read_bytes() == before


def test_newer_schema_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    raw = sqlite3.connect(db_path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer jarvis-tui"):
        Store(db_path)


def test_locked_database_gives_store_error(db_path: Path) -> None:
    with Store(db_path, timeout=0.2) as s:
        conv = s.create_conversation()
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        msg = Message("user", "blocked")
        with pytest.raises(StoreError) as info:
            s.add_message(conv.id, msg)
        assert str(db_path) in str(info.value) and "locked" in str(info.value)
        assert msg.id is None
        # Reads still work in WAL mode, and the store recovers once the lock is gone.
        assert s.messages(conv.id) == []
        with Store(db_path, timeout=0.2) as reader:  # a second window can still open and read
            assert reader.get_conversation(conv.id) is not None
        other.execute("ROLLBACK")
        other.close()
        s.add_message(conv.id, msg)
        assert [m.content for m in s.messages(conv.id)] == ["blocked"]


def test_locked_new_database_gives_store_error_on_open(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            Store(path, timeout=0.2)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_closed_store_raises_store_error(db_path: Path) -> None:
    s = Store(db_path)
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.list_conversations()


def test_writes_from_many_threads(store: Store) -> None:
    conv = store.create_conversation()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(25):
                store.add_message(conv.id, Message("user", f"t{n}-{i}"))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    got = store.messages(conv.id)
    assert len(got) == 100 and len({m.id for m in got}) == 100


def test_default_path_honours_xdg_data_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    path = default_db_path()
    assert path == tmp_path / "xdg" / "jarvis-tui" / "sessions.db"
    assert path.parent.is_dir()
    with Store() as s:
        assert s.path == path
        s.create_conversation()
    assert path.exists()


def test_corruption_inside_the_file_surfaces_as_store_error(db_path: Path) -> None:
    with Store(db_path) as s:
        conv = s.create_conversation()
        for i in range(100):
            s.add_message(conv.id, Message("user", f"{i} " + "内容" * 300))
    data = bytearray(db_path.read_bytes())
    page = 4096
    data[page * 3: page * 8] = b"\x07" * (page * 5)  # trash b-tree pages, keep the header
    db_path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="corrupt") as info:
        with Store(db_path) as s:
            s.messages(conv.id)
    assert str(db_path) in str(info.value) and "\n" not in str(info.value)


def _open_and_chat(path: Path, start, errors) -> None:
    start.wait()
    try:
        with Store(path) as s:
            chat(s, s.create_conversation().id, 1)
    except Exception as e:  # reported by the parent
        errors.put(f"{type(e).__name__}: {e}")


def test_opening_waits_while_another_process_creates_the_store(tmp_path: Path) -> None:
    # While another connection holds the write lock of a new file, the switch to WAL fails at
    # once with "locked" (SQLite gives up rather than wait, to avoid a deadlock): opening
    # retries it within its timeout instead of failing.
    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.2, other.execute, ("ROLLBACK",)).start()
    with Store(path) as s:
        assert s.create_conversation().id == 1
    other.close()


def test_many_processes_create_a_new_store_at_once(tmp_path: Path) -> None:
    # Ten processes that have all imported everything, released at once: before the opening
    # read its schema in one snapshot, a fresh store could look foreign to one that read its
    # version just before another's first migration committed (about a third of the rounds).
    context = multiprocessing.get_context("fork")
    for round_ in range(8):
        path = tmp_path / f"round-{round_}" / "sessions.db"
        start, errors = context.Barrier(10), context.Queue()
        procs = [context.Process(target=_open_and_chat, args=(path, start, errors))
                 for _ in range(10)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        assert [errors.get() for _ in range(errors.qsize())] == []
        with Store(path) as s:
            convs = s.list_conversations()
            assert len(convs) == 10 and {c.message_count for c in convs} == {2}
            assert s.search(convs[0].id, "question")  # the index was built, and once
        raw = sqlite3.connect(path)
        assert raw.execute("SELECT count(*) FROM message_index").fetchone()[0] == 20
        raw.close()


def test_an_unwritable_directory_is_named_not_called_corrupt(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    with Store(directory / "sessions.db") as s:
        chat(s, s.create_conversation().id, 1)
    before = (directory / "sessions.db").read_bytes()
    with read_only(directory):
        for path in (directory / "sessions.db", directory / "new.db"):
            with pytest.raises(StoreError) as info:
                Store(path)
            assert str(info.value) == (
                f"cannot write to {directory}: permission denied (needed to open the session "
                "database); check its owner and mode, or choose another file with --db.")
        with pytest.raises(StoreError, match=f"cannot write to {directory}: permission denied "
                                             f"\\(needed to create {directory / 'sub'} "):
            Store(directory / "sub" / "sessions.db")
    assert (directory / "sessions.db").read_bytes() == before
    assert sorted(p.name for p in directory.iterdir()) == ["sessions.db"]


def test_a_read_only_database_file_reads_and_names_itself_on_a_write(db_path: Path) -> None:
    with Store(db_path) as s:
        conv = s.create_conversation()
        chat(s, conv.id, 1)
    with read_only(db_path), Store(db_path) as s:
        assert [m.content for m in s.messages(conv.id)] == ["question 0", "answer 0"]
        with pytest.raises(StoreError) as info:
            s.add_message(conv.id, Message("user", "more"))
        assert str(info.value).startswith(f"cannot write to {db_path}: permission denied "
                                          "(needed to save a message to the session database)")


def _spoil(path: Path, sql: str, *args: object) -> None:
    raw = sqlite3.connect(path)
    raw.execute(sql, args)
    raw.commit()
    raw.close()


def test_stored_fields_that_are_not_json_are_left_out_and_reported(db_path: Path) -> None:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    with Store(db_path) as s:
        conv = s.create_conversation()
        ask = s.add_message(conv.id, Message("user", "use the tool"))
        call = s.add_message(conv.id, Message("assistant", "calling", tool_calls=calls))
        s.set_meta(conv.id, "context_limit", 8192)
    _spoil(db_path, "UPDATE messages SET tool_calls = '[{\"id\": ' WHERE id = ?", call.id)
    _spoil(db_path, "UPDATE conversations SET meta = '[1, 2]'")
    bad_calls = (f"session {conv.id}, message {call.id}: tool_calls is not valid JSON; left out "
                 "(the stored text is kept)")
    bad_meta = (f"session {conv.id}: meta is not a JSON object; read as empty (the stored text "
                "is kept)")
    with Store(db_path) as s:
        got = s.messages(conv.id)
        assert [(m.id, m.content, m.tool_calls) for m in got] == [
            (ask.id, "use the tool", None), (call.id, "calling", None)]
        assert s.get_meta(conv.id, "context_limit", 4096) == 4096
        s.messages(conv.id)  # read again: told once
        assert s.take_notices() == [bad_calls, bad_meta]
        data = json.loads(json.dumps(s.export(conv.id)))
        assert [m["content"] for m in data["messages"]] == ["use the tool", "calling"]
        assert data["conversation"]["meta"] == {}
        assert data["problems"] == [
            {"message_id": None, "field": "meta", "problem": bad_meta, "stored_text": "[1, 2]"},
            {"message_id": call.id, "field": "tool_calls", "problem": bad_calls,
             "stored_text": '[{"id": '},
        ]
        assert s.take_notices() == []  # the export found nothing new
    raw = sqlite3.connect(db_path)  # reading never rewrote them
    assert raw.execute("SELECT tool_calls FROM messages WHERE id = ?",
                       (call.id,)).fetchone() == ('[{"id": ',)
    raw.close()


def test_set_meta_keeps_the_text_of_unreadable_meta(db_path: Path) -> None:
    with Store(db_path) as s:
        conv = s.create_conversation()
    _spoil(db_path, "UPDATE conversations SET meta = '{\"context_limit\": 81'")
    with Store(db_path) as s:
        s.set_meta(conv.id, "calibration", {"m": 1.1})
        assert s.get_meta(conv.id, "calibration") == {"m": 1.1}
        assert s.get_meta(conv.id, UNREADABLE_META) == '{"context_limit": 81'
        assert s.take_notices()[-1] == (
            f"session {conv.id}: meta could not be read; its stored text is now kept in it "
            f"under '{UNREADABLE_META}'")
        s.set_meta(conv.id, "context_limit", 8192)  # readable again: the kept text stays
        assert s.get_meta(conv.id, UNREADABLE_META) == '{"context_limit": 81'
        assert s.export(conv.id)["problems"] == []


@pytest.mark.parametrize("bad_id", [MAX_ID + 1, 2**70, 0, -1])
def test_ids_no_sqlite_integer_can_hold_name_no_row(store: Store, bad_id: int) -> None:
    conv = store.create_conversation()
    assert store.get_conversation(bad_id) is None
    assert store.messages(bad_id) == [] and store.summaries(bad_id) == []
    assert store.latest_summary(bad_id) is None and store.search(bad_id, "anything") == []
    for call in (lambda: store.export(bad_id), lambda: store.get_meta(bad_id, "k"),
                 lambda: store.set_meta(bad_id, "k", 1), lambda: store.touch(bad_id),
                 lambda: store.set_title(bad_id, "t"),
                 lambda: store.add_message(bad_id, Message("user", "hi")),
                 lambda: store.add_summary(bad_id, "s", [], kind="auto")):
        with pytest.raises(StoreError, match=f"conversation {bad_id} does not exist"):
            call()
    with pytest.raises(StoreError, match=f"summary {bad_id} does not exist"):
        store.edit_summary(bad_id, "x")
    assert store.get_conversation(MAX_ID) is None  # the largest one is just not there
    assert store.messages(conv.id) == []


# -- usage ----------------------------------------------------------------------------------------

def test_a_store_from_before_usage_migrates_and_keeps_everything(db_path: Path) -> None:
    # A database as the version before the usage table wrote it.
    old_database(db_path, 2, "from before")
    with Store(db_path) as s:
        assert [m.content for m in s.messages(1)] == ["from before"]
        assert s.usage_rows(1) == [] and s.usage_totals(1) == []
        reply = s.add_message(1, Message("assistant", "after"))
        s.add_usage(1, kind="chat", model="m", prompt_tokens=10, completion_tokens=2,
                    message_id=reply.id)
        assert [r.message_id for r in s.usage_rows(1)] == [reply.id]
    raw = sqlite3.connect(db_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
    raw.close()


def test_usage_rows_and_totals_survive_a_reopen(db_path: Path) -> None:
    with Store(db_path, clock=lambda: 100.0) as s:
        conv = s.create_conversation(model="gpt-4o")
        msgs = chat(s, conv.id, 2)
        first = s.add_usage(conv.id, kind="chat", model="gpt-4o", prompt_tokens=1_200,
                            completion_tokens=40, cached_tokens=1_024, message_id=msgs[1].id)
        s.add_usage(conv.id, kind="chat", model="gpt-4o", prompt_tokens=1_300,
                    completion_tokens=50, message_id=msgs[3].id)  # its server said nothing
        summary = s.add_summary(conv.id, "sum", msgs[:2], kind="auto", model="mini")
        for freed in (None, 900):  # one compaction, two calls: what it freed is said once
            s.add_usage(conv.id, kind="summary", model="mini", prompt_tokens=700,
                        completion_tokens=80, summary_id=summary.id, freed_tokens=freed)
    assert first.cached_tokens == 1_024 and first.created_at == 100.0
    with Store(db_path) as s:
        rows = s.usage_rows(conv.id)
        assert [(r.kind, r.message_id, r.summary_id, r.cached_tokens) for r in rows] == [
            ("chat", msgs[1].id, None, 1_024), ("chat", msgs[3].id, None, None),
            ("summary", None, summary.id, None), ("summary", None, summary.id, None)]
        assert rows[0] == first
        chats, summaries = s.usage_totals(conv.id)
        assert (chats.kind, chats.model, chats.requests, chats.prompt_tokens,
                chats.completion_tokens) == ("chat", "gpt-4o", 2, 2_500, 90)
        # Cached is summed over the requests that reported it, with their prompt tokens.
        assert (chats.cached_tokens, chats.reported_requests, chats.reported_prompt_tokens) == (
            1_024, 1, 1_200)
        assert chats.cache_write_tokens is None and chats.freed_tokens is None
        assert (summaries.kind, summaries.model, summaries.requests, summaries.prompt_tokens,
                summaries.freed_tokens, summaries.cached_tokens) == (
            "summary", "mini", 2, 1_400, 900, None)
        assert [r.freed_tokens for r in s.last_compaction_usage(conv.id)] == [None, 900]
        assert s.latest_usage(conv.id).message_id == msgs[3].id
        assert s.latest_usage(conv.id, "summary").freed_tokens == 900


def test_last_compaction_is_the_newest_with_counts(store: Store) -> None:
    conv = store.create_conversation()
    msgs = chat(store, conv.id, 3)
    older = store.add_summary(conv.id, "one", msgs[:2], kind="auto")
    store.add_usage(conv.id, kind="summary", model="m", prompt_tokens=100,
                    completion_tokens=10, summary_id=older.id, freed_tokens=50)
    newer = store.add_summary(conv.id, "two", msgs[:4], kind="auto")
    store.add_usage(conv.id, kind="summary", model="m", prompt_tokens=300,
                    completion_tokens=30, summary_id=newer.id, freed_tokens=200)
    store.edit_summary(newer.id, "two, edited")  # an edit asks no server: no counts
    assert [r.prompt_tokens for r in store.last_compaction_usage(conv.id)] == [300]
    assert store.last_compaction_usage(conv.id + 1) == []
    assert store.latest_usage(conv.id + 1) is None


def test_add_usage_refuses_what_is_not_its_own(store: Store) -> None:
    conv = store.create_conversation()
    other = store.create_conversation()
    theirs = store.add_message(other.id, Message("assistant", "theirs"))
    with pytest.raises(StoreError, match=f"message {theirs.id} is not in conversation"):
        store.add_usage(conv.id, kind="chat", model="m", prompt_tokens=1, completion_tokens=1,
                        message_id=theirs.id)
    with pytest.raises(StoreError, match="summary 99 is not in conversation"):
        store.add_usage(conv.id, kind="summary", model="m", prompt_tokens=1,
                        completion_tokens=1, summary_id=99)
    with pytest.raises(StoreError, match="conversation 4242 does not exist"):
        store.add_usage(4242, kind="chat", model="m", prompt_tokens=1, completion_tokens=1)
    with pytest.raises(ValueError, match="unknown usage kind"):
        store.add_usage(conv.id, kind="tool", model="m", prompt_tokens=1, completion_tokens=1)
    with pytest.raises(ValueError, match="prompt_tokens must be a whole number"):
        store.add_usage(conv.id, kind="chat", model="m", prompt_tokens=None,  # type: ignore
                        completion_tokens=1)
    assert store.usage_rows(conv.id) == []


def test_counts_a_misbehaving_server_sends_are_kept_within_range(store: Store) -> None:
    conv = store.create_conversation()
    for _ in range(3):
        store.add_usage(conv.id, kind="chat", model="m", prompt_tokens=10**30,
                        completion_tokens=-5, cached_tokens=2**70)
    (t,) = store.usage_totals(conv.id)  # summing three of them does not overflow SQLite
    assert (t.prompt_tokens, t.completion_tokens, t.cached_tokens) == (
        3 * MAX_COUNT, 0, 3 * MAX_COUNT)


def test_a_locked_database_refuses_usage_with_a_store_error(db_path: Path) -> None:
    with Store(db_path, timeout=5) as s:
        conv = s.create_conversation()
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreLocked, match="locked"):
                # `wait` shortens the store's 5 s: a count must not hold up a round.
                s.add_usage(conv.id, kind="chat", model="m", prompt_tokens=1,
                            completion_tokens=1, wait=0.05)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert s.usage_rows(conv.id) == []


def test_export_holds_each_requests_usage_and_the_session_totals(store: Store) -> None:
    conv = store.create_conversation(model="gpt-4o")
    msgs = chat(store, conv.id, 2)
    store.add_usage(conv.id, kind="chat", model="gpt-4o", prompt_tokens=1_500,
                    completion_tokens=20, cached_tokens=1_024, message_id=msgs[3].id)
    summary = store.add_summary(conv.id, "sum", msgs[:2], kind="auto", model="mini")
    store.add_usage(conv.id, kind="summary", model="mini", prompt_tokens=600,
                    completion_tokens=70, summary_id=summary.id, freed_tokens=400)
    data = json.loads(json.dumps(store.export(conv.id)))
    assert [len(m["usage"]) for m in data["messages"]] == [0, 0, 0, 1]
    assert data["messages"][3]["usage"][0] | {"created_at": 0} == {
        "kind": "chat", "model": "gpt-4o", "prompt_tokens": 1_500, "cached_tokens": 1_024,
        "cache_write_tokens": None, "completion_tokens": 20, "freed_tokens": None,
        "created_at": 0}
    assert data["summaries"][0]["usage"][0]["freed_tokens"] == 400
    totals = data["usage"]
    assert (totals["chat_requests"], totals["summary_requests"], totals["prompt_tokens"],
            totals["cached_tokens"], totals["completion_tokens"], totals["freed_tokens"],
            totals["cached_reported_requests"]) == (1, 1, 2_100, 1_024, 90, 400, 1)
    assert [t["model"] for t in totals["by_model"]] == ["gpt-4o", "mini"]
    md = to_markdown(data)
    assert "*prompt 1,500 tokens (1,024 cached) · completion 20 · gpt-4o*" in md
    assert "*prompt 600 tokens (cache not reported) · completion 70 · freed 400 · mini*" in md
    usage_part = md.split("# Usage")[1]
    assert "- requests: 1 chat, 1 summary" in usage_part
    assert "- cached: 1,024 (reported by 1 of 2 requests)" in usage_part
    assert "- freed by compaction: 400" in usage_part


def test_export_of_a_session_without_usage_says_nothing_of_it(store: Store) -> None:
    conv = store.create_conversation()
    chat(store, conv.id, 1)
    data = store.export(conv.id)
    assert data["usage"]["chat_requests"] == 0 and data["usage"]["cached_tokens"] is None
    assert "# Usage" not in to_markdown(data) and "cache not reported" not in to_markdown(data)
