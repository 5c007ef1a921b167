"""Fault-matrix cases for text whose size the estimator can get badly wrong (issue 13, item 19).

Each sends one pathological message through `ask -` to the fake OpenAI server, which counts with
the real cl100k and refuses what does not fit with OpenAI's own error body, in a 4,096-token
window. The round must end in a reply, the stored message must be whole (only the request may
carry it cut), and at most one request may be refused: the refusal names the size the server
counted, and the retry shrinks by how far that is from our estimate.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

from jarvis_tui.core.window.fit import OMITTED_MARKER
from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial

WINDOW = 4096
OMITTED = OMITTED_MARKER.split("{n}")[1].strip()  # "tokens omitted ...]"


def _ask_with(t: Trial, text: str) -> ProcOutcome:
    with FakeProvider(limit=WINDOW) as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "--context-window", str(WINDOW),
                    "ask", "-", stdin=text, timeout=120)
        refused = [r.prompt_tokens for r in fake.chat_requests if r.overflowed]
        sent = [m["content"] for m in fake.chat_requests[-1].body["messages"]
                if m["role"] == "user"] if fake.chat_requests else []
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {ask.stderr.strip()[-120:]}")
    t.expect(ask.stdout.startswith("Reply "), f"printed {ask.stdout[:40]!r}")
    t.expect(len(refused) == len(set(refused)), f"refused the same size twice: {refused}")
    # The refusal names the size the server counted: the retry shrinks by that and fits.
    t.expect(len(refused) <= 1, f"refused {len(refused)} times: {refused}")
    t.expect(sent and (sent[-1] == text or OMITTED in sent[-1]),
             "the request carried neither the message nor a marked cut of it")
    stored = [m.content for m in t.messages() if m.role == "user"]
    if not t.expect(stored == [text], f"stored {[len(s) for s in stored]} characters, "
                                      f"not the {len(text)} sent"):
        t.lost += 1
    return t.outcome(f"reply after {len(refused)} refusal(s) {refused}")


def newlines_between_sentences(tmp: Path) -> ProcOutcome:
    t = Trial(19, "100,000 newlines between two sentences", tmp)
    return _ask_with(t, "The first sentence." + "\n" * 100_000 + "The second sentence.")


def a_million_characters_without_spaces(tmp: Path) -> ProcOutcome:
    t = Trial(19, "a 1,000,000-character line without spaces", tmp)
    return _ask_with(t, "a" * 1_000_000)


def random_punctuation(tmp: Path) -> ProcOutcome:
    # Still estimated about 9x low: what the overflow retry's shrink by the server's count is for.
    t = Trial(19, "a line of random punctuation, estimated 9x low", tmp)
    rng = random.Random(19)
    return _ask_with(t, "".join(rng.choice(string.punctuation) for _ in range(60_000)))


CASES: list[ProcCase] = [
    ProcCase(19, "100,000 newlines between two sentences", newlines_between_sentences),
    ProcCase(19, "a 1,000,000-character line without spaces", a_million_characters_without_spaces),
    ProcCase(19, "a line of random punctuation, estimated 9x low", random_punctuation),
]
