"""Which messages compaction folds into the summary and which stay verbatim."""

from __future__ import annotations

from jarvis_tui.core.compaction.summarizer import plan_compaction, render_transcript
from jarvis_tui.core.messages import Message


def turns(n: int) -> list[Message]:
    out = []
    for i in range(n):
        out += [Message("user", f"q{i}"), Message("assistant", f"a{i}")]
    return out


def test_keeps_the_last_turns_and_evicts_the_rest():
    history = turns(6)
    plan = plan_compaction(history, keep_recent_turns=3)
    assert [m.content for m in plan.evict] == ["q0", "a0", "q1", "a1", "q2", "a2"]
    assert [m.content for m in plan.keep] == ["q3", "a3", "q4", "a4", "q5", "a5"]


def test_nothing_to_evict_when_history_is_short():
    assert plan_compaction(turns(3), keep_recent_turns=3).evict == []
    assert plan_compaction([], keep_recent_turns=3).evict == []


def test_pinned_messages_stay_verbatim():
    history = turns(6)
    history[2].pinned = True
    plan = plan_compaction(history, keep_recent_turns=2)
    assert history[2] in plan.keep
    assert history[2] not in plan.evict
    assert history[3] in plan.evict


def test_pinned_tool_call_keeps_its_results():
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    history = [Message("user", "find it"),
               Message("assistant", "", tool_calls=[call], pinned=True),
               Message("tool", "found: src/a.py:12", tool_call_id="c1", name="grep"),
               Message("assistant", "It is in src/a.py")] + turns(3)
    plan = plan_compaction(history, keep_recent_turns=3)
    assert history[1] in plan.keep and history[2] in plan.keep
    assert history[0] in plan.evict and history[3] in plan.evict


def test_transcript_names_roles_and_tools():
    call = {"id": "c1", "type": "function",
            "function": {"name": "grep", "arguments": '{"pattern": "超时", "path": "src/"}'}}
    text = render_transcript([Message("user", "你好"),
                              Message("assistant", "", tool_calls=[call]),
                              Message("tool", "x", tool_call_id="c1", name="grep")])
    assert "User: 你好" in text
    # With its arguments: the summary should know what the tool touched.
    assert '[called grep {"pattern": "超时", "path": "src/"}]' in text
    assert "Tool result (grep): x" in text
