"""What another session said reaches this one without its secrets (issue 39, item 5): recall
across sessions, search_history's all_sessions, /recall --all; and a session's title never
shows a credential, stored by this version or an older one."""

from __future__ import annotations

import sqlite3

import pytest

from jarvis_tui.core.messages import Message
from jarvis_tui.core.recall.sessions import search_sessions
from jarvis_tui.core.recall.turns import OTHER_SESSIONS_HEADER
from jarvis_tui.core.safety.redact import REDACTED, redactor
from jarvis_tui.core.store.export import to_json, to_markdown
from jarvis_tui.core.store.messages import make_title
from jarvis_tui.core.store.store import Store
from tests.core.recall.test_recall_sessions import WORK, sent_block, session
from tests.engine_helpers import make_engine, send

KEY = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
GIVEN = "jt-given-key-0a1b2c3d4e5f"  # what the app was given (the API key): hidden as ***
DEPLOY = (f"Deploy notes for the kestrel-07 release: the deploy key is {KEY}, the prod db "
          f"password is Hunter2-prod! and the API key is {GIVEN}.")
QUESTION = "Last week I gave you the kestrel-07 release deploy key, which one was it?"
DEPLOY_ZH = f"上线备忘：kestrel-07 的部署密钥是 {KEY}，数据库密码是 Zx9-kestrel，别外传。"
QUESTION_ZH = "上次说的 kestrel-07 部署密钥是哪个？"


@pytest.fixture
def stored(tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        session(store, "Release", [*WORK, DEPLOY, *WORK])
        session(store, "上线", [*WORK, DEPLOY_ZH, *WORK])
        session(store, "Everyday", WORK * 3)
    return tmp_path


async def test_a_chinese_turn_comes_without_its_secrets(fake_server, stored):
    engine = make_engine(fake_server, stored)
    await send(engine, QUESTION_ZH)
    block = sent_block(fake_server)
    assert "kestrel-07 的部署密钥是" in block and "数据库密码是" in block
    assert KEY not in block and "Zx9-kestrel" not in block
    await engine.provider.aclose()


async def test_recalled_turns_come_without_their_secrets(fake_server, stored):
    engine = make_engine(fake_server, stored, api_key=GIVEN)
    await send(engine, QUESTION)
    block = sent_block(fake_server)
    assert "kestrel-07" in block  # recalled
    assert KEY not in block and "Hunter2-prod" not in block and GIVEN not in block
    assert f"the deploy key is {REDACTED}" in block and "the API key is ***" in block
    sent = str(fake_server.chat_requests[-1].body)
    assert KEY not in sent and GIVEN not in sent.replace(f"Bearer {GIVEN}", "")
    with Store(stored / "sessions.db") as store:  # the store keeps what was said
        assert any(KEY in m.content for c in store.list_conversations()
                   for m in store.messages(c.id))
    await engine.provider.aclose()


async def test_the_same_recalled_turn_is_the_same_bytes(fake_server, stored):
    """A request is append-only and its prefix cached: the next turn resends the block
    carried by the first question byte for byte."""
    engine = make_engine(fake_server, stored)
    await send(engine, QUESTION)
    first = sent_block(fake_server)
    await send(engine, "Thanks, and which host was that release on?")
    second = fake_server.chat_requests[-1].body["messages"]
    carried = [m["content"] for m in second if OTHER_SESSIONS_HEADER in m["content"]]
    assert len(carried) == 1 and carried[0].endswith(first)
    other = make_engine(fake_server, stored)  # another process recalls the same text alike
    await send(other, QUESTION)
    assert sent_block(fake_server) == first
    await engine.provider.aclose()
    await other.provider.aclose()


async def test_turned_off_the_turn_comes_as_it_was_said(fake_server, stored):
    engine = make_engine(fake_server, stored, recall_redact_secrets=False)
    await send(engine, QUESTION)
    assert KEY in sent_block(fake_server)  # the user's choice
    await engine.provider.aclose()


async def test_the_models_search_of_all_sessions_hides_them(fake_server, stored):
    engine = make_engine(fake_server, stored, api_key=GIVEN)
    found = engine.front._other_sessions("kestrel-07 deploy key", 3)
    text = "\n".join(m.content for turn, _ in found for m in turn)
    assert "kestrel-07" in text and KEY not in text and GIVEN not in text
    assert REDACTED in text
    off = make_engine(fake_server, stored, recall_redact_secrets=False)
    assert KEY in "\n".join(m.content for turn, _ in off.front._other_sessions("kestrel-07", 3)
                            for m in turn)
    await engine.provider.aclose()
    await off.provider.aclose()


def test_scrubbed_turns_are_copies_and_tool_calls_are_scrubbed(stored):
    call = {"id": "c1", "type": "function",
            "function": {"name": "deploy", "arguments": f'{{"token": "{KEY}"}}'}}
    with Store(stored / "sessions.db") as store:
        conv = store.create_conversation(title="tools")
        store.add_message(conv.id, Message("user", "deploy kestrel-07 rollout now"))
        store.add_message(conv.id, Message("assistant", "", tool_calls=[call]))
        found = search_sessions(store, "kestrel-07 rollout", scrub=redactor())
        held = [m for f in found for m in f.turn if m.tool_calls]
        assert held and KEY not in str(held[0].tool_calls)
        assert KEY in str(store.messages(conv.id)[1].tool_calls)  # stored as it was


# -- titles ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("first", [
    f"{KEY} is the deploy key for the kestrel-07 release",
    "the prod db password is Hunter2-prod! remember it",
    "数据库密码是 Zx9-kestrel，别外传",
    "mysql -u root -pS3cretP4ss -h db.internal app",
])
def test_a_title_is_made_without_a_credential(first):
    title = make_title(first)
    assert REDACTED in title
    assert not any(part in title for part in (KEY, "Hunter2", "Zx9-kestrel", "S3cretP4ss"))


def test_a_title_cut_inside_a_key_shows_none_of_it():
    title = make_title("Here is the whole thing for you: " + KEY + " and more words after it")
    assert KEY[:10] not in title


def test_an_older_stores_title_is_shown_without_the_token(tmp_path):
    with Store(tmp_path / "sessions.db") as store:
        conv = store.create_conversation()
        store.add_message(conv.id, Message("user", "hello"))
    with sqlite3.connect(tmp_path / "sessions.db") as db:  # what an older version stored
        db.execute("UPDATE conversations SET title = ?", (f"{KEY} deploy key…",))
    with Store(tmp_path / "sessions.db") as store:
        shown = [store.get_conversation(conv.id).title, store.list_conversations()[0].title]
        data = store.export(conv.id)
    assert all(t == f"{REDACTED} deploy key…" for t in shown)
    assert KEY not in to_markdown(data) and KEY not in to_json(data)  # without --redact too


def test_ordinary_titles_stay_as_they_were():
    for text in ("Tell me about Python 3.12 and its new typing features in detail please ok",
                 "会议定在 2026-11-26 下午三点，地点在三楼的大会议室，请大家准时参加并带上资料",
                 "reset my password for the staging box"):
        assert REDACTED not in make_title(text)


def test_a_turn_is_redacted_once_however_often_the_gauge_asks(monkeypatch):
    """The gauge recalls across sessions at every keystroke, with the same turns: redacting a
    pasted turn each time took 150 ms of a 220 ms keystroke (bench/recall/cross_session.py). The
    same text is redacted once; a text past the memo's size every time, never held."""
    from jarvis_tui.core.safety import redact as module
    calls = []
    real = module.redact
    monkeypatch.setattr(module, "redact",
                        lambda text, *a: calls.append(len(text)) or real(text, *a))
    scrub = redactor(("a key this test alone was given",))
    turn = "deploy notes: the password is Hunter2-prod! " * 50
    assert [scrub(turn) for _ in range(5)] == [real(turn)] * 5
    assert calls == [len(turn)]
    huge = "x" * (module.MEMO_CHARS + 1)
    scrub(huge), scrub(huge)
    assert calls == [len(turn), len(huge), len(huge)]


def test_a_message_without_a_secret_leaves_as_it_is():
    """Only a message the scrub changes is copied: the others keep their cached token count,
    which the gauge's recall at every keystroke would otherwise count again."""
    from jarvis_tui.core.recall.sessions import scrubbed
    plain = Message("user", "the kestrel-07 rollout starts at 9")
    secret = Message("assistant", f"use {KEY} for it")
    out = scrubbed([plain, secret], redactor())
    assert out[0] is plain
    assert out[1] is not secret and KEY not in out[1].content and KEY in secret.content
