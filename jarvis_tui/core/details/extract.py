"""The details a summary tends to lose, found without a model: paths, URLs, numbers with what
they measure, dates and times, commands and identifiers, error messages, names and decisions.

Measured on a leading agent, a summary keeps most decisions but few paths, numbers and commands.
These are found here by their shape, in English and Chinese, so what a summary left out can be
kept beside it (the details ledger) whatever the summariser's quality.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from jarvis_tui.core.details.blocks import digest, errors_in, language, spans
from jarvis_tui.core.details.chatter import STAMP, command_end, said_in_ticks, shell_like, weak
from jarvis_tui.core.messages import Message, call_commands

KINDS = ("path", "url", "number", "time", "command", "error", "name", "decision", "id", "paste",
         "tool")
# Where a detail was said, most salient first: what the user wrote in their own words is what
# they will ask for; a pasted block or a tool's output is kept as one digest line and its errors.
SOURCES = ("user", "assistant", "summary", "paste", "tool")
# What a summary stated is as salient as where it was said first (the ledger looks for it in
# the conversation's prose); found in no one's prose, it came from a paste or a tool.
SALIENCE = {"user": 0, "assistant": 1, "summary": 2, "paste": 2, "tool": 2}
# Chat taken for a detail (a bare number, a chat export's date line, see chatter.py): whoever
# said it, the first to go.
WEAK = 3
CONTEXT_CHARS = 24  # around a number: what it measures is usually said next to it

_SENTENCE_STOP = re.compile(r"[.!?](?=\s)|[。！？\n]")
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
_URL = re.compile(r"\bhttps?://[^\s<>\"'`，。；）)\]]+")
_PATH = re.compile(
    r"(?<![\w/.~-])(?:[A-Za-z]:\\[^\s\"'`<>|，。；]+"  # C:\Users\x\file.txt
    r"|~/[^\s\"'`<>，。；]*"  # ~/x
    r"|\.{1,2}/[^\s\"'`<>，。；]+"  # ./x, ../x
    r"|/(?:[\w.@+-]+/)*[\w.@+-]+"  # /etc/collector.yaml
    r"|(?:[A-Za-z][\w.-]*/)+[\w.-]*\d[\w.-]*(?![\w.-])"  # release/2.14-hotfix
    r"|(?:[\w.-]+/)+[\w.-]+\.\w{1,8})"  # src/app/main.py
)
# What names one thing of many: a ticket, a request id, a tenant ("JIRA-4821",
# "trace-5d2a9c7e81", "acme-logistics-eu"); a word with a hyphen or two is no such thing.
_ID = re.compile(r"(?<![\w/.-])(?:[A-Za-z]+-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
                 r"|[a-z][a-z0-9]*(?:-[a-z0-9]+){2,})(?![\w/-])")
_PROSE_PARTS = frozenset("a an the of to in on for by and or with up out off per".split())
_TICKS = re.compile(r"`([^`\n]{2,200})`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_COMMAND = re.compile(
    r"(?<![\w-])(git|npm|pnpm|yarn|pip|uv|python3?|docker|kubectl|make|cargo|go|curl|ssh|scp|"
    r"systemctl|journalctl|sudo|apt|brew|psql|mysql|redis-cli|helm|terraform|ls|cd|rm|cp|mv|"
    r"grep|rg|sed|awk|tar|chmod|chown|export)\s+([^\n，。；`]{1,120})")
_IDENT = re.compile(r"\b(?:[a-z]+(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z0-9]+"
                    r"(?:[A-Z][a-z0-9]+)+|[A-Z]{2,}(?:_[A-Z0-9]+)+|\w+\(\))")
_UNITS_EN = (r"ms|s|sec|seconds?|minutes?|min|hours?|h|days?|weeks?|months?|years?|"
             r"[kKMGT]i?B|bytes?|KB|MB|GB|TB|percent|tokens?|requests?|rps|qps|req/s|"
             r"users?|items?|rows?|lines?|files?|cores?|GHz|MHz|Hz|px|em|dpi|"
             r"USD|EUR|RMB|CNY|JPY|GBP|dollars?|euros?|yuan|yen|km|miles?|kg|lbs?|k|K|M|x")
_UNITS_ZH = (r"毫秒|微秒|秒|分钟|小时|天|周|个月|月|年|万|亿|千|百|元|块|美元|欧元|日元|人|个|"
             r"条|行|次|台|核|倍|字节|兆|度|公里|米|％|%")
_NUMBER = re.compile(
    r"(?:(?<=[\s(（:：,，=])|^|(?<=[\u4e00-\u9fff]))"
    r"(?:[$€¥£]\s?)?(?:\d+(?:[万千百亿]\d*)+(?=[万千百亿元块人个]|\D|$)|\d[\d,]*(?:\.\d+)?)"
    rf"(?:\s?(?:{_UNITS_EN})\b|\s?[万千百亿]?(?:{_UNITS_ZH}))?")
_PORT = re.compile(r"(?:port|端口)\s*(?:is|是|为|:|：|=)?\s*(\d{2,5})", re.I)
_DAYPART = r"(?:凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜)"
_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:[ap]\.?m\.?)?"
    rf"|\d{{1,2}}月\d{{1,2}}[日号]{_DAYPART}?(?:\d{{1,2}}[点時时](?:\d{{1,2}}分|半)?)?"
    r"|\d{4}年\d{1,2}月(?:\d{1,2}[日号])?"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?"
    r"(?:,? \d{4})?\b"
    rf"|{_DAYPART}\d{{1,2}}[点时](?:\d{{1,2}}分|半)?|\d{{1,2}}[点时](?:\d{{1,2}}分|半)"
    # "18 May, 2023": one date, not the numbers 18 and 2023.
    r"|\b\d{1,2}(?:st|nd|rd|th)? (?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|"
    r"July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b\.?"
    r"(?:,? \d{4}\b)?")
_PHONE = re.compile(r"(?<![\w-])\+?\d[\d -]{7,}\d(?![\w-])")
_CODE = re.compile(r"(?<![\w-])[A-Z]{2}\s?\d{3,4}(?![\w-])")  # a flight, a gate, a model
# The words that make a line an error message or a sentence a decision. The line or sentence
# around each is found by looking for its ends (_around), not by a pattern that scans to them:
# that one re-read a long line once per position in it (9 s on a 7 KB line of JSON).
_ERROR = re.compile(
    r"\b\w*(?:Error|Exception)\b|\berror:|\bfailed\b|\bpanic:|"
    r"\bdeadlock\b|\btimed out\b|\bconnection refused\b|\bpermission denied\b|"
    r"错误|报错|异常|失败|根因|超时了", re.I)
_DECISION = re.compile(
    r"\bwe (?:decided|agreed|chose|will use|'ll use|settled on)\b|"
    # "let's keep going", "let's keep it up": cheering on, not keeping something.
    r"\blet'?s (?:use|go with|switch to|keep(?!\s+(?:(?!using\b)\w+ing|it|at it|up|on|"
    r"each other|in touch)\b))\b|\bdecision\b|决定|定了|就用|选用|采用|改用|"
    r"商定|确定用", re.I)
LINE_ENDS = "\n"
SENTENCE_ENDS = ".!?\n。！？"
SENTENCE_CHARS = 300  # either side of the word at most: a longer line is not one message
_NAME = re.compile(
    r"(?:\b(?:named|called|Mr\.|Ms\.|Dr\.|contact|ask)\s+)([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
    # "our rep is Diego Alvarez": a first and a last name said as what someone is.
    r"|(?:\b(?:is|was)\s+)([A-Z][a-z]+ [A-Z][a-z]+)(?=[\s,.;!?]|$)"
    r"|(?:叫|名叫|联系人|负责人是?|找)([\u4e00-\u9fff]{2,4})(?=[，。、；\s]|$)"
    # A company or an institution: "杭州云栖贸易有限公司".
    # after what names one ("商户是…", "找…"), without a "的" or a pronoun in it.
    r"|(?:(?:商户|客户|供应商|合作方|厂商|甲方|乙方|对方)是?|找|联系)"
    r"(?![我你他她它这那咱])([^\W\d_的我在为由按到]{2,12}?(?:有限公司|公司|集团|银行|大学|医院|研究院))")
# Who someone is by what they do: "ping Priya Raman", "Tomás owns the importer", "找王磊",
# "李娜负责这块". A Chinese name starts with a surname; an English one is capitalised and is
# not a day, a month or a word that starts a sentence.
SURNAMES = ("欧阳|司马|诸葛|上官|东方|慕容|[王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗郑梁谢宋唐许韩冯"
            "邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范石廖贾夏韦付邹孟熊"
            "秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵钱严覃武戴莫孔汤]")
NOT_NAMES = frozenset("""The This That These Those We It I He She They You Our Your Their His Her
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June
July August September October November December Today Tomorrow Yesterday Also Then And But So
""".split())
_WHO = re.compile(
    r"\b(?i:ask|ping|contact|cc|tell|email|call|loop in|reach out to|check with|talk to|"
    r"assigned to|owned by|handed to|escalate to)\s+@?([A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+)?)"
    r"|\b([A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+)?)(?:'s)?\s+(?:owns|is on[ -]call|leads|maintains|"
    r"approved|signed off|is handling|handles|is the owner|runs the|from the \w+ team|"
    r"on the \w+ team|will review|reviews)\b"
    rf"|(?:找|问|让|请|跟|和|联系|交给|抄送|@)\s?((?:{SURNAMES})[\u4e00-\u9fff]{{1,2}}?)"
    r"(?=[，。、；\s]|$|负责|值班|确认|审|批|说|那边|看|处理|来)"
    rf"|((?:{SURNAMES})[\u4e00-\u9fff]{{1,2}}?)(?=负责|在值班|值班|审核|审批|拍板|说过|确认过)")


@dataclass(frozen=True)
class Detail:
    kind: str  # one of KINDS
    text: str  # the detail itself, as written
    context: str  # a few words around it (what a number measures)
    message_id: int | None = None
    source: str = "user"  # one of SOURCES

    @property
    def weak(self) -> bool:
        """Chat rather than a stated fact; read from the text and its words, so that a ledger
        read back ranks it as it was ranked."""
        return weak(self.kind, self.text, self.context)

    @property
    def salience(self) -> int:
        """0 for the most salient (the user's own prose); eviction takes the highest first."""
        if self.weak:
            return WEAK
        if self.source == "summary" and self.kind == "decision":
            return 1  # said by someone: a paste decides nothing
        return SALIENCE.get(self.source, 1)


def _clean(text: str) -> str:
    text = text.strip()
    if text.endswith((" .", " ..")):  # "pip install -e .": here, not a full stop
        return text
    return text.rstrip(".,;:，。；：、)）").strip()


def _context_span(text: str, start: int, end: int) -> slice:
    """CONTEXT_CHARS either side, in whole words where the text has spaces: "…aml and listens
    on port 8443" reads worse than "and listens on port 8443"."""
    # A Chinese character says about as much as an English word: half as many of them.
    near = text[max(0, start - CONTEXT_CHARS):end + CONTEXT_CHARS]
    cjk = len(_CJK_CHAR.findall(near)) * 3 > len(near)
    chars = CONTEXT_CHARS // 2 if cjk else CONTEXT_CHARS
    low, high = max(0, start - chars), min(len(text), end + chars)
    # Within its sentence: the next one is about something else, and costs tokens.
    low = max([low, *(m.end() for m in _SENTENCE_STOP.finditer(text, low, start))])
    if after := _SENTENCE_STOP.search(text, end, high):
        high = after.start()
    if cjk:  # no spaces between its words to cut at
        return slice(low, high)
    if low > 0 and not text[low - 1].isspace() and (cut := text.find(" ", low, start)) >= 0:
        low = cut + 1
    if high < len(text) and not text[high].isspace() and (cut := text.rfind(" ", end, high)) >= 0:
        high = cut
    return slice(low, high)


def _around(text: str, start: int, end: int, ends: str) -> tuple[int, int]:
    """The span from the last of `ends` before `start` to the first after `end`, each at most
    SENTENCE_CHARS away."""
    low, high = max(0, start - SENTENCE_CHARS), min(len(text), end + SENTENCE_CHARS)
    before = max(text.rfind(c, low, start) for c in ends)
    after = [i for c in ends if (i := text.find(c, end, high)) >= 0]
    return (before + 1 if before >= 0 else low), (min(after) if after else high)


ERROR_CHARS = 160  # either side of the word: an error message, not the paragraph it is in


def _error_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The error message around its word: to the ends of its line, or of its sentence where a
    full stop is followed by a space ("…before headers. The runbook is at…"); a dot inside a
    name ("db.pool: timeout") is no end."""
    low, high = _around(text, start, end, LINE_ENDS)
    stops = [m.end() for m in _SENTENCE_STOP.finditer(text, low, start)]
    low = max([low, *stops, start - ERROR_CHARS])
    after = _SENTENCE_STOP.search(text, end, high)
    return low, min(after.start() if after else high, end + ERROR_CHARS)


def _commands(text: str) -> Iterable[tuple[int, int]]:
    """The command lines said in `text`. A sentence that starts with a program's name ("make
    it happen, then git push") is looked into again after that name, not skipped whole."""
    at = 0
    while m := _COMMAND.search(text, at):
        end = command_end(text, m.start(2), m.end())
        if shell_like(m.group(1), text[m.start(2):end]):
            yield m.start(), end
            at = end
        else:
            at = m.start(2)


def extract(text: str, message_id: int | None = None, source: str = "user") -> list[Detail]:
    """The salient details of one text, in the order they appear. Layers that may nest in one
    another (a path inside a command line, a number inside an error message) but not overlap
    within one: what is written as code, the short details, error lines, and decisions."""
    found: list[tuple[int, Detail]] = []
    # An error line and a decision are layers of their own: "the job failed: X, so we
    # decided to use Y" holds both.
    taken: dict[str, list[tuple[int, int]]] = {"code": [], "short": [], "error": [],
                                               "decision": []}

    def add(layer: str, kind: str, start: int, end: int) -> None:
        value = _clean(text[start:end])
        if len(value) < 2 or any(a < end and start < b for a, b in taken[layer]):
            return
        if kind in ("number", "time", "name", "command") and layer == "short" and any(
                a <= start and end <= b for a, b in taken["code"]):
            return  # a part of a command line: the command is the detail
        taken[layer].append((start, end))
        context = " ".join(text[_context_span(text, start, end)].split())
        found.append((start, Detail(kind, value, context, message_id, source)))

    for m in _FENCE.finditer(text):
        at = m.start(1)
        for line in m.group(1).splitlines(keepends=True):
            if line.strip():
                add("code", "command", at, at + len(line.rstrip()))
            at += len(line)
    for m in _TICKS.finditer(text):
        inner = m.group(1)
        if said_in_ticks(inner) or ((c := _COMMAND.fullmatch(inner))
                                    and not shell_like(c.group(1), c.group(2))):
            continue
        kind = ("url" if _URL.fullmatch(inner) else
                "path" if _PATH.fullmatch(inner) and ("/" in inner or "\\" in inner) else
                "command")
        add("short" if kind != "command" else "code", kind, m.start(1), m.end(1))
    for start, end in _commands(text):
        add("code", "command", start, end)
    for m in STAMP.finditer(text):  # whole, before its time and numbers are taken apart
        add("short", "time", m.start(), m.end())
    for m in _URL.finditer(text):
        add("short", "url", m.start(), m.end())
    for m in _PATH.finditer(text):
        if "/" in m.group() or "\\" in m.group():
            add("short", "path", m.start(), m.end())
    for m in _TIME.finditer(text):
        add("short", "time", m.start(), m.end())
    for m in _PHONE.finditer(text):
        add("short", "number", m.start(), m.end())
    for m in _CODE.finditer(text):
        add("short", "id", m.start(), m.end())
    for m in _PORT.finditer(text):
        add("short", "number", m.start(1), m.end(1))
    for m in _NUMBER.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if len(digits) >= 2 or not m.group().strip().isdigit():
            add("short", "number", m.start(), m.end())
    for m in _NAME.finditer(text):
        group = next(i for i in (1, 2, 3, 4) if m.group(i))
        add("short", "name", m.start(group), m.end(group))
    for m in _WHO.finditer(text):
        group = next(i for i in (1, 2, 3, 4) if m.group(i))
        if m.group(group).split()[0] not in NOT_NAMES:
            add("short", "name", m.start(group), m.end(group))
    for m in _ID.finditer(text):
        if not _PROSE_PARTS.intersection(m.group().lower().split("-")):
            add("short", "id", m.start(), m.end())
    for m in _IDENT.finditer(text):
        add("short", "command", m.start(), m.end())
    for m in _ERROR.finditer(text):
        add("error", "error", *_error_around(text, m.start(), m.end()))
    for m in _DECISION.finditer(text):
        low, high = _around(text, m.start(), m.end(), SENTENCE_ENDS)
        if text[high:high + 1] not in ("?", "？"):  # "what made your decision?" decides nothing
            add("decision", "decision", low, high)
    return [detail for _, detail in sorted(found, key=lambda pair: pair[0])]


def details_in(message: Message, calls: dict[str, str] | None = None) -> list[Detail]:
    """The details of one message by where they were said: its prose read whole, each pasted
    block (code, log, JSON, trace, diff) as one digest line and the errors that happened in it,
    a tool's output as its call and size and its errors. `calls` maps a call id to the call as
    a command line (from the reply that made it)."""
    if message.role == "tool":
        call = (calls or {}).get(message.tool_call_id or "") or message.name or "tool"
        return _block_details(message.content, call, "", message.id, "tool")
    out: list[Detail] = []
    prose_before = ""
    for span in spans(message.content):
        text = message.content[span.start:span.end]
        if span.block:
            out += _block_details(text, _named_in(prose_before), span.fence, message.id,
                                  "paste")
        else:
            out += extract(text, message.id, message.role if message.role == "assistant"
                           else "user")
            prose_before = text
    return out


SMALL_BLOCK_LINES = 8
SMALL_BLOCK_CHARS = 600
SMALL_BLOCK_KINDS = ("path", "url", "number", "time", "name", "id")


def _block_details(block: str, name: str, fence: str, message_id: int | None,
                   source: str) -> list[Detail]:
    kind = language(block, fence)
    digest_kind = "tool" if source == "tool" else "paste"
    out = [Detail(digest_kind, digest(block, kind, name), "", message_id, source)]
    out += [Detail("error", line, "", message_id, source) for line in errors_in(block, kind)]
    if block.count("\n") < SMALL_BLOCK_LINES and len(block) <= SMALL_BLOCK_CHARS:
        # A few lines a tool found (a config's port) say what they are as well as prose does.
        out += [d for d in extract(block, message_id, source) if d.kind in SMALL_BLOCK_KINDS]
    if source == "tool" and block.startswith("Error: "):  # a call that failed
        out.append(Detail("error", block.splitlines()[0][:200], "", message_id, source))
    return out


_FILE_NAME = re.compile(r"[\w./~-]*[\w-]\.(?:py|pyi|ts|tsx|js|jsx|go|rs|java|kt|rb|php|c|h|cc|cpp|"
                        r"cs|swift|sql|sh|bash|yaml|yml|toml|json|ini|cfg|conf|log|txt|md|xml|"
                        r"html|css|env|lock|gradle|tf)\b")


def _named_in(prose: str) -> str:
    """The file a paste is, as the words before it name it ("here's src/app/locks.py:")."""
    tail = " ".join(prose.strip().splitlines()[-2:])
    names = _FILE_NAME.findall(tail)
    return names[-1] if names else ""


@lru_cache(maxsize=2048)
def prose_of(content: str) -> str:
    """What of `content` is prose, pasted blocks left out: where a user-stated detail lives."""
    return "\n".join(content[s.start:s.end] for s in spans(content) if not s.block)


def details_of(messages: Iterable[Message]) -> list[Detail]:
    """Every message's details, oldest first, each distinct text once (its first mention)."""
    seen: set[tuple[str, str]] = set()
    calls: dict[str, str] = {}
    out = []
    for message in messages:
        for call, line in zip(message.tool_calls or [], call_commands(message.tool_calls),
                              strict=False):
            if isinstance(call, dict) and call.get("id"):
                calls[str(call["id"])] = line
        for detail in details_in(message, calls):
            key = (detail.kind, _normal(detail.text))
            if key not in seen:
                seen.add(key)
                out.append(detail)
    return out


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def omitted(details: Iterable[Detail], summary: str) -> list[Detail]:
    """The details a summary does not state: their text is not in it (spacing and case aside;
    a number's digits may be written without separators)."""
    said = _normal(summary)
    bare = re.sub(r"[,\s]", "", said)
    out = []
    for detail in details:
        text = _normal(detail.text)
        if text in said:
            continue
        if detail.kind == "number" and re.sub(r"[,\s]", "", text) in bare:
            continue
        out.append(detail)
    return out
