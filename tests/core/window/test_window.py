"""Layer 1: what goes into a request, under a budget, newest first, groups whole."""

from __future__ import annotations

from jarvis_tui.core.messages import (
    Message,
    group_of,
    is_orphan,
    sendable,
    split_groups,
    split_turns,
)
from jarvis_tui.core.window.fit import OMITTED_MARKER, fit_window, truncate_middle
from jarvis_tui.core.window.system_message import SUMMARY_HEADER, SystemMessage
from jarvis_tui.core.window.tokens import TokenCounter

SYSTEM = "You are a test assistant."


def counter() -> TokenCounter:
    return TokenCounter("test-model", exact=False)


def call(call_id: str, name: str = "read_file") -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": "{\"path\": \"a.txt\"}"}}


def chat(n: int, words: int = 20) -> list[Message]:
    out = []
    for i in range(n):
        out.append(Message("user", f"question {i} " + "word " * words))
        out.append(Message("assistant", f"answer {i} " + "text " * words))
    return out


def test_groups_keep_user_with_reply_and_calls_with_results():
    msgs = [
        Message("user", "read two files"),
        Message("assistant", "", tool_calls=[call("c1"), call("c2")]),
        Message("tool", "one", tool_call_id="c1"),
        Message("tool", "two", tool_call_id="c2"),
        Message("assistant", "done"),
        Message("user", "thanks"),
        Message("assistant", "welcome"),
    ]
    groups = split_groups(msgs)
    assert [[m.role for m in g] for g in groups] == [
        ["user", "assistant", "tool", "tool"], ["assistant"], ["user", "assistant"]]
    assert len(split_turns(msgs)) == 2
    assert not any(is_orphan(g) for g in groups)


def test_orphans_are_recognised():
    assert is_orphan([Message("tool", "x", tool_call_id="c9")])
    assert is_orphan([Message("assistant", "", tool_calls=[call("c1")])])  # never answered


def test_fill_is_newest_first_and_stops_at_the_budget():
    c = counter()
    history = chat(30) + [Message("user", "the newest question")]
    fitted = fit_window(history, budget=400, counter=c, system=SystemMessage(SYSTEM))
    assert fitted.sent[-1].content == "the newest question"
    assert fitted.history_tokens <= 400
    # The messages sent are a contiguous tail of the history.
    assert fitted.sent == history[len(history) - len(fitted.sent):]
    assert fitted.dropped == len(history) - len(fitted.sent)
    assert fitted.dropped > 0
    # And adding the next older group would have passed the budget.
    older = history[len(history) - len(fitted.sent) - 2:len(history) - len(fitted.sent)]
    assert fitted.history_tokens + sum(c.message(m) for m in older) > 400


def test_short_messages_reach_far_back_unlike_last_n():
    history = chat(40, words=1) + [Message("user", "next")]
    fitted = fit_window(history, budget=4000, counter=counter(), system=SystemMessage(SYSTEM))
    assert len(fitted.sent) == len(history)  # far more than "the last 20 messages"


def test_a_tool_group_is_never_split():
    c = counter()
    big_result = "line of tool output\n" * 60
    history = [
        Message("user", "old question " * 30), Message("assistant", "old answer " * 30),
        Message("user", "look at the file"),
        Message("assistant", "", tool_calls=[call("c1"), call("c2")]),
        Message("tool", big_result, tool_call_id="c1"),
        Message("tool", big_result, tool_call_id="c2"),
        Message("assistant", "summary of both files"),
        Message("user", "and now?"),
    ]
    for budget in range(60, 1400, 20):
        fitted = fit_window(history, budget=budget, counter=c, system=SystemMessage(SYSTEM))
        roles = [m["role"] for m in fitted.wire]
        ids = [m.get("tool_call_id") for m in fitted.wire if m["role"] == "tool"]
        calls = [tc["id"] for m in fitted.wire for tc in m.get("tool_calls", [])]
        assert sorted(ids) == sorted(calls), (budget, roles)
        assert fitted.wire[-1]["content"] == "and now?"


def test_orphan_tool_result_in_history_is_not_sent():
    history = [Message("tool", "stray output", tool_call_id="gone"),
               Message("user", "hello"), Message("assistant", "hi"), Message("user", "again")]
    fitted = fit_window(history, budget=1000, counter=counter(), system=SystemMessage(SYSTEM))
    assert all(m["role"] != "tool" for m in fitted.wire)


def test_huge_message_is_cut_in_the_request_only():
    c = counter()
    pasted = "开头的一段话。" + ("This is line %d of a pasted log file.\n" * 3000) % tuple(
        range(3000)) + "THE END"
    history = [Message("user", pasted)]
    fitted = fit_window(history, budget=500, counter=c, system=SystemMessage(SYSTEM))
    sent = fitted.wire[-1]["content"]
    assert sent.startswith("开头的一段话。")
    assert sent.endswith("THE END")
    assert "tokens omitted ..." in sent
    assert c.text(sent) <= 500
    assert history[0].content == pasted  # the stored message stays whole
    assert fitted.truncated == 1


def test_truncate_middle_reports_what_it_left_out():
    c = counter()
    text = "字" * 5000
    cut, omitted = truncate_middle(text, 300, c)
    assert c.text(cut) <= 300
    assert omitted > 4000
    assert OMITTED_MARKER.format(n=omitted).strip() in cut
    assert truncate_middle("short", 300, c) == ("short", 0)


def test_newest_user_message_is_always_sent_even_with_no_room():
    history = chat(3) + [Message("user", "x " * 2000)]
    fitted = fit_window(history, budget=10, counter=counter(), system=SystemMessage(SYSTEM))
    assert fitted.wire[-1]["role"] == "user"
    assert len(fitted.wire) == 2  # system + the (cut) newest message: never an empty request


def test_summary_goes_into_the_system_message_and_counts_against_the_budget():
    c = counter()
    history = chat(20) + [Message("user", "continue")]
    plain = fit_window(history, budget=600, counter=c, system=SystemMessage(SYSTEM))
    summary = "用户在做一个终端聊天客户端。" * 20
    with_summary = fit_window(history, budget=600, counter=c,
                              system=SystemMessage(SYSTEM, summary_head=summary))
    assert with_summary.wire[0]["role"] == "system"
    assert SUMMARY_HEADER in with_summary.wire[0]["content"]
    assert summary in with_summary.wire[0]["content"]
    assert sum(m["role"] == "system" for m in with_summary.wire) == 1
    assert len(with_summary.sent) < len(plain.sent)


def test_pinned_group_is_kept_when_older_ones_are_dropped():
    history = chat(30)
    history[2].pinned = True  # an old user message the user pinned
    history.append(Message("user", "newest"))
    fitted = fit_window(history, budget=500, counter=counter(), system=SystemMessage(SYSTEM))
    assert history[2] in fitted.sent
    assert history[3] in fitted.sent  # with its reply
    assert history[0] not in fitted.sent


def test_estimated_raw_covers_the_whole_request():
    c = counter()
    history = chat(5) + [Message("user", "hi")]
    fitted = fit_window(history, budget=10_000, counter=c, system=SystemMessage(SYSTEM))
    expected = c.messages(history) + c.raw_text(SYSTEM) + 4
    assert abs(fitted.estimated_raw - expected) <= 8


def test_fit_counts_only_the_window_not_the_whole_history():
    """Tokens are counted for the groups visited (the window and one more), not all 10,000."""
    c = counter()
    history = chat(5000, words=30) + [Message("user", "last")]
    counted = []
    original = c.message

    def counting(msg: Message) -> int:
        counted.append(msg)
        return original(msg)

    c.message = counting  # type: ignore[method-assign]
    fitted = fit_window(history, budget=2000, counter=c, system=SystemMessage(SYSTEM))
    assert len(set(map(id, counted))) <= len(fitted.sent) + 2
    assert len(counted) < 3 * len(fitted.sent) + 6


def random_history(rng, n: int) -> list[Message]:
    """A plausible but messy history: tool loops, stray tool results, unanswered calls, pins."""
    out: list[Message] = []
    for k in range(n):
        roll = rng.random()
        if roll < 0.35:
            out.append(Message("user", "u" * rng.randint(1, 400)))
        elif roll < 0.6:
            out.append(Message("assistant", "a" * rng.randint(1, 400)))
        elif roll < 0.75:
            ids = [f"c{k}-{j}" for j in range(rng.randint(1, 3))]
            out.append(Message("assistant", "", tool_calls=[call(i) for i in ids]))
            for i in ids[: rng.randint(0, len(ids))]:  # sometimes results are missing
                out.append(Message("tool", "t" * rng.randint(1, 800), tool_call_id=i))
        else:
            out.append(Message("tool", "stray", tool_call_id=f"x{k}"))
        out[-1].pinned = rng.random() < 0.03
    out.append(Message("user", "newest question"))
    return out


def test_random_histories_never_send_orphans_and_keep_the_newest_message():
    import random

    rng = random.Random(7)
    c = counter()
    for _ in range(300):
        history = random_history(rng, rng.randint(0, 60))
        budget = rng.randint(20, 3000)
        fitted = fit_window(history, budget=budget, counter=c, system=SystemMessage(SYSTEM))
        wire = fitted.wire[1:]
        assert wire[-1]["content"] == "newest question"
        calls = [tc["id"] for m in wire for tc in m.get("tool_calls", [])]
        results = [m["tool_call_id"] for m in wire if m["role"] == "tool"]
        assert sorted(calls) == sorted(results)  # every call answered, every result asked for
        assert fitted.history_tokens <= max(budget, 64) or fitted.truncated
        # Groups agree with the forward reading of the same history.
        assert [m for g in split_groups(history) for m in g] == history
        # Apart from pinned groups, what is sent is one unbroken run back from the newest:
        # inside that run only messages that can never be sent (stray results) are left out.
        sent = {id(m) for m in fitted.sent}
        in_pinned = {j for i, m in enumerate(history) if m.pinned
                     for j in range(*group_of(history, i))}
        run = [i for i, m in enumerate(history) if id(m) in sent and i not in in_pinned]
        for i in range(min(run), len(history)):
            if id(history[i]) not in sent and i not in in_pinned:
                assert history[i] not in sendable(history[slice(*group_of(history, i))])


def test_group_of_finds_the_whole_group_around_a_message():
    msgs = [Message("user", "q"), Message("assistant", "", tool_calls=[call("c1")]),
            Message("tool", "r", tool_call_id="c1"), Message("assistant", "done"),
            Message("user", "next")]
    assert group_of(msgs, 2) == (0, 3)
    assert group_of(msgs, 0) == (0, 3)
    assert group_of(msgs, 3) == (3, 4)
    assert group_of(msgs, 4) == (4, 5)


def test_a_reply_stored_with_repeated_call_ids_is_sent_with_unique_ones():
    """Stored before ids were made unique: `dup`, `dup` and `` in one reply. The request
    renames them, each result with the call it answers (in order), and stores nothing new."""
    calls = [call("dup"), call("dup", "search"), call("")]
    history = [
        Message("user", "three calls"),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "first", tool_call_id="dup"),
        Message("tool", "second", tool_call_id="dup"),
        Message("tool", "third", tool_call_id=""),
        Message("assistant", "done"),
        Message("user", "and now?"),
    ]
    wire = fit_window(history, budget=4000, counter=counter(), system=SystemMessage(SYSTEM)).wire
    ids = [c["id"] for c in wire[2]["tool_calls"]]
    assert ids[0] == "dup" and len(set(ids)) == 3 and all(ids)
    assert [m.get("tool_call_id") for m in wire[3:6]] == ids
    assert [m["content"] for m in wire[3:6]] == ["first", "second", "third"]
    assert [c["id"] for c in history[1].tool_calls or []] == ["dup", "dup", ""]
    plain = fit_window(chat(3), budget=4000, counter=counter(), system=SystemMessage(SYSTEM)).wire
    assert all("tool_calls" not in m for m in plain)
