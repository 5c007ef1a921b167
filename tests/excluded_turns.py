"""A stored session whose user took turns out (x, /forget): one fact kept, and many excluded
turns (and a failed question) about the same thing, in the same words, that match a search for
it better than the kept one does. Shared by the unit tests of every reader of the search index
and by the fault-matrix rows (tests/faults/excluded.py).

The excluded turns are many on purpose: more than any reader's LIMIT of index hits (a search
reads up to limit * 4 hits, /recall 30, `search --all` 40), so a reader whose query lets them in
has its hits filled with them and finds nothing the user kept, however carefully its caller
filters afterwards; and enough that recall reads the fact's words as common to the session.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.store.store import Store

KEPT = ("Settled at last, after a long week of back and forth with the port authority: the "
        "harbour gate code is 9052 from today on, and the night shift already knows it.")
KEPT_REPLY = "Good: 9052 it is, and the night shift knows."
TAKEN_OUT = 24  # excluded turns: 48 messages, more than any reader's LIMIT of hits
FAILED_ASK = "Harbour gate code 6161 then? Gate code 6161?"
QUESTION = "What is the harbour gate code?"
QUERY = "harbour gate code"  # what the model's search_history asks for
WORK = [
    "Can you draft the weekly report for the logistics team? Keep it short.",
    "The forklift schedule moved to Thursdays; please update the calendar note.",
    "叉车的排班改到周四了，帮我更新一下日历。",
    "Summarise the customs paperwork checklist in three bullet points.",
]


def taken_out(i: int) -> tuple[str, str]:
    """The i-th excluded turn: a figure the user tried and took back."""
    code = 7100 + i
    return (f"Scratch idea {i}: harbour gate code {code}? Gate code {code}.",
            f"Harbour gate code {code}, gate code {code}: noted as a guess.")


def excluded_texts() -> list[str]:
    """What no reader may ever bring back: each excluded figure and the failed question's."""
    return [str(7100 + i) for i in range(TAKEN_OUT)] + ["6161"]


def leaked(text: str) -> list[str]:
    """The excluded figures `text` holds."""
    return [code for code in excluded_texts() if code in text]


@dataclass
class Stored:
    conversation_id: int
    kept_id: int  # the kept user message
    excluded_ids: list[int]


def store_session(store: Store, *, title: str = "Harbour logistics",
                  covered: bool = True) -> Stored:
    """The session: everyday turns, the excluded guesses, the failed question, the kept fact,
    more everyday turns; all but the last two turns folded into a summary when `covered`."""
    conv = store.create_conversation(title=title, model="m")
    msgs: list[Message] = []
    excluded: list[int] = []

    def turn(text: str, reply: str, *, out: bool = False) -> None:
        for msg in (Message("user", text, excluded=out), Message("assistant", reply,
                                                                 excluded=out)):
            msgs.append(store.add_message(conv.id, msg))
            if out:
                excluded.append(msgs[-1].id or 0)

    for text in WORK:
        turn(text, "Done. 好的。")
    for i in range(TAKEN_OUT):
        turn(*taken_out(i), out=True)
    msgs.append(store.add_message(conv.id, Message("user", FAILED_ASK, status=FAILED)))
    excluded.append(msgs[-1].id or 0)
    turn(KEPT, KEPT_REPLY)
    kept = msgs[-2].id or 0
    for text in WORK:
        turn(text, "Done. 好的。")
    if covered:
        store.add_summary(conv.id, "Logistics chores: reports, schedules, customs; a gate code "
                          "was agreed.", msgs[:-4], kind="auto")
    return Stored(conv.id, kept, excluded)
