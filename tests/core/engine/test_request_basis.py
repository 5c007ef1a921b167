"""RequestBasis.system: the system message told apart where it is put together, and counted
once. Joined by blank lines the parts are the message fit_window sends, byte for byte, for
every mix of prompt (blank-edged, quoting the ledger's header), memory, summary, ledger and
note; the fit returns the same count, which the gauge, the inspector and a compaction read
instead of splitting or counting the message again (issue 41, item 2)."""

from __future__ import annotations

import itertools
from dataclasses import replace

from jarvis_tui.core.details.ledger import HEADER as LEDGER_HEADER
from jarvis_tui.core.memory.section import MemorySection
from jarvis_tui.core.messages import Message
from jarvis_tui.core.next_request import LEDGER, MEMORY, SUMMARY, SYSTEM
from jarvis_tui.core.store.records import Summary
from jarvis_tui.core.window.fit import fit_window
from jarvis_tui.core.window.system_message import system_text
from tests.engine_helpers import make_engine

PROMPTS = ("", "You are Jarvis.", "  \nYou keep notes.\n\n" + LEDGER_HEADER + "\nquoted.  ",
           "   ")
MEMORIES = ("", "What the user asked to be remembered:\n- 用中文回答")
SUMMARIES = ("", "We set up the deploy.",
             "We set up the deploy.\n\n" + LEDGER_HEADER + "\n- path: /srv/app\n",
             "\n\n" + LEDGER_HEADER + "\n- number: 42")
NOTES = ("", "search_history finds what it folds in.")


def summary(text: str) -> Summary | None:
    if not text:
        return None
    return Summary(1, 1, text, None, None, 1, "auto", None, "m", 0.0, None)


def test_the_parts_are_the_message_byte_for_byte(fake_server, tmp_path):
    basis = make_engine(fake_server, tmp_path).basis()
    for prompt, memory, text, note in itertools.product(PROMPTS, MEMORIES, SUMMARIES, NOTES):
        made = replace(basis, prompt=prompt, memory=MemorySection(memory, (), (), 0),
                       summary=summary(text), note=note)
        parts = made.system.message.parts()
        case = (prompt, memory, text, note)
        fitted = fit_window([Message("user", "hi")], budget=4000, counter=made.counter,
                            system=made.system)
        sent = fitted.wire[0]["content"] if fitted.wire[0]["role"] == "system" else ""
        assert "\n\n".join(t for _, t in parts) == sent == system_text(
            made.system_prompt, text or None, note), case
        # One count: the fit hands back the basis's, and it is the message's own.
        assert fitted.system is made.system, case
        assert made.system.tokens == made.counter.text(sent), case
        usage = made.usage()
        assert usage.summary == made.system.summary, case
        assert [(k, t) for k, t, _ in made.system.parts()] == parts, case
        kinds = [k for k, _ in parts]
        assert kinds == sorted(kinds, key=[SYSTEM, MEMORY, SUMMARY, LEDGER].index), case
        if prompt.strip():
            assert kinds[0] == SYSTEM and LEDGER_HEADER not in dict(parts).get(SUMMARY, ""), case
        assert (LEDGER in kinds) == (LEDGER_HEADER in text), case
