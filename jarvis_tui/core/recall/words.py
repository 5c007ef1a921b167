"""The words of a working session in the other language, for recall: "那个服务的端口" asks about
"the service listens on 8443", "which database did we pick" about "我们决定用 PostgreSQL 存会话".

Our users write in Chinese and English, and ask in whichever comes to hand, so a question and
the turn it is about often share no word. A glossary of the nouns and verbs a developer's
session is made of (recall/glossary.py) maps each to its other-language terms as the index makes
them (an English word, a Chinese pair), and recall counts a match in either as the same word.
"""

from __future__ import annotations

import re

from jarvis_tui.core.recall.glossary import ENTRIES
from jarvis_tui.core.store.search_index import CJK, CJK_STOP

_TO_EN: dict[str, list[str]] = {}
_TO_ZH: dict[str, list[str]] = {}
_WORD_KEY: dict[str, str] = {}  # a Chinese word as written -> its key pair
# Read once, at import: a few hundred lines split, well under a millisecond (glossary.py says
# how a word is keyed).
for _line in ENTRIES.strip().splitlines():
    _written, *_en = _line.split()
    _zh, _, _key = _written.partition("/")
    _key = _WORD_KEY[_zh] = _key or _zh[-2:]
    _TO_EN.setdefault(_key, [])
    for _word in _en:
        if _word not in _TO_EN[_key]:
            _TO_EN[_key].append(_word)
        if _key not in _TO_ZH.setdefault(_word, []):
            _TO_ZH[_word].append(_key)

# The question's inflections back to the glossary's plain words: the index stems, the glossary
# does not ("retries" -> retry, "configured" -> configure/config, "machines" -> machine).
_ENDINGS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("d", ""),
            ("ing", ""), ("ing", "e"), ("ured", ""), ("ation", ""), ("ation", "e"))


def other_language(term: str) -> tuple[str, ...]:
    """The index terms that say `term` in the other language (none when the glossary has
    none)."""
    if found := _TO_EN.get(term) or _TO_ZH.get(term):
        return tuple(found)
    for ending, plain in _ENDINGS:
        if (term.endswith(ending) and len(term) > len(ending) + 2
                and (found := _TO_ZH.get(term[:-len(ending)] + plain))):
            return tuple(found)
    return ()

LONGEST = max(map(len, _WORD_KEY))
_CJK_RUN = re.compile(f"[{CJK}]+")


def chinese_words(text: str) -> tuple[list[str], float]:
    """The glossary's Chinese words in `text`, each as its key pair, longest first from the
    left (数据库 is one word, database; of 数据仓库 it finds 数据 and 仓库, never the 据仓 between
    them that the index also makes), and the share of its Chinese characters (but those that
    say nothing alone: 的, 了, 是) they cover."""
    found: list[str] = []
    covered = counted = 0
    for run in _CJK_RUN.findall(text):
        i = 0
        while i < len(run):
            for size in range(min(LONGEST, len(run) - i), 1, -1):
                if (key := _WORD_KEY.get(run[i:i + size])) is not None:
                    found.append(key)
                    covered += size
                    counted += size
                    i += size
                    break
            else:
                counted += run[i] not in CJK_STOP
                i += 1
    return list(dict.fromkeys(found)), covered / counted if counted else 0.0
