"""Numbers that are chat, not stated facts: a chat export's date line ("[date: 1:47 pm on 18 May,
2023]") is one timestamp, not the numbers 1:47, 18 and 2023, and it and a bare number said in
passing ("down 10 in the 4th") are the ledger's first to go, so they never crowd out a fact
with a unit or a label ("the staging cluster runs on port 8443", "预算是 3 万元")."""

from __future__ import annotations

import pytest

from jarvis_tui.core.details.extract import extract
from jarvis_tui.core.details.ledger import HEADER, entry, ledger_for, split
from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter

COUNTER = TokenCounter("gpt-4o-mini")
EN_DATES = ["1:47 pm on 18 May, 2023", "8:30 pm on 1 January, 2024", "11:08 am on 16 August, 2025",
            "6:21 pm on 22 July, 2026"]
ZH_DATES = ["2023年5月18日 下午1:47", "2024年1月1日 晚上8:30", "2025年8月16日 上午11:08",
            "2026年7月22日 下午6:21"]
EN_CHAT = ["We were down 12 in the 4th and still won, scored 31 myself!",
           "Back in 2019 I moved here, and 2021 was rough.", "I'm 34 now, can you believe it?"]
ZH_CHAT = ["哈哈，比分 3 比 12，太刺激了！", "我们 2019 就认识了吧", "那年我才 17，哈哈"]


def found(text: str) -> list[tuple[str, str, bool]]:
    return [(d.kind, d.text, d.weak) for d in extract(text)]


@pytest.mark.parametrize("line", [f"[date: {EN_DATES[0]}]", f"[日期：{ZH_DATES[0]}]"])
def test_a_date_line_is_one_weak_time_not_its_numbers(line):
    assert found(line + "\nMel: Hey, long time!") == [("time", line, True)]


@pytest.mark.parametrize("text, fact", [
    ("By the way, the staging cluster runs on port 8443.", "8443"),
    ("The metrics sidecar exposes Prometheus on 9464, not the usual 9090.", "9464"),
    ("内网 MinIO 的管理控制台我开在 9301，S3 接口还是默认的 9000。", "9301"),
    ("Last week I scored 40 points, my highest.", "40"),
    ("对账服务在容器里监听 7443 端口。", "7443"),
    ("预算是 3 万元，别超了。", "3 万元"),
    ("On 18 May, 2023 I ran 12 km.", "12 km"),
])
def test_a_number_with_a_unit_or_a_label_is_a_stated_fact(text, fact):
    assert ("number", fact, False) in found(text)


def test_a_date_said_day_first_is_one_time():
    assert found("On 18 May, 2023 I ran 12 km.") == [("time", "18 May, 2023", False),
                                                     ("number", "12 km", False)]


@pytest.mark.parametrize("text, bare", [(EN_CHAT[0], "12"), (EN_CHAT[1], "2019"),
                                        (ZH_CHAT[0], "12"), (ZH_CHAT[2], "17"),
                                        ("See you on the 15th after my trip!", "15")])
def test_a_bare_number_in_chat_is_weak(text, bare):
    assert ("number", bare, True) in found(text)


def chat_session(dates: list[str], chat: list[str], fact: str, stamp: str) -> list[Message]:
    """Sessions of chat, each opening with its date line, the fact said once in the middle."""
    out: list[Message] = []
    for i, date in enumerate(dates):
        said = [f"[{stamp}{date}]\nMel: {chat[i % len(chat)]}", chat[(i + 1) % len(chat)]]
        if i == len(dates) // 2:
            said[0] += " " + fact
        out += [Message("user", said[0], id=2 * i), Message("assistant", said[1], id=2 * i + 1)]
    return out


@pytest.mark.parametrize("dates, chat, fact, value, stamp", [
    (EN_DATES, EN_CHAT, "Oh, and the staging cluster runs on port 8443.", "8443", "date: "),
    (ZH_DATES, ZH_CHAT, "对了，预算是 3 万元。", "3 万元", "日期："),
])
def test_date_lines_and_chat_numbers_do_not_crowd_out_a_stated_fact(dates, chat, fact, value,
                                                                      stamp):
    folded = chat_session(dates, chat, fact, stamp)
    everything = split(ledger_for("Gist.", None, folded, folded, COUNTER, 100_000))[1]
    weak = [d for d in everything if d.weak]
    assert {d.text for d in everything if d.kind == "time"} == {
        f"[{stamp}{date}]" for date in dates}
    assert len(weak) > len(dates)  # the dates and the chat's bare numbers
    # Room for the fact and one more line: the fact is what stays, whoever said the rest and
    # however often.
    [stated] = [d for d in everything if d.text == value]
    budget = COUNTER.text("\n\n" + HEADER) + COUNTER.text(entry(stated) + "\n") + 8
    kept = split(ledger_for("Gist.", None, folded, folded, COUNTER, budget))[1]
    assert value in [d.text for d in kept]


def test_a_ledger_read_back_still_ranks_a_date_line_last():
    """The next compaction reads the ledger from its text: a date line and a bare number are
    still chat there, though the user said them in their own words."""
    folded = chat_session(EN_DATES, EN_CHAT, "The staging cluster runs on port 8443.", "date: ")
    first = ledger_for("Gist.", None, folded, folded, COUNTER, 100_000)
    later = [Message("user", "Unrelated: what should I cook tonight?", id=99)]
    [port] = [d for d in split(first)[1] if d.text == "8443"]
    budget = COUNTER.text("\n\n" + HEADER) + COUNTER.text(entry(port) + "\n") + 8
    kept = split(ledger_for("Dinner.", first, later, [*folded, *later], COUNTER, budget))[1]
    assert [d.text for d in kept] == ["8443"]
