"""Where in a message a detail was said: the user's own prose, or a block pasted into it (source
code, a log, JSON, a stack trace, a diff), and what such a block was, in one line.

In a working session most of the text is pasted: a 600-line file is 600 lines of calls,
identifiers and `raise FooError` that the details ledger took for commands run and errors met,
and the ten facts the user said in one sentence each were evicted to make room. A block is told
from prose by the shape of its lines (indentation, keywords, braces, timestamps, traceback and
diff headers), fenced or not, so the extraction can read prose for facts and a block for what it
was and the errors that happened in it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

MIN_BLOCK_LINES = 3  # code-like lines that make a run a block: fewer is a line in prose
LONG_LINE = 300  # a single line this long with a block's shape (minified JSON, a log line)
SMALL_FENCE = 4  # a fenced block of at most these lines is a command or two, said as such
MAX_NAMES = 6  # top-level names a digest lists
MAX_ERRORS = 2  # errors taken from one block: the first and the last that happened

_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+#.-]*)")
_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|finally|with|raise|"
    r"async|await|yield|assert|lambda|pass|break|continue|const|let|var|function|export|"
    r"interface|type|enum|package|func|fn|pub|use|mod|impl|struct|trait|match|switch|case|"
    r"public|private|protected|static|void|int|#include|#define|#!|SELECT|INSERT|UPDATE|DELETE|"
    r"CREATE|ALTER|DROP|WITH|FROM|WHERE|JOIN|GROUP|ORDER|BEGIN|COMMIT|echo|set -|fi\b|done\b|"
    r"do\b|then\b|esac\b)\b")
_SHAPES = re.compile(
    r"^\s*(?:[{}\[\]()]|\"[\w$@.-]+\"\s*:|@\w|#|//|/\*|--|<[/!?\w]|\$ |>>> |\.\.\. )"  # syntax
    r"|^\s*(?:Traceback \(most recent call last\)|File \".*\", line \d+|at [\w$.<>]+\(|"
    r"Caused by:|Exception in thread|goroutine \d+|panic:|[\w.]*(?:Error|Exception)\b: )"  # traces
    r"|^\s*[rbu]?(?:\"\"\"|\'\'\')"  # a docstring's quotes
    r"|^(?:diff --git|index [0-9a-f]+\.\.|@@ |\+\+\+ |--- |[+-](?![+ -])|[+-]  |"
    r"commit [0-9a-f]{7,}|Author: |Date: |Merge: )"  # diffs and git logs
    r"|^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|^\s*\[?\d{1,2}:\d{2}:\d{2}"  # log timestamps
    r"|^\s*\d{1,3}(?:\.\d{1,3}){3} \S+ \S+ \["  # an access log's line
    r"|^\s*\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|TRACE)\b"  # log levels
    r"|[{;(\[]\s*$|^\w[\w.\[\]'\"]*\s*[-+*/|&]?=\s*\S")  # line ends, assignments
# A line that is a block by itself: a JSON record, an access log's or a log's line.
_RECORD = re.compile(r"^\s*[{\[]\s*\"[\w$@.-]+\"\s*:|^\s*\d{1,3}(?:\.\d{1,3}){3} \S+ \S+ \[|"
                     r"^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}")
RECORD_CHARS = 60  # a record that short is said in a sentence as easily as pasted
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$|[\u4e00-\u9fff]")
_QUOTES = re.compile(r'"""|\'\'\'')


@dataclass(frozen=True)
class Span:
    start: int  # character offsets in the text
    end: int
    block: bool  # pasted code, log, JSON, trace or diff; else prose
    fence: str = ""  # the language a fence named ("python"), "" if none or not fenced
    fenced: bool = False


def _codey(line: str, in_string: bool) -> bool:
    if in_string or line[:1] in " \t":
        return True
    return bool(_CODE_START.match(line) or _SHAPES.search(line))


def code_like(line: str) -> bool:
    """Whether one line has the shape of code, a log line, JSON or a trace (a line alone in
    prose is not a block, see spans, but may still be one pasted)."""
    return _codey(line, False)


def spans(text: str) -> list[Span]:
    """`text` cut into prose and blocks, in order, covering all of it."""
    lines = text.splitlines(keepends=True)
    kinds: list[str] = []  # per line: "fence" (inside a fence, with its markers), "code",
    # "prose", "blank"
    fences: list[tuple[int, int, str]] = []  # fenced runs: first line, last line, language
    in_string = False
    fence_at: int | None = None
    fence_lang = ""
    for i, line in enumerate(lines):
        if (m := _FENCE.match(line)) and (fence_at is None or not line.strip("`~ \t\n")):
            if fence_at is None:
                fence_at, fence_lang = i, m.group(2)
            else:
                fences.append((fence_at, i, fence_lang))
                fence_at = None
            kinds.append("fence")
            continue
        if fence_at is not None:
            kinds.append("fence")
            continue
        stripped = line.strip()
        if not stripped:
            kinds.append("blank")
            continue
        kinds.append("code" if _codey(line, in_string) else "prose")
        if len(_QUOTES.findall(line)) % 2:
            in_string = not in_string
    if fence_at is not None:  # never closed: the rest is the paste
        fences.append((fence_at, len(lines) - 1, fence_lang))
    _absorb(lines, kinds)
    return _join(text, lines, kinds, fences)


def _absorb(lines: list[str], kinds: list[str]) -> None:
    """A line that is no sentence between two code lines is the block's (a log message
    without a timestamp, a docstring's text); a sentence there is the user talking."""
    code_at = [i for i, k in enumerate(kinds) if k == "code"]
    for a, b in zip(code_at, code_at[1:], strict=False):
        between = range(a + 1, b)
        if 0 < sum(kinds[j] == "prose" for j in between) <= 2 and not any(
                kinds[j] == "prose" and _SENTENCE_END.search(lines[j]) for j in between):
            for j in between:
                if kinds[j] == "prose":
                    kinds[j] = "code"


SHELLS = ("", "sh", "bash", "shell", "console", "zsh", "powershell", "ps1", "cmd")


def _records(lines: list[str]) -> bool:
    """Whether a few fenced lines are pasted records (a JSON log line, an access log), not a
    command or two said as such."""
    return any(len(line) >= LONG_LINE or (len(line) >= RECORD_CHARS and _RECORD.match(line))
               for line in lines)


def _join(text: str, lines: list[str], kinds: list[str],
          fences: list[tuple[int, int, str]]) -> list[Span]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    fence_of = {first: (last, lang) for first, last, lang in fences}
    out: list[Span] = []
    prose_from = 0
    i = 0
    while i < len(lines):
        if i in fence_of:
            last, lang = fence_of[i]
            body = last - i - 1 if kinds[last] == "fence" and last > i else last - i
            if body > SMALL_FENCE or lang.lower() not in SHELLS or _records(lines[i + 1:last]):
                out.append(Span(offsets[prose_from], offsets[i], False))
                out.append(Span(offsets[i], offsets[last + 1], True, lang, True))
                prose_from = last + 1
            i = last + 1
            continue
        if kinds[i] != "code":
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and kinds[j + 1] in ("code", "blank"):
            j += 1
        while kinds[j] == "blank":
            j -= 1
        codey = sum(k == "code" for k in kinds[i:j + 1])
        record = any(len(line) >= RECORD_CHARS and _RECORD.match(line) for line in lines[i:j + 1])
        if codey >= MIN_BLOCK_LINES or record or offsets[j + 1] - offsets[i] >= LONG_LINE:
            out.append(Span(offsets[prose_from], offsets[i], False))
            out.append(Span(offsets[i], offsets[j + 1], True))
            prose_from = j + 1
        i = j + 1
    out.append(Span(offsets[prose_from], len(text), False))
    return [s for s in out if s.end > s.start]


# ---- what a block was ---------------------------------------------------------------------

_LANGUAGES = (  # (name, evidence); the most evidence wins
    ("traceback", re.compile(r"^Traceback \(most recent|^\s*File \".*\", line \d+|"
                             r"^\s+at [\w$.<>]+\(.*\)$|^Caused by:|^Exception in thread", re.M)),
    ("diff", re.compile(r"^(?:diff --git|@@ .* @@|\+\+\+ |--- a/)", re.M)),
    ("git log", re.compile(r"^(?:commit [0-9a-f]{7,}|Author: |Date: )", re.M)),
    ("log", re.compile(r"^\s*\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\d{1,2}:\d{2}:\d{2})|"
                       r"^\s*\d{1,3}(?:\.\d{1,3}){3} \S+ \S+ \[|"
                       r"\b(?:INFO|WARN|ERROR|DEBUG)\b", re.M)),
    ("json", re.compile(r"^\s*[{\[]\s*$|^\s*\"[\w$@.-]+\"\s*:|^\s*[{\[]\"", re.M)),
    ("python", re.compile(r"^\s*(?:def |class \w+[(:]|import |from \S+ import |@\w|"
                          r"elif |except\b|self\.)", re.M)),
    ("typescript", re.compile(r"^\s*(?:interface |export |const \w+(?::\s*\w+)? = |"
                              r"function |import .* from ['\"])|=> ", re.M)),
    ("go", re.compile(r"^(?:package \w+|func |\s*\w+ := |\s*if err != nil)", re.M)),
    ("rust", re.compile(r"^\s*(?:fn |pub |impl |use \w+::|let mut |struct \w+ \{|#\[)", re.M)),
    ("sql", re.compile(r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|WITH)\b", re.M | re.I)),
    ("java", re.compile(r"^\s*(?:public |private |protected )(?:static )?[\w<>\[\]]+ \w+\(", re.M)),
    ("shell", re.compile(r"^(?:#!/bin/\w+|\$ |\s*(?:echo|export|fi|done|then)\b)", re.M)),
)
_TOP_NAMES = re.compile(
    r"^(?:async def|def|class|func(?: \([^)]*\))?|fn|pub fn|pub struct|struct|impl|trait|"
    r"interface|type|enum|function|export (?:default )?(?:async )?(?:function|class|const|"
    r"interface|type)|(?:public |private )?(?:static )?class|CREATE TABLE(?: IF NOT EXISTS)?)"
    r"\s+([A-Za-z_][\w.]*)", re.M | re.I)
_ERROR_HAPPENED = re.compile(
    r"^[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:?.*$"  # a traceback's last line
    r"|^\s*\[?[^\n]{0,40}\b(?:ERROR|FATAL|CRITICAL|PANIC)\b.*$"  # a log's error lines
    r"|^(?:error|fatal|panic|Error|FAILED|npm ERR!)[:\[ !].*$", re.M)  # a failed command's
_NOT_HAPPENED = re.compile(r"^\s*(?:raise|except|catch|throw|class|def|#|//|\*|/\*|--|\"|')")


def language(block: str, fence: str = "") -> str:
    if fence:
        return fence.lower()
    scores = Counter({name: len(pattern.findall(block)) for name, pattern in _LANGUAGES})
    name, hits = scores.most_common(1)[0]
    return name if hits else "text"


def top_names(block: str) -> list[str]:
    """The block's top-level definitions, public ones first: what a reader would call it by."""
    names: list[str] = []
    for m in _TOP_NAMES.finditer(block):
        if m.group(1) not in names:
            names.append(m.group(1))
    return sorted(names, key=lambda n: n.startswith("_"))


def errors_in(block: str, kind: str) -> list[str]:
    """The errors that happened, as a log, a trace or a command's output says: not the ones a
    program's source names (`raise`, `except`, a docstring, a comment)."""
    if kind not in ("traceback", "log", "text", "git log", "json", "shell", "console"):
        return []
    found = [m.group().strip()[:200] for m in _ERROR_HAPPENED.finditer(block)
             if not _NOT_HAPPENED.match(m.group())]
    found = list(dict.fromkeys(found))
    return found if len(found) <= MAX_ERRORS else [found[0], found[-1]]


def digest(block: str, kind: str, name: str = "") -> str:
    """One line saying what `block` was: its name (a file, a tool call), its kind, its size and
    its top-level names."""
    lines = block.count("\n") + (not block.endswith("\n"))
    head = f"{name}: " if name else ""
    text = f"{head}{kind}, {lines} line{'s' * (lines != 1)}"
    if names := top_names(block)[:MAX_NAMES]:
        text += " (" + ", ".join(names) + ")"
    return text
