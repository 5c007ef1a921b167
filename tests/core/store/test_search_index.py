"""The full-text index over stored messages: CJK and English, in step with the messages table,
rebuilt when missing, and safe against whatever the user types."""

from __future__ import annotations

import sqlite3

import pytest

from jarvis_tui.core.messages import Message
from jarvis_tui.core.store import search_index
from jarvis_tui.core.store.records import StoreError
from jarvis_tui.core.store.search_index import query_terms, terms
from jarvis_tui.core.store.store import Store


def test_terms_split_cjk_into_characters_and_pairs_and_lowercase_words():
    assert terms("上下文") == "上 下 文 上下 下文"
    assert terms("My cat Mochi, 3 years") == "my cat mochi 3 years"
    assert terms("预算是4200欧元") == "预 算 是 预算 算是 4200 欧 元 欧元"
    assert terms("") == terms(None) == ""


def test_query_terms_drop_words_that_say_nothing():
    assert query_terms("What is the name of my cat?") == ["name", "cat"]
    # Function characters alone (我, 的, 什, 么) match half a conversation; in pairs they stay.
    assert query_terms("我的猫叫什么") == ["猫", "叫", "我的", "的猫", "猫叫", "叫什", "什么"]


def fill(store: Store, texts: list[str]) -> tuple[int, list[Message]]:
    conv = store.create_conversation(model="m")
    return conv.id, [store.add_message(conv.id, Message("user", t)) for t in texts]


def test_finds_the_turn_with_the_fact_in_either_language(store):
    cid, msgs = fill(store, [
        "我家的猫叫咪咪，今年三岁了。",
        "We talked about the weather in Lisbon.",
        "The launch budget is 4,200 euros, approved on Monday.",
        "今天的天气很好，我们去公园散步。",
    ])
    assert store.search(cid, "我的猫叫什么名字？")[0].message_id == msgs[0].id
    assert store.search(cid, "How much was the launch budget?")[0].message_id == msgs[2].id
    assert store.search(cid, "budgets")[0].message_id == msgs[2].id  # stemmed
    assert store.search(cid, "the what is") == []  # nothing worth searching for


def test_one_conversation_never_answers_for_another(store):
    cid, _ = fill(store, ["the deploy port is 8080"])
    other, _ = fill(store, ["nothing relevant here"])
    assert store.search(other, "deploy port") == []
    assert len(store.search(cid, "deploy port")) == 1


def test_the_index_follows_edits(store):
    cid, (msg,) = fill(store, ["a streaming reply that is still"])
    msg.content = "a streaming reply that is still growing: the password hint is pelican"
    store.update_message(msg)  # the engine stores a reply this way while it streams
    assert [h.message_id for h in store.search(cid, "pelican")] == [msg.id]


def test_covered_only_finds_what_a_summary_covers_and_nothing_pinned_back(store):
    cid, msgs = fill(store, [f"note {i} about tokens" for i in range(5)])
    store.add_summary(cid, "notes about tokens", msgs[:3], kind="auto")
    msgs[0].pinned = True
    store.update_message(msgs[0])
    found = {h.message_id for h in store.search(cid, "tokens", covered_only=True)}
    assert found == {msgs[1].id, msgs[2].id}
    assert len(store.search(cid, "tokens")) == 5


SYNTAX_TEXTS = ["plain text", "do not drop the table", "near river bank", "mark x y", "a star b"]


@pytest.mark.parametrize(("query", "found"), [
    ('"', []),
    ('AND OR NOT', ["do not drop the table"]),  # and/or are stopwords; "not" is a word here
    ('a* (b) NEAR(c d)', ["near river bank"]),  # a, b, c, d are too short to search for
    ("x:y", []),  # one-letter words say nothing
    ("'; DROP", ["do not drop the table"]),
    ("\x00", []),
    ("🙂🙂", []),
    ('plain" OR "river', ["plain text", "near river bank"]),
])
def test_anything_the_user_types_is_a_query_not_syntax(store, query, found):
    cid, msgs = fill(store, SYNTAX_TEXTS)
    ids = {m.content: m.id for m in msgs}
    # No sqlite error, and the words are searched as words: FTS5 operators and quotes in what
    # the user types neither fail the search nor change what it finds.
    assert {h.message_id for h in store.search(cid, query)} == {ids[t] for t in found}


@pytest.mark.parametrize(("term", "found"), [
    ("NOT", "do not drop the table"),
    ('drop"', "do not drop the table"),
    ("NEAR(river", "near river bank"),
    ("x:y", "mark x y"),  # unquoted, "x:" would be a column filter
])
def test_a_term_that_is_fts_syntax_is_still_searched_as_a_word(store, monkeypatch, term, found):
    """The query's terms are quoted for FTS5: should the term maker ever let an operator, a
    quote or a column filter through, it is still words, never syntax. (Today's term maker
    lower-cases and splits at punctuation, so the test hands search the raw word.)"""
    cid, msgs = fill(store, SYNTAX_TEXTS)
    ids = {m.content: m.id for m in msgs}
    monkeypatch.setattr(search_index, "query_terms", lambda text: [text])
    assert [h.message_id for h in store.search(cid, term)] == [ids[found]]


def test_a_missing_index_is_rebuilt_on_open(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as s:
        cid, msgs = fill(s, ["the cat is called Mochi", "上下文窗口是两千"])
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE message_index")
    raw.execute("DROP TRIGGER message_index_insert")
    raw.commit()
    raw.close()
    with Store(path) as s:
        assert s.search(cid, "Mochi")[0].message_id == msgs[0].id
        assert s.search(cid, "上下文")[0].message_id == msgs[1].id
        s.add_message(cid, Message("assistant", "Mochi likes tuna"))
        assert len(s.search(cid, "Mochi")) == 2  # the triggers are back too


def _spoil(path, *statements: str) -> None:
    raw = sqlite3.connect(path)
    for sql in statements:
        raw.execute(sql)
    raw.commit()
    raw.close()


FACTS = ["the cat is called Mochi", "上下文窗口是两千"] + [f"filler {i}" for i in range(40)]


@pytest.mark.parametrize("damage", [
    "UPDATE message_index_data SET block = randomblob(length(block))",
    "UPDATE message_index_data SET block = randomblob(length(block)) WHERE id = 10",
    "UPDATE message_index_config SET v = 99",
    "DROP TABLE message_index_data",
], ids=["every record", "the structure record", "the format version", "a shadow table"])
def test_a_damaged_index_is_rebuilt_on_open_and_the_user_told_once(tmp_path, damage):
    path = tmp_path / "s.db"
    with Store(path) as s:
        cid, msgs = fill(s, FACTS)
    _spoil(path, damage)
    with Store(path) as s:
        told = s.take_notices()
        assert len(told) == 1 and told[0].startswith(f"{path}: the search index was damaged (")
        assert told[0].endswith("); it was rebuilt from the stored messages, nothing was lost.")
        assert s.search(cid, "Mochi")[0].message_id == msgs[0].id
        assert s.search(cid, "上下文")[0].message_id == msgs[1].id
        s.add_message(cid, Message("assistant", "Mochi likes tuna"))
        assert len(s.search(cid, "Mochi")) == 2
    with Store(path) as s:
        assert s.take_notices() == []
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO message_index(message_index) VALUES ('integrity-check')")
    raw.close()


def test_damage_a_search_meets_is_rebuilt_and_searched_again(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as s:
        cid, msgs = fill(s, FACTS)
        # Under an open store, so only the search can find it.
        _spoil(path, "UPDATE message_index_data SET block = randomblob(length(block)) "
                     "WHERE id > 10")
        assert s.search(cid, "Mochi")[0].message_id == msgs[0].id
        assert len(s.take_notices()) == 1
        assert s.search(cid, "filler", limit=50) and s.take_notices() == []


def test_damage_a_write_meets_is_rebuilt_and_the_write_can_be_retried(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as s:
        cid, msgs = fill(s, FACTS)
        _spoil(path, "UPDATE message_index_data SET block = randomblob(length(block))")
        msg = Message("user", "a write the damaged index refuses")
        with pytest.raises(StoreError) as info:
            s.add_message(cid, msg)  # the triggers write to the index
        assert "its search index was damaged" in str(info.value)
        assert str(info.value).endswith("it has been rebuilt from the stored messages, nothing "
                                        "stored was lost. Retry.")
        assert msg.id is None and len(s.messages(cid)) == len(FACTS)
        s.add_message(cid, msg)
        assert s.search(cid, "refuses")[0].message_id == msg.id
        assert s.search(cid, "Mochi")[0].message_id == msgs[0].id


def test_postings_say_which_messages_hold_each_term_up_to_a_cap(store):
    cid, msgs = fill(store, ["the build is red", "the build is green", "Mochi named the build",
                             "我家的猫叫咪咪"])
    other, _ = fill(store, ["Mochi again", "build build"])
    found = store.postings(cid, ["mochi", "build", "name", "猫", "pelican"], cap=2)
    assert found["mochi"] == [msgs[2].id]  # this conversation's only
    assert found["build"] is None  # in three messages: more than the cap
    assert found["name"] == [msgs[2].id]  # stemmed as the index stems: "named"
    assert found["猫"] == [msgs[3].id] and found["pelican"] == []
    assert store.postings(cid, ['"', "AND"], cap=2) == {'"': [], "AND": []}  # never syntax
    assert store.postings(None, ["mochi"], cap=2) == {}


def test_postings_read_again_once_the_file_changes_here_or_in_another_process(tmp_path):
    # Kept between the reads of one question; a message added by this store or by another
    # program on the same file is in the next answer.
    path = tmp_path / "s.db"
    with Store(path) as store, Store(path) as other:
        conv = store.create_conversation(model="m")
        first = store.add_message(conv.id, Message("user", "the kestrel host runs the ETL"))
        words = ["kestrel", "etl", "nothing"]
        assert store.postings(conv.id, words, cap=10) == {
            "kestrel": [first.id], "etl": [first.id], "nothing": []}
        again = store.postings(conv.id, ["kestrel", "kestrel"], cap=10)
        assert again == {"kestrel": [first.id]}
        again["kestrel"].append(-1)  # the caller's copy: what is kept stays as it was
        assert store.postings(conv.id, ["kestrel"], cap=10) == {"kestrel": [first.id]}
        mine = store.add_message(conv.id, Message("assistant", "kestrel, yes"))
        assert store.postings(conv.id, ["kestrel"], cap=10) == {"kestrel": [first.id, mine.id]}
        theirs = other.add_message(conv.id, Message("user", "and kestrel again"))
        assert store.postings(conv.id, ["kestrel"], cap=10) == {
            "kestrel": [first.id, mine.id, theirs.id]}
        assert store.postings(conv.id, ["kestrel"], cap=2) == {"kestrel": None}  # too common
