"""A summary stays within its budget whatever the server sends back: one that ignores max_tokens
and answers with more than it was given is cut to fit, and across repeated compactions the
summary, its details ledger and the request stay within theirs."""

from __future__ import annotations

import re

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.size import summary_size
from jarvis_tui.core.compaction.summarizer import fit_summary
from jarvis_tui.core.details.extract import Detail
from jarvis_tui.core.details.ledger import join, ledger_for, section, split
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.records import Summary
from jarvis_tui.core.window.tokens import TokenCounter
from tests.core.details.test_ledger import PLANTED
from tests.engine_helpers import is_summary_request, make_engine, send, summary_material

COUNTER = TokenCounter("gpt-4o-mini")


def test_a_short_summary_is_left_as_it_is():
    assert fit_summary("Goals: ship it.", 50, COUNTER) == "Goals: ship it."


def test_a_long_summary_keeps_its_start_and_ends_at_a_line_or_sentence():
    lines = [f"- Step {i}: the team reviewed part {i} of the plan and agreed on it." for i in
             range(60)]
    text = "\n".join(lines)
    cut = fit_summary(text, 120, COUNTER)
    assert COUNTER.text(cut) <= 120 < COUNTER.text(text)
    assert text.startswith(cut) and cut.startswith(lines[0])
    assert cut.split("\n")[-1] in lines  # whole lines only
    prose = " ".join(lines).replace("\n", " ")
    cut = fit_summary(prose, 120, COUNTER)
    assert COUNTER.text(cut) <= 120 and prose.startswith(cut) and cut.endswith(".")


def test_chinese_without_spaces_is_cut_at_a_sentence_end():
    text = "".join(f"第{i}步：我们决定先备份数据库，再迁移日志服务。" for i in range(80))
    cut = fit_summary(text, 100, COUNTER)
    assert COUNTER.text(cut) <= 100 < COUNTER.text(text)
    assert text.startswith(cut) and cut.endswith("。") and len(cut) > 20
    unbroken = "摘要" * 400  # no boundary at all: cut between characters, never inside one
    cut = fit_summary(unbroken, 50, COUNTER)
    assert COUNTER.text(cut) <= 50 and unbroken.startswith(cut) and len(cut) > 10


def verbose_lossy(body: dict) -> str:
    """A summariser that ignores max_tokens and writes more than it read, dropping the paths,
    numbers and commands a real one was measured to drop."""
    words = [w for w in summary_material(body).split() if not re.search(r"[\d/`]", w)]
    return ("Summary: the user and the assistant discussed the migration.\n"
            + (" ".join(words) + "\n") * 3)


async def test_repeated_compactions_stay_within_every_budget(make_fake_server, tmp_path):
    fake = make_fake_server(limit=4096)
    fake.ignore_max_tokens = True
    fake.reply_fn = lambda body: (verbose_lossy(body) if is_summary_request(body)
                                  else "Understood, noted. " * 10)
    engine = make_engine(fake, tmp_path, keep_recent_turns=1, context_window=4096)
    counter = engine.counter
    for text, _ in PLANTED:
        await send(engine, text)
    for round_ in range(5):
        for i in range(3):
            await send(engine, f"Round {round_}-{i}: tell me more about gardening and soil. " * 5)
        events = [e async for e in engine.compact(reason="manual")]
        assert isinstance(events[-1], ev.CompactionFinished), events[-1]
    summaries = engine.store.summaries(engine.conversation.id)
    assert len(summaries) >= 5
    # The server did send summaries longer than the budget: the cut is what kept them in.
    longest = max(r.completion_tokens for r in fake.chat_requests if is_summary_request(r.body))
    assert longest > engine.summary_max_tokens
    for summary in summaries:
        body, kept = split(summary.content)
        assert counter.text(body) <= engine.summary_max_tokens, summary.id
        assert counter.text(join("", kept)) <= engine.details_max_tokens, summary.id
    assert not any(r.overflowed for r in fake.chat_requests)
    chat = [r for r in fake.chat_requests if not is_summary_request(r.body)]
    assert all(r.prompt_tokens + engine.settings.response_reserve <= 4096 for r in chat)
    # What the lossy summaries dropped still reaches the model, word for word.
    await send(engine, "So, what was that port again?")
    system = fake.chat_requests[-1].body["messages"][0]["content"]
    assert "8443" in system and "/etc/collector.yaml" in system


def test_the_ledger_section_as_appended_is_within_its_budget():
    folded = [Message("user", f"Config at /srv/app{i}/conf/main-{i}.toml, port {8000 + i}.", id=i)
              for i in range(40)]
    for budget in (40, 100, 180, 256):
        _, kept = split(ledger_for("Gist.", None, folded, folded, COUNTER, budget))
        assert kept and COUNTER.text(section(kept)) <= budget, budget


def test_the_size_counts_compactions_and_the_newest_ones_growth():
    def stored(content: str, kind: str, replaces: int | None = None) -> Summary:
        return Summary(0, 1, content, 1, 2, 2, kind, None, "m", 0.0, replaces)

    first = stored("Goals: ship.", "auto")
    edit = stored("Goals: ship the gauge, then the panel.", "edited", replaces=1)  # F2's
    second = stored(join("Goals: ship the gauge.", [Detail("path", "/etc/app.yaml", "")]),
                    "manual")
    assert summary_size([], COUNTER, 512, 256) is None
    size = summary_size([first, edit, second], COUNTER, 512, 256)
    body, kept = split(second.content)
    assert (size.summary, size.details) == (COUNTER.text(body), COUNTER.text(section(kept)))
    assert (size.summary_budget, size.details_budget, size.compactions) == (512, 256, 2)
    # Against the edit it folded in, not the compaction before it.
    assert size.growth == size.summary + size.details - COUNTER.text(edit.content)
    after_edit = summary_size([first, second, edit], COUNTER, 512, 256)
    assert after_edit.summary == COUNTER.text(edit.content) and after_edit.details == 0
    # An edit made after it changes what is shown, not what the compaction did.
    assert after_edit.growth == size.summary + size.details - COUNTER.text(first.content)


def test_an_accepted_proposal_the_user_edited_is_a_compaction_not_an_f2_edit():
    first = Summary(1, 1, "Goals: ship.", 1, 2, 2, "auto", None, "m", 0.0, None)
    # /compact's proposal, changed in the editor before Ctrl+S: stored as "edited", but it
    # folded turns in, so it is the second compaction and its growth is its own.
    accepted = Summary(2, 1, "Goals: ship the gauge and the panel.", 1, 4, 4, "edited", None,
                       "m", 0.0, None)
    size = summary_size([first, accepted], COUNTER, 512, 256)
    assert size.compactions == 2
    assert size.growth == COUNTER.text(accepted.content) - COUNTER.text(first.content)
