"""Recall: the original turns behind a summary, brought back when the new message is about them.

A summary keeps the gist and loses the detail: the cat's name, the exact figure, the error text.
Every original is still in the store, so before each request the new user message is weighed
against the messages a summary covers; the few whole turns it is about go into the request
after the summary, labelled, oldest first, within the recall budget.

"About" needs evidence, not shared vocabulary: every recall changes the request and so breaks
the provider's prefix cache, and ordinary prose shares common words with half the session.
Each of the message's search terms weighs by how rare it is in this session (a name said once
weighs a lot, "build" said in every other message nothing), and a covered message
qualifies when what it shares with the new one
  - is held, all of it together, by at most MAX_SPECIFIC turns of the session: it picks that
    turn out rather than a topic the whole session is about;
  - is most of the new message's weight (COVERAGE): the new message is about that, not about
    something else that happens to touch it;
  - is at least two words: one shared word alone is as likely chance as a name.
A back-reference ("again", "you said", "之前", "来着") lowers the share needed, never the rest.
Only messages holding the new message's terms are read, never the whole session: this runs as
the user types.

A question names the *shape* of what it wants more often than its words: "the config file",
"which port", "那个命令" share nothing with "it lives at /etc/app/settings.yaml". Such a cue
counts as one more shared word for a turn that holds a detail of that shape (a path, a number, a
command; found as the details ledger finds them), weighed as a common word is. A question that
is nothing but a cue and points back ("that port?", "那个命令是什么来着？") brings back the newest
covered turn holding that shape.
"""

from __future__ import annotations

import math
import re
import time
import weakref
from collections.abc import Collection, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from itertools import count, pairwise

from jarvis_tui.core.details.extract import Detail, prose_of
from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.messages import FAILED, Message, split_turns, turn_span
from jarvis_tui.core.recall.hybrid import ranked, searched, turn_scores
from jarvis_tui.core.recall.shapes import (
    SHAPE_WEIGHT,
    Cues,
    asks_what,
    cues_of,
    shape_term,
    shapes_of,
)
from jarvis_tui.core.recall.words import chinese_words, other_language
from jarvis_tui.core.store.search_index import is_cjk, query_terms
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.window.history import History
from jarvis_tui.core.window.tokens import TokenCounter

RECALL_HEADER = ("Recalled from earlier in this conversation (original messages that the "
                 "summary above covers, oldest first):")
OTHER_SESSIONS_HEADER = ("Recalled from the user's other sessions (original turns the new "
                         "message points back to, oldest first, each under its session's "
                         "title and date):")
RECALL_HEADERS = (RECALL_HEADER, OTHER_SESSIONS_HEADER)
MAX_TURNS = 3  # found by the words alone: the evidence rule below
MAX_FILL = 400  # turns read for the budget's fill (a LoCoMo turn is ~30 tokens)
MAX_MISSES = 8  # turns in a row that no longer fit: the budget is spent
# The fill is for a question: a statement or a paste brings its own text, and every turn
# recalled is read anew by the server on every request that carries it (bench/cost/cache.py).
MAX_ASKING = 300  # characters: a question is short; a page is a paste
MAX_SPECIFIC = 3  # turns that may hold a match for it to single one out
COVERAGE = 0.5  # share of the new message's term weight a match must hold
COVERAGE_BACK_REFERENCE = 0.4
MIN_WORDS = 2  # shared words a match needs: one alone ("continue", "继续") is chance
# A pasted file or page has thousands of terms, each a look-up as the user types; its first
# ones say what it is about as well as all of them do.
MAX_TERMS = 200
COMMON_SHARE = 5  # a term in more than 1/COMMON_SHARE of the session's messages weighs nothing
SHAPE_SCAN = 400  # messages read back for "that port?": as the user types, so a few hundred
# Words that refer back to the conversation itself. They are taken out of the terms (no turn
# is about "again") and lower the share needed.
BACK_REFERENCE_WORDS = frozenset(
    "again earlier previously remember recall remind reminded mentioned".split())
BACK_REFERENCE_PAIRS = frozenset((who, verb) for who in ("you", "i", "we")
                                 for verb in ("said", "told", "mentioned", "discussed"))
BACK_REFERENCE_ZH = ("还记得", "记得", "之前", "刚才", "上次", "来着", "提到", "说过", "以前",
                     "先前", "当时")
# Words too common in any conversation to say which turn is meant, beyond the search's own
# stopwords: a session's own counts learn the rest, but need many messages to.
COMMON_WORDS = frozenset("""
about after all also any anything back been being both bit each even ever get gets getting go
going good got here her him his just know let like lot make maybe more most much need new no
not now ok okay one only other out over really same should so some something still sure
thank thanks thing things think time too up very want way well yes yet
""".split())
COMMON_ZH = ("为什么", "我们", "你们", "他们", "她们", "咱们", "大家", "自己", "什么", "怎么",
             "哪里", "哪个", "哪些", "这个", "那个", "这些", "那些", "这样", "那样", "一下",
             "一个", "一些", "一起", "可以", "就是", "还是", "但是", "因为", "所以", "如果",
             "已经", "没有", "知道", "觉得", "现在", "时候", "今天", "讨论", "问题", "事情",
             "东西", "然后", "其实", "应该", "需要", "可能", "比较", "非常", "真的", "好的",
             "谢谢", "请问", "告诉", "顺便", "一直", "有点", "说的", "最后", "那边", "那块")


@dataclass
class Recalled:
    turns: list[list[Message]] = field(default_factory=list)  # whole turns, oldest first
    tokens: int = 0  # calibrated tokens of the block as sent
    # Per turn from another session (core/recall/sessions.py), the label it goes under:
    # "[title, date]"; this session's turns come first and have none.
    labels: list[str] = field(default_factory=list)

    @property
    def sessions(self) -> tuple[str, ...]:
        """The labels of the turns brought from other sessions."""
        return tuple(self.labels)

    @property
    def block(self) -> str:
        """The text sent in front of the new user message ("" when nothing)."""
        own = self.turns[:len(self.turns) - len(self.labels)]
        lines = [RECALL_HEADER] if own else []
        for turn in own:
            lines.extend([said_at(turn), *turn_lines(turn)])
        if self.labels:
            lines.append(OTHER_SESSIONS_HEADER)
        for label, turn in zip(self.labels, self.turns[len(own):], strict=True):
            lines.extend([label, *turn_lines(turn)])
        return "\n".join(lines)


def said_at(turn: list[Message]) -> str:
    """When a turn of this session was said ("[2023-05-18 13:47]"): "yesterday" or "last
    week" in it means something only beside its date."""
    return time.strftime("[%Y-%m-%d %H:%M]", time.localtime(turn[0].created_at))


def turn_lines(turn: list[Message]) -> list[str]:
    return [f"[{msg.role}] {msg.content}" for msg in turn]


def fitted(turns: list[list[Message]], counter: TokenCounter, budget: int, header: str,
           labels: Sequence[str] = (), *, strict: int | None = None,
           room: int | None = None) -> tuple[list[int], int]:
    """Which of `turns` (best first) fit `budget` under `header`, each whole or not at all (a
    label with it, when given), and the tokens they take. The first `strict` turns (all, by
    default) are evidence the words named and may push the oldest verbatim turns out of the
    request; the rest only fill, within `room` more tokens (the request's free room)."""
    picked: list[int] = []
    used = counter.text(header) if turns else 0
    misses = 0
    strict = len(turns) if strict is None else strict
    cap = budget
    label_cost: dict[str, int] = {}
    for i, turn in enumerate(turns):
        if i == strict and room is not None:
            cap = min(budget, used + max(0, room))
        if not turn:
            continue
        # A line "[role] text" costs what the message does (the role's tag for its framing),
        # and the message's count is kept on it: hundreds of candidates are not counted anew.
        cost = sum(counter.message(msg) + 1 for msg in turn)
        if labels:
            if labels[i] not in label_cost:  # turns said in the same minute share theirs
                label_cost[labels[i]] = counter.text(labels[i]) + 1
            cost += label_cost[labels[i]]
        if used + cost <= cap:
            picked.append(i)
            used += cost
        else:
            misses += 1
            if misses == MAX_MISSES:  # full: counting hundreds more to fit one costs more
                break
    return picked, used


def content_terms(query: str) -> tuple[list[str], bool]:
    """The terms of `query` that can say which turn it is about, and whether it refers back
    to the conversation."""
    query, back = _content(query)
    wanted = query_terms(query)
    words = _words(query)
    back = back or any(t in BACK_REFERENCE_WORDS for t in wanted) or any(
        pair in BACK_REFERENCE_PAIRS for pair in pairwise(words))
    wanted = [t for t in wanted if t not in BACK_REFERENCE_WORDS and t not in COMMON_WORDS]
    return wanted[:MAX_TERMS], back


def _content(query: str) -> tuple[str, bool]:
    """`query` without the Chinese phrases that refer back or say nothing, and whether one
    referred back."""
    back = False
    for phrase in BACK_REFERENCE_ZH:
        if phrase in query:
            back = True
            query = query.replace(phrase, " ")  # and the pairs across it go with it
    for phrase in COMMON_ZH:
        query = query.replace(phrase, " ")
    return query, back


def bridged(query: str, wanted: list[str]) -> list[str]:
    """The terms of `query` a turn in the other language can hold, when it has Chinese that
    the glossary knows: each glossary word of its Chinese as one term (its key pair), and its
    terms that are not Chinese (a name, a number, "ETL": the same in either language). The
    index's other terms of a Chinese run, its characters alone and the pairs across two words
    (据仓 of 数据仓库), no English turn can hold: weighed, they would count against every one.
    What the glossary does not know still counts: its words must be most of the Chinese (the
    share a match must hold of the question's weight), else the question is about more than
    they can show an English turn says ("会议指出主要风险是第三方支付接口的文档不完整" is not about
    every turn with "meeting", "payment" and "docs").
    """
    keys, share = chinese_words(_content(query)[0])
    return [*keys, *(t for t in wanted if not is_cjk(t))] if keys and share >= COVERAGE else []


def across(found: Mapping[str, Collection[int] | None], bridge: list[str],
           aliases: dict[str, tuple[str, ...]], n: int,
           own: int | None = None) -> tuple[dict[str, set[int]], dict[str, float]]:
    """As `weighed`, for the terms of `bridged`: a Chinese word held only where its English
    words are, so what matches there matches in the other language."""
    english = {t: ids for t, ids in found.items() if not is_cjk(t)}
    return weighed(english, bridge, aliases, n, own, translated=True)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def words_in(shared: frozenset[str]) -> int:
    """About how many words `shared` is: a CJK pair counts as one and takes its characters
    with it ("妹妹" shared is one word, not 妹 + 妹妹), a CJK character alone counts as one."""
    paired = {ch for t in shared if len(t) == 2 and is_cjk(t) for ch in t}
    return sum(1 for t in shared if len(t) > 1 or not is_cjk(t) or t not in paired)


def _recallable(msg: Message) -> bool:
    # Pinned ones are sent anyway: never recall what is already in the window; and never one
    # the user took out of the requests.
    return (msg.covered and not msg.pinned and msg.status != FAILED and msg.id is not None
            and not msg.excluded)


def _own_id(history: History, query: str) -> int | None:
    """The stored message that is `query` itself (sending stores it first): not evidence of
    anything earlier."""
    for msg in reversed(history.all):
        if msg.role == "user":
            return msg.id if msg.content == query else None
    return None


def recall(store: Store, conversation_id: int, history: History, query: str,
           counter: TokenCounter, budget: int, present: Set[int] = frozenset(),
           ledger: Sequence[Detail] = (), meaning: Meaning | None = None,
           room: int | None = None, statement: int | None = None) -> Recalled:
    """The turns a summary covers that `query` is about (see the module's doc), within
    `budget` tokens; a turn whose messages are all in `present` (an earlier message of the
    request carries them already) is not sent twice. `ledger` is the details ledger the
    request carries: a shape asked for that it holds is answered there already. With
    `meaning`, the turns the hybrid ranker (recall/hybrid.py) finds fill what the budget
    leaves after those, best first (what has a vector: the engine embeds before a send),
    and no more than `room` (the request's free room: the newest turns stay)."""
    if not is_question(query):
        # A statement gets the word evidence alone, within half the share and at most
        # `statement`: what it recalls is carried in every later request until the next
        # compaction, and at the full share the big pasted turns it brought back doubled the
        # compactions (bench/cost/cache.py).
        budget = min(budget // 2, budget if statement is None else statement)
    if budget <= 0:
        return Recalled()
    wanted, back = content_terms(query)
    cues = cues_of(query)
    least = COVERAGE_BACK_REFERENCE if back else COVERAGE
    chosen: dict[int, list[Message]] = {}  # turn start -> its recallable messages, best first
    found = list(_evidence(store, conversation_id, history, query, wanted, least, cues))
    # Nothing said in these words, in this language: the question still names what it wants
    # ("那个服务的端口是多少来着？" of "the service listens on 8443"). The ledger is the first
    # place it is; else the newest turn that said one in its own words.
    if not found and cues.kinds and _asks_back(query, wanted, cues, back) and not _in_ledger(
            ledger, cues.kinds):
        found = _newest_of_shape(history, cues.kinds)
    def choose(position: int) -> None:
        start, stop = turn_span(history.all, position)
        if start not in chosen:
            chosen[start] = [m for m in history.all[start:stop] if _recallable(m)]
            if all(m.id in present for m in chosen[start]):
                chosen[start] = []

    for position in found:
        choose(position)
        if len(chosen) == MAX_TURNS:
            break
    strict = len(chosen)
    if meaning is not None and meaning.ready:
        for position in by_meaning(store, conversation_id, history, query, meaning):
            choose(position)
            if len(chosen) >= MAX_FILL:
                break
    starts = list(chosen)
    turns = list(chosen.values())
    picked, used = fitted(turns, counter, budget, RECALL_HEADER,
                          [said_at(t) if t else "" for t in turns], strict=strict, room=room)
    if not picked:
        return Recalled()
    return Recalled([chosen[start] for start in sorted(starts[i] for i in picked)], used)


def by_meaning(store: Store, conversation_id: int, history: History, query: str,
               meaning: Meaning) -> list[int]:
    """Positions of the first recallable message of each turn the hybrid ranker puts above
    its floor, best first."""
    if not is_question(query):
        return []
    q = meaning.query(query)
    if q is None:
        return []
    layout = _layout(history)
    if not layout.turns:
        return []
    scored = turn_scores(meaning, q, layout.turns,
                         word_shares(store, conversation_id, history, query),
                         key=("turns", layout.key))
    return [layout.firsts[r.index] for r in ranked(scored, limit=MAX_FILL)]


@dataclass(frozen=True)
class _Layout:
    """The recallable messages of a history grouped by turn: their ids per turn, and where
    each turn's first is. Kept for the history's version: a question is not a walk over a
    10,000-turn session in Python."""

    turns: list[list[int]]
    firsts: list[int]
    version: tuple[int, int]  # the history's (version, length) it was read at
    key: int  # names these turns for Meaning's table: the same while they stay the same


# Each live history's layout at its last version; gone with the history.
_LAYOUTS: weakref.WeakKeyDictionary[History, _Layout] = weakref.WeakKeyDictionary()
_KEYS = count()


def _layout(history: History) -> _Layout:
    version = (history.version, len(history.all))
    kept = _LAYOUTS.get(history)
    if kept is not None and kept.version == version:
        return kept
    turns: list[list[int]] = []
    firsts: list[int] = []
    start, last = 0, -1  # the turn being read, the turn of the last group
    for position, msg in enumerate(history.all):
        if msg.role == "user":
            start = position
        if msg.role not in ("user", "assistant") or not _recallable(msg):
            continue
        if start != last:
            turns.append([])
            firsts.append(position)
            last = start
        turns[-1].append(msg.id)  # type: ignore[arg-type]  # _recallable: it has an id
    # A new question (not covered) leaves the turns as they were: the table stays.
    same = kept is not None and kept.turns == turns
    layout = _LAYOUTS[history] = _Layout(turns, firsts, version,
                                         kept.key if same and kept else next(_KEYS))
    return layout


_OPENS_A_QUESTION = frozenset(
    "what which where when who whom whose why how do does did is are was were can could".split())


def is_question(query: str) -> bool:
    """Whether `query` is a question, what the fill by meaning is for: a question mark, an
    opening question word, or a closing 吗/呢. Not "which" or "什么" anywhere: prose says
    them too ("the file which…", "不知道为什么…")."""
    text = query.strip()
    if not text or len(text) > MAX_ASKING:
        return False
    prose = prose_of(text).strip()  # `a ? b : c` in a pasted block asks nothing
    words = _words(prose[:40])
    # It ends asking: a quoted "不亦说乎？" inside a page of prose asks nothing.
    end = prose.rstrip("\"'”’)）」』 \n")
    return bool(end[-1:] in ("?", "？") or (
        words and words[0] in _OPENS_A_QUESTION and prose[:1].isascii())
        or end.rstrip("。.!！~… ")[-1:] in ("吗", "呢"))


def word_shares(store: Store, conversation_id: int, history: History,
                query: str) -> dict[int, float]:
    """Each message holding a term of `query` -> the share of the query's term weight it
    holds (terms weighed by rarity in the session, as the evidence rule weighs them)."""
    own = _own_id(history, query)
    return shares_in(store, conversation_id, query, len(history.all) - (own is not None), own)


def shares_in(store: Store, conversation_id: int, query: str, n: int,
              own: int | None = None) -> dict[int, float]:
    """As `word_shares`, for a session of `n` messages, `own` (the query itself) left out."""
    wanted, _ = content_terms(query)
    if not wanted or n <= 0:
        return {}
    found = store.postings(conversation_id, wanted, cap=max(3, n // COMMON_SHARE))
    return shares(*weighed(found, wanted, {}, n, own))


def shares(held: dict[str, set[int]], weight: dict[str, float]) -> dict[int, float]:
    """Each message's share of the whole weight (`scores` over its sum)."""
    total = sum(weight.values())
    if total <= 0:
        return {}
    return {mid: score / total for mid, score in scores(held, weight).items()}


MAX_OTHER_WORDS = 3  # beside the cue: more is a question about something else


def _asks_back(query: str, wanted: list[str], cues: Cues, back: bool) -> bool:
    """Whether `query` asks what an earlier detail of its shape was: the shape alone pointed at
    ("that port?"), or asked about with a few words of its own and a back-reference ("那个服务
    的端口是多少来着？", "what was the service's port again?"), not a request to do something
    with one ("can you open that file?")."""
    if not (back or cues.pointing):
        return False
    other = frozenset(t for t in wanted if t not in cues.terms)
    if not other:
        return True
    return back and asks_what(query) and words_in(other) <= MAX_OTHER_WORDS


def _asked(kinds: frozenset[str]) -> frozenset[str]:
    """A port asked for is a port, not any number ("how much" asks for one too in
    "端口是多少")."""
    return frozenset({"port"}) if "port" in kinds else kinds


def _in_ledger(ledger: Sequence[Detail], kinds: frozenset[str]) -> bool:
    """Whether the ledger holds something the user or the assistant said of one of `kinds`."""
    kinds = _asked(kinds)
    return any(d.salience < 2 and kinds & shapes_of(f"{d.text} — {d.context}")
               for d in ledger)


def _newest_of_shape(history: History, kinds: frozenset[str]) -> list[int]:
    """The newest recallable message holding a detail of one of `kinds` in its own words (a
    port in a pasted log is not the one meant), among the last SHAPE_SCAN: "that port?" means
    the one said last."""
    kinds = _asked(kinds)
    for position in range(len(history.all) - 1, max(-1, len(history.all) - 1 - SHAPE_SCAN), -1):
        msg = history.all[position]
        if (_recallable(msg) and msg.role in ("user", "assistant")
                and kinds & shapes_of(prose_of(msg.content))):
            return [position]
    return []


def _evidence(store: Store, conversation_id: int, history: History, query: str,
              wanted: list[str], least: float, cues: Cues) -> Iterator[int]:
    """Positions in `history.all` of the recallable messages that single a turn out and hold
    at least the share `least` of the weight of `wanted` (the terms of `query`), best first.
    A message holding a detail of a shape the query asks for holds its cue words."""
    if not wanted:
        return
    own = _own_id(history, query)
    n = len(history.all) - (own is not None)
    # Words in the other language count only for a question that points back: "what port
    # should a new service use?" is about no turn, in either language.
    aliases = aliases_of(wanted) if cues.pointing or least < COVERAGE else {}
    found = store.postings(conversation_id, lookups(wanted, aliases),
                           cap=max(3, n // COMMON_SHARE))
    held, weight = weighed(found, wanted, aliases, n, own)
    # The cues that weigh: those that are terms of their own, else the shape itself (a cue
    # such as "who" or a common "file" is no term, but still asks for a name or a path).
    cue_kind = {t: k for t, k in cues.terms.items() if t in held}
    for kind in cues.kinds - set().union(*cue_kind.values()):
        term = shape_term(kind)
        held[term], weight[term], cue_kind[term] = set(), SHAPE_WEIGHT, frozenset({kind})
    total = sum(weight.values())
    if total <= 0:
        return
    score = scores(held, weight)
    shaped = _by_shape(history, score, held, weight, cue_kind, least * total)
    specific: dict[frozenset[str], bool] = {}
    # Ties go to the newer message: a fact restated later is the current one.
    for mid in sorted((m for m in score if score[m] >= least * total),
                      key=lambda m: (-score[m], -m)):
        position = history.position(mid)
        if position is None or not _recallable(history.all[position]):
            continue  # not covered, or stored since this engine loaded
        shares = frozenset(t for t in held if mid in held[t])
        by_shape = shaped.get(mid, frozenset())
        # Cue words a shape answers are one word however many name it ("config file").
        if words_in(shares - by_shape) + bool(by_shape) < MIN_WORDS:
            continue
        if shares not in specific:
            specific[shares] = _specific(history, [held[t] for t in shares])
        if specific[shares]:
            yield position


def lookups(wanted: list[str], aliases: dict[str, tuple[str, ...]]) -> list[str]:
    """The terms to look up: as many as the terms alone allow (a long paste's aliases are not
    worth more)."""
    every = list(dict.fromkeys([*wanted, *(a for al in aliases.values() for a in al)]))
    return every[:max(MAX_TERMS, len(wanted))]


def weighed(found: Mapping[str, Collection[int] | None], wanted: list[str],
            aliases: dict[str, tuple[str, ...]], n: int, own: int | None = None,
            translated: bool = False) -> tuple[dict[str, set[int]], dict[str, float]]:
    """For each term of `wanted` not too common to say anything, the messages holding it or an
    alias of it (`found`: the postings), and its weight: its rarity among `n` messages. A term
    one of whose words is common is common, unless `translated`: a question put in the other
    language has only the glossary's words for a term, and a common one among them says
    nothing where the others still do (of 排序: sort, order, ranking; in a shop's sessions
    "order" is everywhere, "ranking" is not)."""
    held: dict[str, set[int]] = {}
    weight: dict[str, float] = {}
    for term in wanted:
        ids = [found[t] for t in (term, *aliases.get(term, ())) if t in found]
        rare = [i for i in ids if i is not None]
        if (ids and not rare) or (len(rare) < len(ids) and not translated):
            continue  # common: no weight, and not read
        held[term] = set().union(*rare) - {own}
        # One no other message has weighs as much as one said once: it is something the new
        # message is about that no turn is, so it counts against every match.
        weight[term] = math.log((n + 1) / max(1, len(held[term])))
    return held, weight


def scores(held: dict[str, set[int]], weight: dict[str, float]) -> dict[int, float]:
    """Each message's share of the weight: the sum of the weights of the terms it holds."""
    score: dict[int, float] = {}
    for term, ids in held.items():
        for mid in ids:
            score[mid] = score.get(mid, 0.0) + weight[term]
    return score


def aliases_of(wanted: list[str]) -> dict[str, tuple[str, ...]]:
    """Each term's other-language terms (recall_words); a Chinese word's own characters take
    its translation too, so "服务" in the question is one word an English turn answers whole."""
    out: dict[str, tuple[str, ...]] = {}
    for term in wanted:
        if others := other_language(term):
            out[term] = others
            if is_cjk(term):
                for ch in term:
                    if ch in wanted:
                        out[ch] = tuple(dict.fromkeys([*out.get(ch, ()), *others]))
    return out


def _by_shape(history: History, score: dict[int, float], held: dict[str, set[int]],
              weight: dict[str, float], cue_kind: dict[str, frozenset[str]],
              need: float) -> dict[int, frozenset[str]]:
    """Adds to `held` and `score` the messages that hold a cue's shape without its word, for
    each the cue terms so held; only messages the shape could lift to `need` are read."""
    shaped: dict[int, frozenset[str]] = {}
    if not cue_kind:
        return shaped
    for mid in list(score):
        missing = [t for t in cue_kind if mid not in held[t]]
        if not missing or score[mid] + sum(weight[t] for t in missing) < need:
            continue
        position = history.position(mid)
        if position is None or not _recallable(history.all[position]):
            continue
        shapes = shapes_of(history.all[position].content)
        answered = frozenset(t for t in missing if cue_kind[t] & shapes)
        for term in answered:
            held[term].add(mid)
            score[mid] += weight[term]
        if answered:
            shaped[mid] = answered
    return shaped


def _specific(history: History, holders: list[set[int]]) -> bool:
    """Whether at most MAX_SPECIFIC turns have a message holding every one of the terms."""
    holders.sort(key=len)
    both = set(holders[0]).intersection(*holders[1:])
    if len(both) > 4 * MAX_SPECIFIC:  # more than so few turns hold but for long tool rounds:
        return False  # not worth walking them to find out
    starts = set()
    for mid in both:
        position = history.position(mid)
        if position is not None:
            starts.add(turn_span(history.all, position)[0])
    return len(starts) <= MAX_SPECIFIC


def search_turns(store: Store, conversation_id: int, messages: Sequence[Message], query: str,
                 limit: int = 10, meaning: Meaning | None = None) -> list[list[Message]]:
    """Whole turns of the conversation that match `query`, best first (for /recall and the
    `search` command; unlike recall(), the ones still in the window too). Nothing the user
    took out (x, /forget) nor a failed message: /recall pins what it finds into every request,
    and the user's own search shows what recall could bring back, as `search --all` does.
    With `meaning`, ranked as recall ranks (hybrid.searched): a turn in other words is found."""
    turns = [[m for m in turn if not m.excluded and m.status != FAILED]
             for turn in split_turns([m for m in messages if m.id is not None])]
    turn_of = {m.id: i for i, turn in enumerate(turns) for m in turn}
    found = [i for hit in store.search(conversation_id, query, limit=limit * 3)
             if (i := turn_of.get(hit.message_id)) is not None]
    picked = searched(meaning, query, found, lambda mid, _: turn_of.get(mid),
                      lambda i: [m.id for m in turns[i] if m.id is not None],
                      lambda: shares_in(store, conversation_id, query, len(turn_of)), limit,
                      within=conversation_id)
    return [turns[i] for i in picked]


SEARCH_HITS_PER_TURN = 4  # index hits read per turn wanted: a turn's messages often all match


def search_covered(store: Store, conversation_id: int, history: History, query: str,
                   limit: int, meaning: Meaning | None = None) -> list[list[Message]]:
    """The turns a summary covers, of the branch shown, that match `query`, best first, each
    whole but for what the model may not be shown (failed, or taken out by the user): for the
    model's search_history (core/tools/history_search.py). With `meaning`, ranked as recall
    ranks (hybrid.searched)."""
    found: dict[int, list[Message]] = {}  # turn start -> what it shows

    def place(message_id: int, _: int) -> int | None:
        position = history.position(message_id)
        if position is None:
            return None  # another branch's, or stored since this engine read the session
        hit = history.all[position]
        # What the index finds: covered, not pinned back, neither failed nor taken out (a
        # vector outlives its message's x: the message may be put back).
        if not hit.covered or hit.pinned or hit.status == FAILED or hit.excluded:
            return None
        start, stop = turn_span(history.all, position)
        if start not in found:
            found[start] = [m for m in history.all[start:stop]
                            if m.covered and m.status != FAILED and not m.excluded]
        return start

    hits = store.search(conversation_id, query, limit=limit * SEARCH_HITS_PER_TURN,
                        covered_only=True)
    by_words = [k for hit in hits if (k := place(hit.message_id, conversation_id)) is not None]
    picked = searched(meaning, query, by_words, place,
                      lambda k: [m.id for m in found[k] if m.id is not None],
                      lambda: shares_in(store, conversation_id, query, len(history.all)), limit,
                      within=conversation_id)
    return [found[k] for k in picked]
