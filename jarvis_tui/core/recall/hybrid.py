"""The one ranker of recall (issue 40): turns scored by meaning and by words together.

- Meaning: the cosine of the question's vector with each message's (core/embed/meaning.py),
  and with the turn's as a whole (its messages' vectors summed): a reply "Yes, twice a week"
  means something only beside the question it answers. It finds "my new Prius" for "What
  kind of car does Evan drive?", which share no word.
- Words: the share of the question's term weight a message holds, each term weighed by its
  rarity (recall/turns.py's `weighed`): a name said once weighs a lot, "build" said everywhere
  nothing. It finds the exact name, figure or identifier a vector blurs.
- Neighbours: a turn next to a turn about the question is more likely about it too (a story
  told over several turns); a share of its neighbours' scores is added.

A message scores cosine + LEXICAL_WEIGHT x word share; a turn, the mean of its best message's
score and its whole's, plus NEIGHBOUR x the mean of its neighbours' (a turn they lift over the
floor needs OWN_FLOOR of its own: the small talk beside an answer stays out). The weights were
chosen on LoCoMo's four development conversations, the evidence turns ranked within a token
budget (bench/recall/locomo.py; the figures are in bench/README.md), not on the held-out six.

The searches the user and the model make (/recall, `search`, search_history) rank by the same
scores (`searched`): the turns the index finds by their words, and the turns holding the
messages nearest the query by meaning that reach the floor.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TypeVar

from jarvis_tui.core.embed.meaning import INDEX_AT_SEARCH, Meaning
from jarvis_tui.core.embed.numpy_later import np

LEXICAL_WEIGHT = 0.5
NEIGHBOUR = 0.5
# Below this a turn shares no more with the question than any two turns of chat do.
FLOOR = 0.35
OWN_FLOOR = 0.25  # a turn's own score, before its neighbours', that it must reach as well
NEAREST_PER_TURN = 4  # messages read by meaning per turn a search shows (a turn has several)
NEAREST_LEAST = 40

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Ranked:
    index: int  # of the turn in the sequence given
    score: float


def score(cosine: float, share: float) -> float:
    """A message's score: its cosine with the question, and its share of the question's
    words."""
    return cosine + LEXICAL_WEIGHT * share


def turn_scores(meaning: Meaning, vec: np.ndarray, turns: Sequence[Sequence[int]],
                words: Mapping[int, float], *, key: Hashable | None = None,
                without: Set[int] = frozenset()) -> np.ndarray:
    """Each turn's score before neighbours (message ids per turn) with the question's vector
    `vec`: its best message's (`score`, `words` each message's word share) and its whole's
    cosine, averaged, with the turn's word share; words alone for a turn none of whose
    messages has a vector (or all are `without`: not to be read for their meaning). As arrays
    over every message at once; `key`: Meaning.turn_cosines'."""
    found = meaning.turn_cosines(vec, turns, key=key, without=without)
    table = found.table
    out = np.zeros(len(turns))
    if not len(table.starts):
        return out
    share = np.zeros(len(table.rows))
    for mid, value in words.items():
        if (i := table.position.get(mid)) is not None:
            share[i] = value
    best = np.fmax.reduceat(found.member + LEXICAL_WEIGHT * share, table.starts)
    turn_share = LEXICAL_WEIGHT * np.maximum.reduceat(share, table.starts)
    whole = found.whole[table.filled]
    out[table.filled] = np.where(table.any, (best + whole + turn_share) / 2, turn_share)
    return out


def ranked(scores: Sequence[float] | np.ndarray, floor: float = FLOOR,
           neighbours: bool = True, limit: int | None = None) -> list[Ranked]:
    """The turns (in order of time) whose score with their neighbours' reaches `floor`, best
    first, at most `limit`; ties to the newer (a fact said again later is the current one).
    `neighbours`: whether the turns are in order of one conversation (else they have none)."""
    s = np.asarray(scores, dtype=np.float64)
    if not len(s):
        return []
    total = s
    if neighbours:
        near = np.zeros_like(s)
        near[1:] += s[:-1]
        near[:-1] += s[1:]
        count = np.full_like(s, 2.0)
        count[0] = count[-1] = 1.0
        if len(s) == 1:
            count[0] = 1.0
        total = s + NEIGHBOUR * near / count
    # A neighbour's share lifts a turn of the story, not one about something else: its own
    # score must reach OWN_FLOOR too.
    kept = np.flatnonzero((total >= floor) & (s >= min(floor, OWN_FLOOR)))
    if limit is not None and len(kept) > limit:  # the best `limit` and any tied with the last
        edge = np.partition(total[kept], len(kept) - limit)[len(kept) - limit]
        kept = kept[total[kept] >= edge]
    order = kept[np.lexsort((-kept, -total[kept]))][:limit]
    return [Ranked(int(i), float(total[i])) for i in order]


def searched(meaning: Meaning | None, query: str, by_words: Sequence[K],
             place: Callable[[int, int], K | None], ids: Callable[[K], Sequence[int]],
             words: Callable[[], Mapping[int, float]], limit: int, *,
             within: int | None = None, beside: int | None = None) -> list[K]:
    """The turns a search shows, best first, at most `limit`, each a key `ids` gives the
    message ids of. Without `meaning` (off, or no model): those the index found by their words
    (`by_words`), in its order. With it: those, whatever their score, and the turns holding
    the messages nearest the query (of session `within`, or of all but `beside`; `place`: the
    key of a message's turn, given its id and session, None for one not to show) that reach
    FLOOR, all in the order of their scores (`words()`: each message's word share). What has
    no vector yet is embedded first, up to INDEX_AT_SEARCH."""
    q = meaning.query(query) if meaning is not None and meaning.ready else None
    if meaning is None or q is None:
        return list(dict.fromkeys(by_words))[:limit]
    meaning.index(within, limit=INDEX_AT_SEARCH)
    near = meaning.nearest(query, max(NEAREST_LEAST, NEAREST_PER_TURN * limit), within=within,
                           beside=beside)
    lexical = len(dict.fromkeys(by_words))  # first in `found`, whatever else finds them
    found = list(dict.fromkeys([*by_words, *(k for mid, conv, _ in near
                                             if (k := place(mid, conv)) is not None)]))
    turns = [list(ids(k)) for k in found]
    scores = turn_scores(meaning, q, turns, words())
    kept = [i for i in range(len(found)) if i < lexical or scores[i] >= FLOOR]
    # Ties to the newer turn, as recall: a fact said again later is the current one.
    kept.sort(key=lambda i: (-scores[i], -max(turns[i], default=0)))
    return [found[i] for i in kept[:limit]]
