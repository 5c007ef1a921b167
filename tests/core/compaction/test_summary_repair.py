"""summary_repair: one more request hands the summariser the details its summary left out and
asks for a revised summary. Only when the setting is on, something was left out and the model is
not the local demo; a failed repair keeps the first summary; the ledger then holds only what the
revised summary still leaves out, and the compaction's cost counts the extra request."""

from __future__ import annotations

import re

import pytest

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import REPAIR_INSTRUCTION
from jarvis_tui.core.details.ledger import split
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
from jarvis_tui.core.settings.config import ConfigError, Settings, load_settings, with_overrides
from tests.core.details.test_ledger import PLANTED
from tests.engine_helpers import is_summary_request, make_engine, send

GIST = "Summary: the user and the assistant discussed the migration and other topics."
DETAILS = [d for _, details in PLANTED for d in details]
PATHS = ["/etc/collector.yaml"]


def states(texts: list[str], detail: str) -> bool:
    """Whether one of `texts` holds `detail` (a number may sit inside a decision kept whole)."""
    return any(detail in text for text in texts)


def is_repair(body: dict) -> bool:
    return is_summary_request(body) and REPAIR_INSTRUCTION in body["messages"][-1]["content"]


def listed(body: dict) -> list[str]:
    """The details a repair request lists, as the model reads them."""
    _, _, tail = body["messages"][-1]["content"].partition("Details it leaves out:\n")
    return [m.group(1) for line in tail.splitlines()
            if (m := re.match(r"^- \w+: (.*?)(?: — .*)?$", line))]


def summariser(fake, repaired=lambda details: GIST + " " + " ".join(details)):  # type: ignore
    """A lossy summary first; a repair request answered by `repaired(listed details)`."""
    def reply(body: dict) -> str:
        if is_repair(body):
            return repaired(listed(body))
        return GIST if is_summary_request(body) else "Understood, noted. " * 10
    fake.reply_fn = reply


async def compact_planted(engine) -> list[ev.Event]:  # type: ignore[no-untyped-def]
    for text, _ in PLANTED:
        await send(engine, text)
    await send(engine, "Unrelated: tell me about gardening " * 5)
    return [e async for e in engine.compact(reason="manual")]


def repairs(fake) -> list:  # type: ignore[no-untyped-def]
    return [r for r in fake.chat_requests if is_repair(r.body)]


async def test_off_by_default_no_repair_request(fake_server, tmp_path):
    summariser(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1)
    assert engine.settings.summary_repair is False
    events = await compact_planted(engine)
    assert isinstance(events[-1], ev.CompactionFinished) and events[-1].calls == 1
    assert repairs(fake_server) == []


async def test_the_repair_request_lists_what_was_left_out_and_its_answer_is_the_summary(
        fake_server, tmp_path):
    summariser(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True)
    events = await compact_planted(engine)
    assert isinstance(events[-1], ev.CompactionFinished)
    [request] = repairs(fake_server)
    assert GIST in request.body["messages"][-1]["content"]
    for detail in DETAILS:
        assert states(listed(request.body), detail), detail
    body, kept = split(engine.summary.content)
    assert body.startswith(GIST) and all(d in body for d in DETAILS)
    assert kept == []  # the revised summary states everything: nothing left for the ledger


async def test_no_repair_when_nothing_was_left_out(fake_server, tmp_path):
    everything = " ".join(text for text, _ in PLANTED)
    fake_server.reply_fn = lambda body: (everything if is_summary_request(body)
                                         else "Understood, noted. " * 10)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True)
    events = await compact_planted(engine)
    assert isinstance(events[-1], ev.CompactionFinished) and events[-1].calls == 1
    assert repairs(fake_server) == []


async def test_no_repair_of_the_local_demo_model(fake_server, tmp_path):
    summariser(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True,
                         model=LOCAL_MODEL_NAME)
    events = await compact_planted(engine)
    assert isinstance(events[-1], ev.CompactionFinished)
    assert repairs(fake_server) == []
    assert all(d in engine.summary.content for d in DETAILS)  # the ledger kept them


async def test_a_failed_repair_keeps_the_first_summary_and_the_compaction(fake_server, tmp_path):
    summariser(fake_server)
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True)
    for text, _ in PLANTED:
        await send(engine, text)
    await send(engine, "Unrelated: tell me about gardening " * 5)
    # The summary request answers; the repair request fails each time it is asked.
    busy = ("status", 503, {}, {"error": {"message": "overloaded", "type": "server_error"}})
    fake_server.faults.extend([None, busy, busy, busy])
    events = [e async for e in engine.compact(reason="manual")]
    assert isinstance(events[-1], ev.CompactionFinished), events[-1]
    assert len(repairs(fake_server)) == 3  # asked, then retried as any summary request is
    body, kept = split(engine.summary.content)
    assert body == GIST
    assert all(states([k.text for k in kept], d) for d in DETAILS)  # the ledger kept them all


async def test_a_repair_that_ignores_the_request_is_not_taken(fake_server, tmp_path):
    summariser(fake_server, repaired=lambda details: "Summary: a migration was discussed.")
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True)
    events = await compact_planted(engine)
    assert isinstance(events[-1], ev.CompactionFinished) and events[-1].calls == 2
    assert split(engine.summary.content)[0] == GIST


async def test_the_ledger_keeps_only_what_the_revised_summary_leaves_out_and_costs_add_up(
        fake_server, tmp_path):
    # The revised summary states the path and nothing else it was handed.
    summariser(fake_server, repaired=lambda details: GIST + " Config: " + " ".join(
        d for d in details if d in PATHS))
    engine = make_engine(fake_server, tmp_path, keep_recent_turns=1, summary_repair=True)
    events = await compact_planted(engine)
    done = events[-1]
    assert isinstance(done, ev.CompactionFinished)
    body, kept = split(engine.summary.content)
    assert "/etc/collector.yaml" in body
    texts = [k.text for k in kept]
    assert "/etc/collector.yaml" not in texts
    assert all(states(texts, d) for d in DETAILS if d not in PATHS)
    summary_requests = [r for r in fake_server.chat_requests if is_summary_request(r.body)]
    assert len(summary_requests) == 2 and done.calls == 2
    assert done.cost_prompt_tokens == sum(r.prompt_tokens for r in summary_requests)
    assert done.cost_completion_tokens == sum(r.completion_tokens for r in summary_requests)
    row = engine.store.last_compaction_usage(engine.conversation.id)
    assert sum(u.prompt_tokens for u in row) == done.cost_prompt_tokens


def test_the_setting_is_a_true_or_false_in_the_config_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("summary_repair = true\n", encoding="utf-8")
    assert load_settings(path, env={}).summary_repair is True
    for wrong in ('"yes"', "1"):
        path.write_text(f"summary_repair = {wrong}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="summary_repair.*expected true or false"):
            load_settings(path, env={})
    assert with_overrides(Settings(), summary_repair="on").summary_repair is True
