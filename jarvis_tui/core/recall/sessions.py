"""Recall across sessions: a message that points back beyond its own session ("last week", "in
the other chat", "上次", "另一个对话") brings back the whole turns of other sessions it is about,
each labelled with its session's title and date, within what the recall budget leaves.

By words, only such a message looks beyond its session: every other one would otherwise weigh
its words against every session the user ever had, and ordinary prose shares a rare word with
some of them. By meaning (issue 40), a question that is not about what is in front of the user
reads the NEAREST messages of every other session and the turns beside them, and brings turns
back only when the best scores BEYOND_GATE on its own (bench/recall/cross_session.py's false recall
on natural text chose it); the others above BEYOND_FILL then fill, ranked with half their
neighbours' mean. By words, even then the evidence is in-session recall's
(core/recall/turns.py): terms weigh by their rarity over the other sessions' messages, and a
message qualifies when what it shares is most of the question's weight, at least two words,
and held by at most MAX_SPECIFIC turns of all those sessions. Failed and excluded messages
are not evidence and never come back (the store leaves them out); a deleted session's
messages are gone from the index with it.

Our users ask in whichever language comes to hand, so the question is weighed twice: in its own
words, and as the other language can say it (recall/words.py's glossary; of a Chinese question
only its glossary words and its names, as `bridged` tells). The same rule applies to each, and
the turn holding the most weight wins whichever found it.

What another session said leaves it through `scrub` (the engine's is redact.redactor, unless
the user turned recall_redact_secrets off): a key said in one session is no other session's to
send, nor its provider's to read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass, replace

from jarvis_tui.core.details.extract import prose_of
from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.embed.numpy_later import np
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.recall.hybrid import NEIGHBOUR, ranked, searched, turn_scores
from jarvis_tui.core.recall.turns import (
    COMMON_SHARE,
    COVERAGE_BACK_REFERENCE,
    MAX_SPECIFIC,
    MAX_TURNS,
    MIN_WORDS,
    OTHER_SESSIONS_HEADER,
    Recalled,
    across,
    aliases_of,
    bridged,
    content_terms,
    fitted,
    is_question,
    lookups,
    scores,
    weighed,
    words_in,
)
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.store.records import SessionInfo
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.tokens import TokenCounter

# Not "thread": "the other thread" in a coding session is a thread of the program.
_SESSION_EN = r"(?:chats?|sessions?|conversations?)"
BEYOND_EN = re.compile(
    r"\b(?:yesterday|the other day|the day before|last (?:week|month|time|night|friday|monday"
    r"|tuesday|wednesday|thursday|weekend)|(?:a few|few|several|some|two|three|couple of) "
    rf"(?:days|weeks|months) ago|(?:another|the other|a different|a previous|an earlier|"
    rf"our (?:last|previous|other)|the (?:last|previous)|that other|other|previous) {_SESSION_EN}"
    r")\b", re.IGNORECASE)
_SESSION_ZH = "(?:对话|会话|聊天|窗口)"
BEYOND_ZH = re.compile(
    rf"上次|上回|上周|上礼拜|上星期|上个(?:星期|礼拜|月)|昨天|昨晚|前天|前几天|前些天|前阵子|"
    rf"(?:另一个|另外一个|别的|其他|其它|上一个|之前那个|之前的|以前那个){_SESSION_ZH}|"
    rf"(?:之前|以前)(?:那个|的)项目")
# A question about what is in front of the user ("this module", "run the tests again?",
# "这里为什么…") is about this session, however near another session's words come.
HERE_EN = re.compile(r"\b(?:this|that|these|those|it|again|above|here)\b", re.IGNORECASE)
HERE_ZH = re.compile(r"这个|这些|这里|这儿|这段|这样|那个|那段|上面|刚才|再")
MAX_TITLE = 60  # characters of a title in a label: it names the session, it is not content
MAX_ASKING = 1000  # characters of a message that asks about the past (see asked_back)
HOLDERS_READ = 4 * MAX_SPECIFIC  # messages holding a match worth placing in their turns

Scrub = Callable[[str], str]


def scrubbed(turn: list[Message], scrub: Scrub | None) -> list[Message]:
    """`turn`'s messages as they may leave their session: text and tool calls' arguments
    through `scrub` (None: as they are); one that changes is a copy, so the stored messages
    are never touched."""
    if scrub is None:
        return turn
    return [_scrubbed(m, scrub) for m in turn]


def _scrubbed(message: Message, scrub: Scrub) -> Message:
    # A message holding no secret is sent as it is, its cached token count with it: the gauge
    # recalls at every keystroke, and counting the same turns anew each time costs more than
    # redacting them (which redactor remembers).
    content, calls = scrub(message.content), _calls(message.tool_calls, scrub)
    if content == message.content and calls == message.tool_calls:
        return message
    return replace(message, content=content, tool_calls=calls, _tokens=None)


def _calls(calls: list[dict] | None, scrub: Scrub) -> list[dict] | None:
    out = []
    for call in calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            call = {**call, "function": {**fn, "arguments": scrub(fn["arguments"])}}
        out.append(call)
    return out if calls is not None else None


def points_beyond(text: str) -> bool:
    """Whether `text` points back beyond its own session (to another day or another chat), in
    the user's own words: "some other thread calls release()" in a pasted file points nowhere.
    """
    if not (BEYOND_EN.search(text) or BEYOND_ZH.search(text)):
        return False  # the common case, as the user types: no need to find the prose
    prose = prose_of(text)
    return bool(BEYOND_EN.search(prose) or BEYOND_ZH.search(prose))


def without_pointers(text: str) -> str:
    """`text` without what points beyond the session: "last week" is no turn's topic."""
    return BEYOND_ZH.sub(" ", BEYOND_EN.sub(" ", text))


def label(title: str, created_at: float) -> str:
    """"[title, date]": one line, no control characters, no brackets that would end it early
    or start a line of the block's own ("[user] ...")."""
    shown = " ".join(terminal_safe(title).split()).translate(str.maketrans("[]", "()"))
    shown = shown if len(shown) <= MAX_TITLE else shown[:MAX_TITLE - 1] + "…"
    day = time.strftime("%Y-%m-%d", time.localtime(created_at))
    return f"[{shown or 'untitled session'}, {day}]"


class _Outlines:
    """The branch shown of each other session, read once per recall, as turns: message id ->
    (session, start of its turn, the turn's message ids)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._read: dict[int, dict[int, tuple[int, tuple[int, ...]]]] = {}
        self._order: dict[int, list[tuple[int, ...]]] = {}  # each session's turns in order
        self._at: dict[int, dict[int, int]] = {}  # session -> turn start -> its place in order
        self._asked: dict[int, bool] = {}
        self._users: set[int] = set()  # the user's messages among the outlines read

    def turn(self, conv_id: int, message_id: int) -> tuple[int, tuple[int, ...]] | None:
        if conv_id not in self._read:
            outline = self.store.branch_outline(conv_id)
            self._read[conv_id] = _turns(outline)
            self._order[conv_id] = list(dict.fromkeys(t for _, t in
                                                      self._read[conv_id].values()))
            self._at[conv_id] = {t[0]: i for i, t in enumerate(self._order[conv_id])}
            self._users.update(mid for mid, role in outline if role == "user")
        return self._read[conv_id].get(message_id)

    def beside(self, conv_id: int, start: int) -> list[tuple[int, ...]]:
        """The turns just before and after the one starting at `start` (its outline read)."""
        order, at = self._order.get(conv_id, []), self._at.get(conv_id, {}).get(start)
        if at is None:
            return []
        return [order[i] for i in (at - 1, at + 1) if 0 <= i < len(order)]

    def asked_back(self, conv_id: int, message_id: int) -> bool:
        """Whether the message is the user asking about the past themselves ("last week, which
        host was it?"): it holds a question's words, never the answer, and asked again in a
        new session it would outrank the turn that said it (its reply, when it has the answer,
        is evidence of its own)."""
        if self.turn(conv_id, message_id) is None or message_id not in self._users:
            return False  # a reply, or not on the branch shown: read nothing
        if message_id not in self._asked:
            found = self.store.messages_by_id(conv_id, [message_id])
            # A question is short: a long message is a paste or a plan, and reading its prose
            # as the user types is what costs.
            self._asked[message_id] = bool(found) and len(found[0].content) <= MAX_ASKING \
                and points_beyond(found[0].content)
        return self._asked[message_id]


    def questions(self, conv_id: int, ids: tuple[int, ...]) -> set[int]:
        """Which of `ids` (of session `conv_id`, its outline read) are the user's questions."""
        users = [mid for mid in ids if mid in self._users]
        if not users:
            return set()
        found = self.store.messages_by_id(conv_id, users)
        return {m.id for m in found if m.id is not None and is_question(m.content)}


def _turns(outline: list[tuple[int, str]]) -> dict[int, tuple[int, tuple[int, ...]]]:
    out: dict[int, tuple[int, tuple[int, ...]]] = {}
    ids: list[int] = []
    for mid, role in [*outline, (0, "user")]:  # the sentinel closes the last turn
        if role == "user" and ids:
            turn = tuple(ids)
            out.update((i, (turn[0], turn)) for i in turn)
            ids = []
        ids.append(mid)
    return out


def recall_beyond(store: Store, conversation_id: int, query: str, counter: TokenCounter,
                  budget: int, present: Set[int] = frozenset(),
                  here: Sequence[Message] = (), scrub: Scrub | None = None,
                  meaning: Meaning | None = None, room: int | None = None) -> Recalled:
    """The turns of other sessions `query` points back to (see the module's doc), best first
    within `budget` tokens, sent oldest first, their text through `scrub`; nothing unless it
    points beyond its session. A turn all of whose messages are in `present` (carried already)
    is not sent twice, nor one that says only what `here` (this session's branch) says: a
    fork's copy of its own turns. What the ranker finds by meaning fills no more than `room`
    (the request's free room)."""
    if budget <= 0:
        return Recalled()
    if not points_beyond(query):
        if not _asks_by_meaning(query, meaning):
            return Recalled()
        outlines = _Outlines(store)
        chosen = _by_meaning(store, meaning, conversation_id, query, outlines)
        return _fitted(store, chosen, counter, budget, present, here, scrub, 0, room)
    text = without_pointers(query)
    wanted, _ = content_terms(text)
    n = store.sendable_beyond(conversation_id) if wanted else 0
    if not n:
        return Recalled()
    bridge = bridged(text, wanted)
    aliases = aliases_of([*wanted, *bridge])  # it points back: the other language counts
    found = store.postings_beyond(conversation_id, lookups([*wanted, *bridge], aliases),
                                  cap=max(3, n // COMMON_SHARE))
    session_of = {mid: cid for ids in found.values() if ids for mid, cid in ids.items()}
    outlines = _Outlines(store)
    chosen: dict[int, tuple[int, tuple[int, ...]]] = {}  # turn start -> (session, its ids)
    specific: dict[tuple[int, frozenset[str]], bool] = {}
    # The question in its own words, then as the other language can say it: aliases in the
    # first view would only make its own words look commoner than they are.
    translated = (across(found, bridge, aliases, n) if bridge
                  else weighed(found, wanted, aliases, n, translated=True))
    views: Views = [weighed(found, wanted, {}, n), translated]
    # Most evidence first, whichever view found it: the weight held, not its share, since a
    # question in the other language has only its glossary words to hold, and a long paste
    # in that language holds all of a few common ones.
    for view, _, newer, shares in sorted(_candidates(views), key=lambda c: (c[1], c[2])):
        mid = -newer
        if outlines.asked_back(session_of[mid], mid):
            continue
        if (view, shares) not in specific:
            specific[view, shares] = _specific([views[view][0][t] for t in shares],
                                               session_of, outlines)
        place = outlines.turn(session_of[mid], mid)
        if specific[view, shares] and place is not None:  # None: on a branch not shown
            chosen.setdefault(place[0], (session_of[mid], place[1]))
        if len(chosen) == MAX_TURNS:
            break
    strict = len(chosen)
    if _asks_by_meaning(text, meaning):  # then what the ranker finds, best first
        for start, found in _by_meaning(store, meaning, conversation_id, text,
                                        outlines).items():
            chosen.setdefault(start, found)
    return _fitted(store, chosen, counter, budget, present, here, scrub, strict, room)


def _asks_by_meaning(query: str, meaning: Meaning | None) -> bool:
    """Whether the ranker is asked: for a question, not about what is in front of the user."""
    return (meaning is not None and meaning.ready and is_question(query)
            and not HERE_EN.search(query) and not HERE_ZH.search(query))


NEAREST = 200  # messages of the other sessions read by meaning: about 100 turns' worth
# A question that does not point back is weighed against every session the user ever had:
# the bar is higher than in its own session (bench/recall/cross_session.py's false recall on
# natural text, and LoCoMo across sessions, chose it).
BEYOND_GATE = 0.4
# Once the best turn clears it, the question is about what those sessions hold: the turns
# near it fill the rest (a question with several parts has its answer in several).
BEYOND_FILL = 0.3


def _by_meaning(store: Store, meaning: Meaning, conversation_id: int, query: str,
                outlines: _Outlines) -> dict[int, tuple[int, tuple[int, ...]]]:
    """The other sessions' turns the hybrid ranker puts above BEYOND_FILL, best first, when the
    best reaches BEYOND_GATE: turn start -> (session, its ids)."""
    q = meaning.query(query)
    if q is None:
        return {}
    places: dict[int, tuple[int, tuple[int, ...]]] = {}
    for mid, conv_id, _ in meaning.nearest_beyond(query, conversation_id, NEAREST):
        place = outlines.turn(conv_id, mid)
        if place is not None and place[0] not in places:
            places[place[0]] = (conv_id, place[1])
    if not places:
        return {}
    # The turns beside each are read too: a story told over several turns comes back whole,
    # as in this session (hybrid.NEIGHBOUR).
    for start, (conv_id, _) in list(places.items()):
        for turn in outlines.beside(conv_id, start):
            places.setdefault(turn[0], (conv_id, turn))
    starts = list(places)
    turns = [list(places[s][1]) for s in starts]
    # A question asked in another session holds no answer: "run the tests again?" asked
    # there is nearest to the same words here, and about that session's tests, not this one's.
    asked = set().union(*(outlines.questions(*places[s]) for s in starts))
    scored = turn_scores(meaning, q, turns, _word_shares_beyond(store, conversation_id, query),
                         without=asked)
    # Whether the sessions hold anything about it is the best turn's own score, neighbours
    # left out: they decide what comes back with it, not whether anything does.
    if not len(scored) or float(scored.max()) < BEYOND_GATE:
        return {}
    found = ranked(beside_lifted(scored, starts, places, outlines), BEYOND_FILL,
                   neighbours=False)
    return {starts[r.index]: places[starts[r.index]] for r in found}


def beside_lifted(scored: np.ndarray, starts: list[int],
                  places: dict[int, tuple[int, tuple[int, ...]]],
                  outlines: _Outlines) -> np.ndarray:
    """Each turn's score with NEIGHBOUR x the mean of the turns beside it in its session that
    were scored; a turn whose own score is under BEYOND_FILL stays where it was: the turns
    beside one decide its place among those that come back, not whether it does."""
    index = {start: i for i, start in enumerate(starts)}
    out = scored.copy()
    for i, start in enumerate(starts):
        if scored[i] < BEYOND_FILL:  # the small talk beside the answer is not lifted in
            continue
        near = [scored[j] for turn in outlines.beside(places[start][0], start)
                if (j := index.get(turn[0])) is not None]
        if near:
            out[i] += NEIGHBOUR * sum(near) / len(near)
    return out


def _word_shares_beyond(store: Store, conversation_id: int, query: str) -> dict[int, float]:
    wanted, _ = content_terms(query)
    n = store.sendable_beyond(conversation_id) if wanted else 0
    if not n:
        return {}
    found = store.postings_beyond(conversation_id, wanted, cap=max(3, n // COMMON_SHARE))
    held, weight = weighed(found, wanted, {}, n)
    total = sum(weight.values())
    return {mid: score / total for mid, score in scores(held, weight).items()} if total else {}


Views = list[tuple[dict[str, set[int]], dict[str, float]]]


def _candidates(views: Views) -> Iterator[tuple[int, float, int, frozenset[str]]]:
    """The messages that hold enough of a view's weight, in at least MIN_WORDS words: (the
    view, minus the weight they hold, minus their id, the terms they share). In the second
    view, the question in the other language, a message counts only if one of its words is
    matched there alone: the first view has weighed its own words already."""
    own = views[0][0]
    for view, (held, weight) in enumerate(views):
        total = sum(weight.values())
        for mid, score in scores(held, weight).items():
            if score < COVERAGE_BACK_REFERENCE * total or total <= 0:
                continue
            shares = frozenset(t for t in held if mid in held[t])
            if words_in(shares) >= MIN_WORDS and (view == 0 or any(
                    mid not in own.get(t, ()) for t in shares)):
                yield view, -score, -mid, shares


def _specific(holders: list[set[int]], session_of: dict[int, int], outlines: _Outlines) -> bool:
    """Whether at most MAX_SPECIFIC turns, of all the other sessions, hold all of these."""
    holders.sort(key=len)
    both = set(holders[0]).intersection(*holders[1:])
    if len(both) > HOLDERS_READ:
        return False
    starts = {place[0] for mid in both
              if (place := outlines.turn(session_of[mid], mid)) is not None
              and not outlines.asked_back(session_of[mid], mid)}
    return len(starts) <= MAX_SPECIFIC


def _fitted(store: Store, chosen: dict[int, tuple[int, tuple[int, ...]]], counter: TokenCounter,
            budget: int, present: Set[int], here: Sequence[Message],
            scrub: Scrub | None, strict: int, room: int | None) -> Recalled:
    """`chosen`'s turns that fit: the first `strict` within `budget`, the rest also within
    `room` (see turns.fitted)."""
    turns: list[list[Message]] = []
    labels: list[str] = []
    titles: dict[int, str] = {}
    said = {m.content for m in here} if chosen else set()
    kept_strict = 0
    for n, (conv_id, ids) in enumerate(chosen.values()):
        turn = [m for m in store.messages_by_id(conv_id, list(ids))
                if m.status != FAILED and not m.excluded]
        if not turn or all(m.id in present for m in turn) or all(
                m.content in said for m in turn):
            continue
        kept_strict += n < strict
        if conv_id not in titles:
            info = store.get_conversation(conv_id)
            titles[conv_id] = info.title if info is not None else ""
        turns.append(scrubbed(turn, scrub))  # weighed as sent
        labels.append(label(titles[conv_id], turn[0].created_at))
    picked, used = fitted(turns, counter, budget, OTHER_SESSIONS_HEADER, labels,
                          strict=kept_strict, room=room)
    if not picked:
        return Recalled()
    picked.sort(key=lambda i: turns[i][0].created_at)  # oldest first, as said
    return Recalled([turns[i] for i in picked], used, [labels[i] for i in picked])


def joined(own: Recalled, beyond: Recalled) -> Recalled:
    """This session's recalled turns, then the other sessions': one block, one budget."""
    if not beyond.turns:
        return own
    return Recalled([*own.turns, *beyond.turns], own.tokens + beyond.tokens, beyond.labels)


@dataclass(frozen=True)
class SessionTurn:
    """A whole turn of some session, found by a search across sessions."""

    session: SessionInfo
    turn: list[Message]

    @property
    def label(self) -> str:
        return label(self.session.title, self.turn[0].created_at)

    @property
    def where(self) -> str:
        """Where it is from, for the model's search results."""
        return f"from another session, {self.label} (session {self.session.id})"


HITS_PER_TURN = 4  # index hits read per turn wanted: a turn's messages often all match


def search_sessions(store: Store, query: str, limit: int = 10, beside: int | None = None,
                    scrub: Scrub | None = None,
                    meaning: Meaning | None = None) -> list[SessionTurn]:
    """Whole turns of every session (but `beside`) that match `query`, best first, each from
    its session's branch shown, without failed or excluded messages, their text through
    `scrub` (for `search --all`, `/recall --all` and the model's search with all_sessions).
    With `meaning`, ranked as recall ranks (hybrid.searched): a turn in other words is found."""
    outlines = _Outlines(store)
    turns: dict[int, tuple[int, list[Message]]] = {}  # turn start -> (session, what it shows)

    def place(message_id: int, conv_id: int) -> int | None:
        found = outlines.turn(conv_id, message_id)
        if found is None:
            return None  # another branch's
        if found[0] not in turns:
            turns[found[0]] = (conv_id, [
                m for m in store.messages_by_id(conv_id, list(found[1]))
                if m.status != FAILED and not m.excluded])
        # Found by a message it shows: a vector outlives its message's x (it is kept for the
        # message's return), and what the user took out is no evidence.
        return found[0] if any(m.id == message_id for m in turns[found[0]][1]) else None

    hits = store.search_sessions(query, limit=limit * HITS_PER_TURN, beside=beside)
    by_words = [k for hit in hits if (k := place(hit.message_id, hit.conversation_id)) is not None]
    picked = searched(meaning, query, by_words, place,
                      lambda k: [m.id for m in turns[k][1] if m.id is not None],
                      lambda: _word_shares_beyond(store, beside or 0, query), limit,
                      beside=beside)
    infos: dict[int, SessionInfo | None] = {}
    found: list[SessionTurn] = []
    for start in picked:
        conv_id, turn = turns[start]
        if conv_id not in infos:
            infos[conv_id] = store.get_conversation(conv_id)
        info = infos[conv_id]
        if info is not None and turn:
            found.append(SessionTurn(info, scrubbed(turn, scrub)))
    return found
