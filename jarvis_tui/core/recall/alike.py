"""Whether a memory entry says what another one says, in other words or in the other language
("The user prefers dark mode", "User likes the dark theme", "用户喜欢深色模式"): the memory
inbox's duplicate check, beside the exact one (store/memory.py's `same_text`).

Scored as the ranker of recall scores a message (recall/hybrid.py): the cosine of the two
texts' vectors (the bundled model) plus LEXICAL_WEIGHT x the share of their words they hold in
common (each word once; a Chinese character, and the glossary's word in the other language,
count as recall counts them). Two texts that reach SAME say the same, unless their words show
what no vector tells apart: the model puts "Always answer in Chinese" and "Always answer in
English" at 0.83, "I prefer tabs over spaces" and "I prefer spaces over tabs" at 0.99, nearer
than most paraphrases. Two entries that differ so are two facts, or the user changing their
mind, and neither may be lost as a duplicate of the other:
  - one says no (not, never, no longer, used to; 不, 别, 没, 以前, 不再) and the other does not;
  - each holds a detail the other does not: a name, a number, an identifier ("8443", "9000");
  - in one language, the same words in another order, or the same sentence but for one place
    of a word or two changed, added or taken out ("dark mode" and "light mode", "我叫小李" and
    "我的经理叫小李"): a paraphrase rewords more than one place.
So a paraphrase that changes a single word is missed ("I live in Berlin", "My home is in
Berlin"): a duplicate left costs the user a key in the inbox, an entry merged away is lost.

SAME was measured on the 77 pairs of tests/core/recall/test_memory_alike.py (37 duplicates and
40 different entries, in English, in Chinese and across the two): the different entries that
pass the word checks score at most 0.730 ("The user prefers dark mode" and "用户喜欢浅色模式"),
and 27 of the duplicates at least 0.752; SAME is halfway. On 26 pairs written after it was
chosen, 6 of 12 duplicates are caught and none of 14 different entries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from jarvis_tui.core.embed.meaning import Meaning
from jarvis_tui.core.recall.hybrid import score
from jarvis_tui.core.recall.words import other_language
from jarvis_tui.core.store.search_index import CJK, STOPWORDS

SAME = 0.74
SLOT_WORDS = 2  # a slot changed: at most this many words on each side
SLOT_CHARACTERS = 3  # or CJK characters (a Chinese name is two or three)

_WORD = re.compile(rf"[{CJK}]|[^\W_{CJK}]{{2,}}|\d")
_CJK = re.compile(rf"[{CJK}]")
_NO_EN = re.compile(r"\b(?:not|never|no|none|nothing|nobody|without|cannot|anymore|no longer|"
                    r"formerly|former|used to|stop(?:ped)?)\b|n't\b", re.IGNORECASE)
_NUMERALS = re.compile(r"[零一二两三四五六七八九十百千万]+")  # "周一" and "周三" are two days
_NO_ZH = re.compile(r"不|别|没|勿|禁止|以前|曾经|过去|原来")
# A detail: a word with a digit, or of a capital inside the sentence (a name, a product, a
# language), or a Latin word in a Chinese sentence.
_DETAIL = re.compile(r"[^\W_]*\d[^\W_]*|[^\W\d_]*[A-Z][^\W_]*")


def alike(meaning: Meaning, text: str, others: Sequence[str]) -> int | None:
    """The index of the one of `others` that says what `text` says (the best scored, when
    several do), or None: none does, or there is no model."""
    vectors = meaning.embedded([text, *others]) if others else None
    if vectors is None:
        return None
    scores = [score(float(vec @ vectors[0]), _shared(text, other))
              for vec, other in zip(vectors[1:], others, strict=True)]
    for i in sorted(range(len(others)), key=lambda i: -scores[i]):
        if scores[i] < SAME:
            return None
        if differs(text, others[i]) is None:
            return i
    return None


def new_ones(meaning: Meaning, texts: Sequence[str], have: Sequence[str]) -> list[int]:
    """The indexes of `texts` that say nothing one of `have`, or an earlier one of `texts`,
    says."""
    kept: list[int] = []
    for i, text in enumerate(texts):
        if alike(meaning, text, [*have, *(texts[k] for k in kept)]) is None:
            kept.append(i)
    return kept


def _shared(a: str, b: str) -> float:
    """The share of their words `a` and `b` hold in common, the mean of each one's."""
    wa, wb = set(_content(a)), set(_content(b))
    if not wa or not wb:
        return 0.0
    ka, kb = _known(a) | wa, _known(b) | wb
    return (len(wa & kb) / len(wa) + len(wb & ka) / len(wb)) / 2


def differs(a: str, b: str) -> str | None:
    """What in their words makes `a` and `b` two entries however near their meaning, or None
    (see the module's doc)."""
    if _negated(a) != _negated(b):
        return "one says no"
    if _unmatched(details(a), b) and _unmatched(details(b), a):
        return "another detail"
    ta, tb = _content(a), _content(b)
    if _chinese(a) == _chinese(b) and ta != tb:
        if sorted(ta) == sorted(tb):
            return "the same words in another order"
        if _one_slot(ta, tb, SLOT_CHARACTERS if _chinese(a) else SLOT_WORDS):
            return "one slot changed"
    return None


def details(text: str) -> set[str]:
    """The names, numbers and identifiers of `text`, lowercased: a word with a digit or a
    capital (not the first word of a sentence, capitalised whatever it is, unless it has one
    more: "AWS", "PostgreSQL"), every Latin word of a Chinese text, and its Chinese numbers
    (but a lone 一, which is "a" as often as "one")."""
    if _chinese(text):
        return {w.lower() for w in re.findall(r"[^\W_]{2,}|\d+", _without_cjk(text))} | {
            n for n in _NUMERALS.findall(text) if n != "一"}
    found = set()
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n", text):
        first = len(sentence) - len(sentence.lstrip(" \t\"'(“‘-*•"))
        for m in _DETAIL.finditer(sentence):
            word = m.group(0)
            if len(word) > 1 and (m.start() != first or not word[1:].islower()):
                found.add(word.lower())
    return found


def _unmatched(found: set[str], text: str) -> set[str]:
    """Those of `found` that `text` does not hold, in its words or the glossary's in the
    other language; a word and one it begins are one ("Postgres", "PostgreSQL")."""
    words = _known(text)
    return {d for d in found if d not in words and not any(
        min(len(d), len(w)) >= 4 and (d.startswith(w) or w.startswith(d)) for w in words)}


def _known(text: str) -> set[str]:
    """Every word of `text`, lowercased, its CJK character pairs, and what the glossary says
    each is in the other language."""
    words = {w.lower() for w in re.findall(r"[^\W_]+", _without_cjk(text))}
    for run in re.findall(rf"[{CJK}]+", text):
        words.update(run[i:i + 2] for i in range(len(run) - 1))
    return words | {o for w in words for o in other_language(w)}


def _content(text: str) -> list[str]:
    """The words of `text` that carry its content, in order: each CJK character (a Chinese
    word is one to three: "我住在上海" and "我住在北京" differ in one place of two), and of the
    rest the words that are no stopword."""
    words = [m.group(0).lower() for m in _WORD.finditer(text)]
    return [w for w in words if _CJK.match(w) or w not in STOPWORDS]


def _one_slot(a: list[str], b: list[str], most: int) -> bool:
    """Whether `a` and `b` are the same but for one place of at most `most` tokens each side:
    some said only in one (more said, or something else: "我叫小李", "我的经理叫小李"), or
    changed where the rest is at least as much as what changed ("dark" for "light")."""
    ops = [op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    if len(ops) != 1:
        return False
    kind, i1, i2, j1, j2 = ops[0]
    changed = max(i2 - i1, j2 - j1)
    return changed <= most and (kind != "replace" or len(a) - (i2 - i1) >= changed)


def _negated(text: str) -> bool:
    # "而不是" is "rather than": a preference, not a no.
    return bool(_NO_EN.search(text) or _NO_ZH.search(text.replace("而不是", "")))


def _chinese(text: str) -> bool:
    """Whether `text` is written in Chinese: a Latin name or two in it ("我叫 Evan") are
    names, not English."""
    return len(_CJK.findall(text)) >= 2


def _without_cjk(text: str) -> str:
    return _CJK.sub(" ", text)
