"""The next request as the inspector reports it is the request the server then receives, byte
for byte; and every state a message can be in is reached the way a session reaches it."""

from __future__ import annotations

import json

from jarvis_tui.core import events as ev
from jarvis_tui.core.details.ledger import HEADER as LEDGER_HEADER
from jarvis_tui.core.engine.request_plan import next_request
from jarvis_tui.core.next_request import (
    CUT,
    EXCLUDED,
    FOLDED,
    LEDGER,
    LEFT_OUT,
    MEMORY,
    MESSAGE,
    PINNED,
    RECALL,
    RECALLED,
    STUBBED,
    SUMMARY,
    SYSTEM,
    TOOLS,
    VERBATIM,
    NextRequest,
)
from jarvis_tui.core.providers.toolcalls import openai_tools
from jarvis_tui.core.recall.turns import OTHER_SESSIONS_HEADER, RECALL_HEADER
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.specs import ONCE
from jarvis_tui.core.window.system_message import SUMMARY_HEADER
from tests.core.details.test_ledger import PLANTED, replies
from tests.core.engine.test_request_prefix import FACT, PROSE, chat_bodies, fact_compacted_away
from tests.core.engine.test_tool_round import Box, always, numbered
from tests.core.recall.test_recall_sessions import ETL, WORK, session
from tests.engine_helpers import final, make_engine, send, summarising_replies


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


async def sent_as_reported(engine, fake, text: str) -> NextRequest:
    """Report the next request for `text`, send `text`, and check the server got exactly it."""
    report = next_request(engine.basis(), text)
    assert not report.compacts_first
    # Reporting changes nothing the round decides: asked twice, the same request.
    assert dump(next_request(engine.basis(), text).wire) == dump(report.wire)
    events = await send(engine, text)
    assert isinstance(final(events), ev.Finished), final(events)
    body = chat_bodies(fake)[-1]
    assert dump(body["messages"]) == dump(report.wire)
    assert dump(body.get("tools", [])) == dump(openai_tools(report.tools) if report.tools else [])
    return report


def system_of(report: NextRequest) -> str:
    """The system message put together again from the parts the report shows."""
    kinds = (SYSTEM, MEMORY, SUMMARY, LEDGER)
    return "\n\n".join(p.text for p in report.parts if p.kind in kinds)


def state_of(engine, report: NextRequest, content: str) -> str:
    msg = next(m for m in engine.messages if m.content == content)
    return report.states[msg.id]


async def test_the_report_is_the_request_the_server_receives(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path, system_prompt="You are terse. [b]not markup[/b]")
    for i in range(3):
        await send(engine, PROSE[i].format(i=i))
    report = await sent_as_reported(engine, fake_server, "And the next step?")
    assert system_of(report) == report.wire[0]["content"]
    assert [p.kind for p in report.parts].count(MESSAGE) == len(report.wire) - 1
    assert report.parts[-1].text == "And the next step?" and report.parts[-1].message_id is None
    assert all(p.tokens > 0 for p in report.parts)
    assert 0 < report.tokens < report.budget
    assert set(report.states.values()) == {VERBATIM}
    # With nothing typed: the request as it stands, ending with the last reply.
    idle = next_request(engine.basis())
    assert idle.wire[-1]["content"] == engine.messages[-1].content
    assert len(idle.states) == len(engine.messages) == 8


async def test_a_paste_larger_than_the_window_is_reported_cut(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path, compact_threshold=1.0)
    paste = "\n".join(f"log line {i}: connection reset by peer" for i in range(1500))
    events = await send(engine, paste)
    assert any(isinstance(e, ev.WindowFitted) and e.truncated_messages for e in events)
    # Past the threshold now: the next round compacts first, and the report says so.
    report = next_request(engine.basis(), "What failed?")
    assert report.compacts_first
    assert state_of(engine, report, paste) == CUT
    part = next(p for p in report.parts if p.message_id == engine.messages[0].id)
    assert "tokens omitted" in part.text and part.text.startswith("log line 0:")
    # Cut as the last request sent it, byte for byte: the prefix the server has cached.
    assert part.text == chat_bodies(fake_server)[-1]["messages"][1]["content"]


async def test_a_compaction_folds_and_recall_brings_back(fake_server, tmp_path):
    engine = await fact_compacted_away(fake_server, tmp_path)
    report = next_request(engine.basis(), "Short check before we go on.")
    assert state_of(engine, report, FACT) == FOLDED
    summary = next(p for p in report.parts if p.kind == SUMMARY)
    assert engine.summary is not None and summary.text.endswith(engine.summary.content)
    assert system_of(report) == report.wire[0]["content"]
    await sent_as_reported(engine, fake_server, "Short check before we go on.")
    question = "Which port did the staging database db-staging-7 use?"
    report = await sent_as_reported(engine, fake_server, question)
    assert state_of(engine, report, FACT) == RECALLED
    recall = next(p for p in report.parts if p.kind == RECALL)
    assert recall.text.startswith(RECALL_HEADER) and FACT in recall.text
    asked = [p for p in report.parts if p.kind == MESSAGE][-1]
    assert asked.text.endswith(question) and RECALL_HEADER not in asked.text
    assert report.parts.index(recall) == report.parts.index(asked) - 1
    # Sent: the question carries its recalled turns from now on, and the report says so.
    later = next_request(engine.basis(), "Thanks.")
    assert state_of(engine, later, FACT) == RECALLED


async def test_pinned_and_excluded_messages(fake_server, tmp_path):
    summarising_replies(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, recall_budget=0)
    for i in range(4):
        await send(engine, PROSE[i % 2].format(i=i) + " filler words" * 40)
    [e async for e in engine.compact(reason="manual")]
    covered = next(m for m in engine.messages if m.covered)
    engine.set_pinned(covered)
    last_turn = engine.messages[-2:]
    engine.branches.set_excluded(last_turn, True)
    report = await sent_as_reported(engine, fake_server, "One more question.")
    assert report.states[covered.id] == PINNED
    assert all(report.states[m.id] == EXCLUDED for m in last_turn)
    assert any(p.message_id == covered.id for p in report.parts)
    assert not any(p.message_id == m.id for m in last_turn for p in report.parts)


async def test_a_failed_round_leaves_its_question_out(fake_server, tmp_path):
    engine = make_engine(fake_server, tmp_path)
    await send(engine, "First question.")
    fake_server.faults.append(("status", 400, {}, {"error": {"message": "bad request"}}))
    events = await send(engine, "This one fails.")
    assert isinstance(final(events), ev.Failed)
    report = await sent_as_reported(engine, fake_server, "Try again.")
    assert state_of(engine, report, "This one fails.") == LEFT_OUT
    assert state_of(engine, report, "First question.") == VERBATIM


async def test_old_tool_outputs_are_reported_stubbed(make_fake_server, tmp_path):
    fake = make_fake_server(limit=4096)
    box = Box(read=lambda path: numbered(60, path))
    engine = make_engine(fake, tmp_path, tools=box, approve=always(ONCE), tool_keep_outputs=1)
    names = ("alpha", "beta", "gamma", "delta", "epsilon")
    for name in names:
        fake.script += [[{"name": "read", "arguments": {"path": name}}], f"read {name}"]
    for name in names:
        assert isinstance(final(await send(engine, f"read {name}")), ev.Finished)
    fake.script.append("done")
    report = await sent_as_reported(engine, fake, "Thanks.")
    tools = [m for m in engine.messages if m.role == "tool"]
    assert report.states[tools[0].id] == STUBBED
    # The newest output is kept, but over its share of the budget: head and tail.
    assert report.states[tools[-1].id] == CUT
    stub = next(p for p in report.parts if p.message_id == tools[0].id)
    assert stub.text.startswith("[Tool output not repeated: read(")
    assert json.loads(next(p for p in report.parts if p.kind == TOOLS).text) == report.tools
    # A reply that called a tool shows the calls as the wire carries them, ids and all.
    asking = next(p for p in report.parts if p.role == "assistant" and '"read"' in p.text)
    call = next(m for m in report.wire if m.get("tool_calls"))["tool_calls"][0]
    assert call["id"] in asking.text and '\\"path\\": \\"alpha\\"' in asking.text


async def test_the_ledger_is_a_part_of_its_own(fake_server, tmp_path):
    replies(fake_server)  # summaries that drop every detail: the ledger keeps them
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, memory_budget=200)
    engine.store.add_memory("I prefer the command first, then the why")
    for text, _ in PLANTED:
        await send(engine, text)
    for i in range(3):
        await send(engine, f"Unrelated topic {i}: tell me about gardening " * 6)
    [e async for e in engine.compact(reason="manual")]
    report = await sent_as_reported(engine, fake_server, "So, what was that port again?")
    kinds = [p.kind for p in report.parts]
    assert kinds[:4] == [SYSTEM, MEMORY, SUMMARY, LEDGER]
    ledger = report.parts[3]
    assert ledger.text.startswith(LEDGER_HEADER) and "/etc/collector.yaml" in ledger.text
    assert LEDGER_HEADER not in report.parts[2].text
    assert "I prefer the command first" in report.parts[1].text
    assert system_of(report) == report.wire[0]["content"]


async def test_turns_recalled_from_another_session(fake_server, tmp_path):
    """Recall across sessions (a new session, no summary): the block the report shows is the
    one sent, under the other session's label, in front of the new message."""
    with Store(tmp_path / "sessions.db") as store:
        session(store, "Warehouse jobs", [*WORK, ETL, *WORK])
    engine = make_engine(fake_server, tmp_path)
    question = "Last week we talked about the nightly warehouse ETL: which host does it run on?"
    report = await sent_as_reported(engine, fake_server, question)
    recall = next(p for p in report.parts if p.kind == RECALL)
    assert OTHER_SESSIONS_HEADER in recall.text and "kestrel-07" in recall.text
    assert report.states == {}  # a new session: nothing stored before the question
    # Stored, the question carries the block from now on, and is still itself, whole.
    later = next_request(engine.basis(), "Thanks.")
    assert state_of(engine, later, question) == VERBATIM
    carried = next(p for p in later.parts if p.text.endswith(question))
    assert OTHER_SESSIONS_HEADER in carried.text


async def test_a_prompt_that_quotes_the_ledger_header_is_reported_as_the_prompt(fake_server,
                                                                               tmp_path):
    """The inspector's parts come from the pieces the system message is made of, not from
    splitting it again: a configured prompt that opens with blank space (the system message is
    stripped) and quotes the ledger's header stays one part, and the summary another."""
    summarising_replies(fake_server)
    prompt = ("  \nYou keep notes for the user.\n\n" + LEDGER_HEADER
              + "\nis what the notes under a summary are headed with.")
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, system_prompt=prompt)
    for i in range(3):
        await send(engine, PROSE[i % 2].format(i=i) + " filler words" * 60)
    [e async for e in engine.compact(reason="manual")]
    report = await sent_as_reported(engine, fake_server, "What is next?")
    system = next(p for p in report.parts if p.kind == SYSTEM)
    assert system.text == prompt.strip()
    summary = next(p for p in report.parts if p.kind == SUMMARY)
    assert summary.text.startswith(SUMMARY_HEADER)
    assert system_of(report) == report.wire[0]["content"]
