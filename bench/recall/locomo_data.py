"""LoCoMo for bench/recall/locomo.py: reading a conversation, turning it into the messages fed to a
chat client, and scoring a request against a question's evidence turns.

Feeding (the decisions bench/recall/locomo.py's docstring states): speaker_a is the user, speaker_b
the assistant; each turn is fed as "Name: text", a shared photo's blip_caption appended as
"[shares a photo: caption]"; the first turn of each LoCoMo session starts with its date line
"[date: session_N_date_time]"; consecutive turns of one speaker (only across a session's edge:
LoCoMo never has two in a row inside one) are joined into one message, a blank line apart. The
annotations (observation, summary, events) are never read.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5 left out
NO_REPLY = "OK."  # the reply to a user message that closes a feed (speaker_b said nothing after)
RAREST = 5  # content words of an evidence turn matched when it is not there verbatim
MIN_SPAN = 200  # characters; see near()
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Words too common in chat to identify a turn (plus any word under three letters).
FOUND: Counter = Counter()  # evidence checks by outcome, over the run (for the report)
STOP = set("""
the and for are but not you your yours with this that these those have has had was were will
would could should can just what when where which who whom why how all any some more most other
into onto from about over after before again then than too very also its it's i'm i've i'll
you're you've we're they're that's there here their they them our ours she her hers him his
been being does did doing done get got getting make made really much many such only own same so
out off one two our let let's yeah yes okay hey like know think thanks thank great good
""".split())


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str  # the turn's text as LoCoMo has it (what "verbatim" looks for)
    fed: str  # its text as fed: the text and the photo's caption, without the speaker's name


@dataclass
class Question:
    text: str
    answer: str
    category: int
    evidence: list[str]  # dia_ids of turns that exist (see load())


@dataclass
class Conversation:
    name: str
    speaker_a: str
    speaker_b: str
    sessions: list[tuple[str, list[Turn]]]  # (date, turns) in order
    questions: list[Question]
    dropped_ids: int = 0  # evidence ids that name no turn (left out of their question)
    turns: dict[str, Turn] = field(default_factory=dict)
    rarity: Counter = field(default_factory=Counter)  # word -> turns of the conversation with it

    def rarest(self, dia_id: str) -> list[str]:
        words = set(content_words(self.turns[dia_id].fed))
        return sorted(words, key=lambda w: (self.rarity[w], w))[:RAREST]


def content_words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if len(w) > 2 and w not in STOP]


def load(path: Path) -> Conversation:
    raw = json.loads(path.read_text(encoding="utf-8"))
    numbers = sorted(int(k[8:]) for k in raw if re.fullmatch(r"session_\d+", k))
    sessions = []
    for n in numbers:
        turns = [Turn(t["dia_id"], t["speaker"], t["text"],
                      t["text"] + (f" [shares a photo: {t['blip_caption']}]"
                                   if t.get("blip_caption") else ""))
                 for t in raw[f"session_{n}"]]
        sessions.append((raw[f"session_{n}_date_time"], turns))
    conv = Conversation(path.stem, raw["speaker_a"], raw["speaker_b"], sessions, [])
    conv.turns = {t.dia_id: t for _, turns in sessions for t in turns}
    for turn in conv.turns.values():
        conv.rarity.update(set(content_words(turn.fed)))
    for qa in raw["qa"]:
        if qa["category"] not in CATEGORIES:
            continue
        # The release has a few malformed ids ("D:11:26") and ids of turns that do not exist:
        # the first are read as meant, the second left out (and counted).
        ids = [re.sub(r"^D:", "D", e.strip()) for e in qa["evidence"]]
        known = [e for e in ids if e in conv.turns]
        conv.dropped_ids += len(ids) - len(known)
        if known:
            conv.questions.append(Question(qa["question"], str(qa["answer"]), qa["category"],
                                           known))
    return conv


def exchanges(sessions: list[tuple[str, list[Turn]]], speaker_a: str) -> list[tuple[str, str]]:
    """(user message, the assistant's reply) pairs for feeding these sessions in order. A feed
    that opens with speaker_b gets a user message of the date line alone (a chat starts with
    the user); one that ends with speaker_a is answered NO_REPLY."""
    blocks: list[list[str]] = []  # alternating user, assistant; each a list of pieces
    roles: list[bool] = []  # True: user
    for date, turns in sessions:
        for i, turn in enumerate(turns):
            user = turn.speaker == speaker_a
            piece = f"{turn.speaker}: {turn.fed}"
            if i == 0:
                piece = f"[date: {date}]\n{piece}"
            if not blocks and not user:
                blocks.append([f"[date: {date}]"])
                roles.append(True)
                piece = piece.partition("\n")[2]
            if roles and roles[-1] == user:
                blocks[-1].append(piece)
            else:
                blocks.append([piece])
                roles.append(user)
    if roles and roles[-1]:
        blocks.append([NO_REPLY])
    texts = ["\n\n".join(b) for b in blocks]
    return list(zip(texts[::2], texts[1::2], strict=True))


# ---- scoring -----------------------------------------------------------------------------------

def request_text(body: dict, asked: str) -> str:
    """What a request carries, the question taken out (its own words must not count as the
    evidence's): every message's text, tools left out."""
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(content or "")
    return "\n\n".join(parts).replace(asked, "")


class Scorer:
    """One request's text, indexed once for the evidence checks of its question."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions: dict[str, list[int]] = {}
        for m in WORD.finditer(text.lower()):
            self.positions.setdefault(m.group(), []).append(m.start())

    def has(self, conv: Conversation, dia_id: str) -> bool:
        turn = conv.turns[dia_id]
        if turn.text in self.text:
            FOUND["verbatim"] += 1
            return True
        if self.near(conv.rarest(dia_id), len(turn.fed)):
            FOUND["by its rarest words"] += 1
            return True
        FOUND["missing"] += 1
        return False

    def near(self, words: list[str], length: int) -> bool:
        """Whether all `words` occur within one span of max(MIN_SPAN, 2 x the turn's length)
        characters. Why that span: the turn restated with some reformatting (a ledger line,
        a cut marker, a speaker or date header put in) stays within about twice its own
        length; five of the conversation's rarest words of one turn found that close together
        elsewhere is unlikely, while across the whole request they often are (same topic, many
        turns). MIN_SPAN keeps a very short turn from needing its words touching."""
        if not words or any(w not in self.positions for w in words):
            return False
        span = max(MIN_SPAN, 2 * length)
        hits = sorted((p, w) for w in words for p in self.positions[w])
        starts = [p for p, _ in hits]
        for i, (start, _) in enumerate(hits):
            end = bisect.bisect_right(starts, start + span, lo=i)
            if len({w for _, w in hits[i:end]}) == len(words):
                return True
        return False

    def evidence_all(self, conv: Conversation, q: Question) -> bool:
        return all(self.has(conv, e) for e in q.evidence)

    def answer_in(self, q: Question) -> bool:
        return q.answer.lower() in self.text.lower()
