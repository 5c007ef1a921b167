"""The shapes a question asks for ("the config file", "which port", "那个命令") and the shapes a
message holds (a path, a number, a command), for recall.

A person asks about a detail by what it is, not by what it says: "which file did we change for
the timeout?" shares one word with "fixed the timeout in src/net/retry.py", and "那个服务的端口是
多少来着？" none with "listens on 8443". The cue words name the detail's kind as the details
ledger knows it (core/details/extract.py), and a message's kinds are found by the same extraction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from jarvis_tui.core.details.extract import extract

# Weighed as a term one message in five holds (recall's COMMON_SHARE): a shape is evidence, as
# a shared word is, but many turns of a session hold a number or a path.
SHAPE_WEIGHT = math.log(5)
QUESTION_CHARS = 240  # longer is not a question about one detail
SHAPE_PREFIX = "\x00shape:"  # a term no text can hold: the shape, when no cue word is a term

_CUE_WORDS = {
    "path": "file files path paths directory directories folder folders dir config configs "
            "configuration dotfile",
    "url": "url urls link links website site webpage endpoint endpoints",
    "port": "port ports",
    "number": "number numbers count figure figures amount latency size limit budget "
              "price cost percent percentage version",
    "time": "when date dates deadline day scheduled time",
    "command": "command commands cmd script invocation ran",
    "error": "error errors exception exceptions traceback crash crashed stacktrace",
    "name": "who whom name named called person contact owner owns owned talk ask reach",
    "decision": "decide decided decision decisions chose chosen choose choosing pick picked "
                "settle settled agree agreed select selected approach option",
    "id": "id ids ticket tickets branch branches tenant tenants identifier",
}
_CUE_PAIRS = {("how", w): "number" for w in "many much long big large fast slow often old".split()}
_CUE_PAIRS.update({("what", "time"): "time", ("which", "day"): "time"})
_CUE_ZH = {
    "path": "文件 路径 目录 配置 文件夹",
    "url": "网址 链接 地址 网站 页面",
    "port": "端口",
    "number": "响应时间 耗时 多快 多慢 多少 几个 多久 多大 多长 数字 号码 编号 预算 价格 延迟 版本",
    "time": "什么时候 几点 哪天 日期 几号 截止 时间",
    "command": "命令 指令 脚本",
    "error": "报错 错误 异常 崩溃 出错 什么错 啥错",
    "name": "谁 哪位 同事 名字 叫什么 负责人 联系人",
    "decision": "决定 拍板 选了 定了 定的 选用 采用 选的 方案",
    "id": "工单 分支 租户 单号 请求号",
}
WORD_KIND = {word: kind for kind, words in _CUE_WORDS.items() for word in words.split()}
ZH_KIND = [(phrase, kind) for kind, words in _CUE_ZH.items() for phrase in words.split()]
# "What was the config file?", "which command did we run": pointing back as plainly as "again".
_POINTING = frozenset({("what", "was"), ("which", "was"), ("where", "was"), ("what", "did"),
                       ("which", "did"), ("what", "were"), ("who", "was")})
_POINTING_WORDS = frozenset({"that", "those"})
_ASKING = frozenset("what which where when who whom how remind tell show give list".split())
_ASKING_ZH = ("吗", "呢", "什么", "哪", "多少", "几", "谁", "啥", "来着", "怎么")
_POINTING_ZH = ("那个", "那条", "那段", "那次", "那句", "那台", "那家", "那只")


# A port is a number: "that port?" means the one said as a port, not any number before it.
# After host: a name with a letter in it, so a time (10:30) is no port.
_PORT = re.compile(r"(?:\bports?|端口|\blistens? on|\bbound to|监听(?:在)?)"
                   r"\s*(?:is|是|为|号|:|：|=)?\s*\d{2,5}\b|\b[\w.-]*[a-z][\w.-]*:\d{2,5}\b", re.I)


@dataclass(frozen=True)
class Cues:
    kinds: frozenset[str] = frozenset()  # the shapes the question asks for
    # Its search terms that name a shape, not its subject ("file" -> path), as the index makes
    # terms (a Chinese cue gives its characters and pairs), each with the shapes that answer it
    # (the 时间 of "响应时间" asks for a number, of "什么时间" for a time).
    terms: dict[str, frozenset[str]] = field(default_factory=dict)
    pointing: bool = False  # "that port", "what was the file": about a particular earlier one


def cues_of(query: str) -> Cues:
    """The shapes `query` asks for, the words that ask, and whether it points back. Only a
    question asks: pasted code and notes say "file" and "error" on every line."""
    low = query.lower()
    words = re.findall(r"[a-z]+", low)
    if len(query) > QUESTION_CHARS or not _asks(query, words):
        return Cues()
    kinds = {WORD_KIND[w] for w in words if w in WORD_KIND}
    kinds.update(_CUE_PAIRS[p] for p in pairwise(words) if p in _CUE_PAIRS)
    terms = {w: {WORD_KIND[w]} for w in words if w in WORD_KIND}
    for phrase, kind in ZH_KIND:
        for m in re.finditer(re.escape(phrase), query):
            kinds.add(kind)
            # Chinese runs on without spaces: the pairs across the cue's edges ("口是" in
            # "端口是多少") are the index's terms too, and name nothing but the cue.
            a, b = max(0, m.start() - 1), min(len(query), m.end() + 1)
            for term in [*phrase, *(query[i:i + 2] for i in range(a, b - 1))]:
                terms.setdefault(term, set()).add(kind)
    pointing = (any(p in _POINTING for p in pairwise(words))
                or any(w in _POINTING_WORDS for w in words)
                or any(z in query for z in _POINTING_ZH))
    return Cues(frozenset(kinds), {t: frozenset(k) for t, k in terms.items()}, pointing)


_WH = frozenset("what which where when who whom how remind".split())
_WH_ZH = ("什么", "哪", "多少", "几", "谁", "啥", "来着")


def asks_what(query: str) -> bool:
    """Whether `query` asks what something was ("what was the port", "端口是多少"), not for
    something to be done with it ("can you open that file?")."""
    return bool(_WH.intersection(re.findall(r"[a-z]+", query.lower()))) or any(
        z in query for z in _WH_ZH)


def _asks(query: str, words: list[str]) -> bool:
    return ("?" in query or "？" in query or (bool(words) and words[0] in _ASKING)
            or any(p in query for p in _ASKING_ZH))


def shape_term(kind: str) -> str:
    return SHAPE_PREFIX + kind


@lru_cache(maxsize=4096)
def shapes_of(content: str) -> frozenset[str]:
    """The kinds of detail a message holds, and "port" for a number said as one. Cached:
    recall runs as the user types, over the same few candidate messages each time."""
    kinds = {d.kind for d in extract(content)}
    if _PORT.search(content):
        kinds.add("port")
    return frozenset(kinds)
