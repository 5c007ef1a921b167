"""The details ledger: what a lossy summary leaves out is kept word for word beside it, within
its budget, across compactions, and reaches the request the server receives."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.details.extract import Detail
from jarvis_tui.core.details.ledger import HEADER, join, ledger_for, split
from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter
from tests.engine_helpers import is_summary_request, make_engine, send

COUNTER = TokenCounter("gpt-4o-mini")
PLANTED = [
    ("The collector config lives at /etc/collector.yaml and listens on port 8443.",
     ["/etc/collector.yaml", "8443"]),
    ("To check it, run `journalctl -u collector -n 20` on the box.",
     ["journalctl -u collector -n 20"]),
    ("我们决定用 PostgreSQL 作为主数据库，超时设为 300毫秒。",
     ["我们决定用 PostgreSQL 作为主数据库", "300毫秒"]),
]


def lossy(body: dict) -> str:
    """Keeps the gist and drops every detail, as summaries were measured to."""
    return "Summary: the user and the assistant discussed the migration and other topics."


def chat(body: dict) -> str:
    return "Understood, noted. " * 10


def replies(fake) -> None:  # type: ignore[no-untyped-def]
    fake.reply_fn = lambda body: lossy(body) if is_summary_request(body) else chat(body)


def test_split_reads_back_what_join_wrote():
    details = [Detail("path", "/etc/app.yaml", ""), Detail("number", "8443", "on port 8443")]
    text = join("The gist.", details)
    assert HEADER in text
    body, back = split(text)
    assert body == "The gist." and [(d.kind, d.text, d.context) for d in back] == [
        ("path", "/etc/app.yaml", ""), ("number", "8443", "on port 8443")]
    assert split("No ledger here.") == ("No ledger here.", [])


def test_what_the_summary_states_leaves_the_ledger_and_the_rest_stays():
    folded = [Message("user", PLANTED[0][0], id=1)]
    first = ledger_for("Gist only.", None, folded, folded, COUNTER, 200)
    assert "/etc/collector.yaml" in first and "8443" in first
    # The next summary states the path: only the port stays in the ledger.
    second = ledger_for("Config at /etc/collector.yaml.", first, [], folded, COUNTER, 200)
    _, kept = split(second)
    assert [d.text for d in kept] == ["8443"]


def test_over_budget_the_least_mentioned_then_the_oldest_go_first():
    folded = [Message("user", f"file /srv/app/part{i}.py is done", id=i) for i in range(30)]
    again = [*folded, Message("user", "remember /srv/app/part0.py", id=99)]
    text = ledger_for("Gist.", None, folded, again, COUNTER, 60)
    _, kept = split(text)
    assert COUNTER.text(join("", kept)) <= 60
    assert kept and kept[0].text == "/srv/app/part0.py"  # mentioned twice: kept
    assert "/srv/app/part1.py" not in text  # the oldest of the once-mentioned went first
    assert "/srv/app/part29.py" in text
    assert ledger_for("Gist.", None, folded, folded, COUNTER, 0) == "Gist."


async def test_details_survive_repeated_lossy_compactions_into_the_request(fake_server, tmp_path):
    replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    for text, _ in PLANTED:
        await send(engine, text)
    budget_seen = []
    for round_ in range(3):
        for i in range(3):
            await send(engine, f"Unrelated topic {round_}-{i}: tell me about gardening " * 6)
        events = [e async for e in engine.compact(reason="manual")]
        assert isinstance(events[-1], ev.CompactionFinished)
        _, kept = split(engine.summary.content)
        budget_seen.append(COUNTER.text(join("", kept)))
    await send(engine, "So, what was that port again?")
    system = fake_server.chat_requests[-1].body["messages"][0]["content"]
    for _, details in PLANTED:
        for detail in details:
            assert detail in system, detail
    assert max(budget_seen) <= engine.details_max_tokens


async def test_no_ledger_when_its_budget_is_zero(fake_server, tmp_path):
    replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, details_max_tokens=0)
    for text, _ in PLANTED:
        await send(engine, text)
    await send(engine, "Unrelated: gardening " * 20)
    [e async for e in engine.compact(reason="manual")]
    assert HEADER not in engine.summary.content


def test_a_number_inside_a_kept_decision_is_not_kept_twice():
    folded = [Message("user", "我们决定用 PostgreSQL，超时 300毫秒。", id=1)]
    _, kept = split(ledger_for("Gist.", None, folded, folded, COUNTER, 200))
    assert [(d.kind, d.text) for d in kept] == [("decision", "我们决定用 PostgreSQL，超时 300毫秒")]


def test_a_detail_the_previous_summary_stated_and_the_next_drops_goes_to_the_ledger():
    # The first summary kept the path in its prose; the summary of that summary drops it, and
    # the turn that said it is no longer among the turns folded in.
    previous = "The collector config is at /etc/collector.yaml; we use port 8443."
    later = [Message("user", "Unrelated: what should I cook tonight?", id=9)]
    text = ledger_for("The user asked about dinner.", previous, later, later, COUNTER, 200)
    _, kept = split(text)
    assert {d.text for d in kept} >= {"/etc/collector.yaml", "8443"}
    # Still stated: nothing to keep twice.
    again = ledger_for("Config at /etc/collector.yaml, port 8443; dinner.", previous, later,
                       later, COUNTER, 200)
    assert split(again)[1] == []
