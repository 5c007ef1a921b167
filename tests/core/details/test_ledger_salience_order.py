"""Over budget, the ledger evicts by where a detail was said before anything else: what came
from a pasted block or a tool's output goes before what the assistant said, which goes before
what the user said in their own words, however often the less salient ones were repeated and
however much newer they are (DESIGN.md, compaction rules). Mention count and age only break
ties within one rank; an eviction by them alone fails every test here. (Chat taken for a detail
goes before all of these: test_chat_numbers.py.)"""

from __future__ import annotations

import pytest

from jarvis_tui.core.details.extract import Detail
from jarvis_tui.core.details.ledger import HEADER, entry, ledger_for, split
from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter

COUNTER = TokenCounter("gpt-4o-mini")
LOG = """\
2026-11-30 09:14:02,118 INFO  relay-2 picked batch 5521
2026-11-30 09:14:03,002 ERROR relay-2 batch 5521 failed: OSError: No space left on device
2026-11-30 09:14:03,004 INFO  relay-2 retry 1/3 in 2 s
"""
LOG_ERROR = LOG.splitlines()[1]  # the line of the error that happened
TOOL_ERROR = "Error: connection to db-7.internal:5433 refused after 3 attempts"


def kept_within(folded: list[Message], wanted: list[str]) -> tuple[list[str], list[Detail]]:
    """The ledger of `folded` within a budget that holds exactly the details `wanted`, and
    every detail it would hold with room for all: what was kept, and what there was."""
    everything = split(ledger_for("Gist.", None, folded, folded, COUNTER, 100_000))[1]
    assert {d.text for d in everything} >= set(wanted), everything
    # Counted as the ledger counts its entries, so that exactly these fit.
    budget = COUNTER.text("\n\n" + HEADER) + sum(
        COUNTER.text(entry(d) + "\n") for d in everything if d.text in wanted)
    kept = split(ledger_for("Gist.", None, folded, folded, COUNTER, budget))[1]
    return [d.text for d in kept], everything


@pytest.mark.parametrize(("user", "said", "reply", "replied"), [
    ("The staging config lives at /srv/staging/app.toml.", "/srv/staging/app.toml",
     "Put the cache at /var/cache/relay-spool-cache.", "/var/cache/relay-spool-cache"),
    ("我的航班是 CA1732，别忘了。", "CA1732",
     "缓存目录建议放在 /var/cache/relay-spool-cache。", "/var/cache/relay-spool-cache"),
])
def test_the_user_s_detail_outlives_the_assistant_s_said_more_often_and_later(
        user, said, reply, replied):
    folded = [Message("user", user, id=1),
              Message("assistant", reply, id=2),
              Message("user", "ok, and then?", id=3),
              Message("assistant", reply + " " + reply, id=4)]
    kept, everything = kept_within(folded, [said])
    assert {d.source for d in everything if d.text == replied} == {"assistant"}
    assert kept == [said]


def test_the_assistant_s_detail_outlives_a_log_pasted_twice_later():
    folded = [Message("user", "Where should the relay spool live?", id=1),
              Message("assistant", "Use /var/spool/relay-main-queue for the spool.", id=2),
              Message("user", f"It broke, here's the log:\n```\n{LOG}```\nWhy?", id=3),
              Message("assistant", "The disk is full.", id=4),
              Message("user", f"Again, same log:\n```\n{LOG}```", id=5)]
    kept, everything = kept_within(folded, ["/var/spool/relay-main-queue"])
    assert {d.source for d in everything if d.text == LOG_ERROR} == {"paste"}
    assert kept == ["/var/spool/relay-main-queue"]


def test_the_user_s_and_assistant_s_details_outlive_a_tool_s_repeated_errors():
    call = {"id": "c{n}", "type": "function",
            "function": {"name": "db_ping", "arguments": '{"host": "db-7.internal"}'}}
    folded = [Message("user", "Our release branch is release/2.14-hotfix.", id=1),
              Message("assistant", "I'll write the notes to docs/notes/relay-2.14.md.", id=2)]
    for n in range(3):  # the tool failing the same way, three times, after both
        folded += [Message("assistant", "", id=10 + 2 * n,
                           tool_calls=[{**call, "id": f"c{n}"}]),
                   Message("tool", TOOL_ERROR, id=11 + 2 * n, tool_call_id=f"c{n}",
                           name="db_ping")]
    wanted = ["release/2.14-hotfix", "docs/notes/relay-2.14.md"]
    kept, everything = kept_within(folded, wanted)
    assert {d.source for d in everything if d.text == TOOL_ERROR} == {"tool"}
    assert kept == wanted


def test_a_detail_a_tool_found_first_ranks_as_the_user_s_once_they_say_it():
    """Found first in a tool's output, then said by the user: it is the user's, and outlives
    an assistant's detail said more often."""
    folded = [Message("assistant", "", id=1, tool_calls=[{
                  "id": "c1", "type": "function",
                  "function": {"name": "read_config", "arguments": "{}"}}]),
              Message("tool", "listen = /run/relay/relay-admin.sock", id=2,
                      tool_call_id="c1", name="read_config"),
              Message("user", "Right, the admin socket is /run/relay/relay-admin.sock.", id=3),
              *(Message("assistant", "Logs go to /var/log/relay/relay-audit.log.", id=4 + n)
                for n in range(3))]
    kept, _ = kept_within(folded, ["/run/relay/relay-admin.sock"])
    assert kept == ["/run/relay/relay-admin.sock"]
