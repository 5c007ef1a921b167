"""Telling a detail from chat. In a long everyday conversation most sentences that start with
"make" or "go" are not shell commands ("make your dreams a reality!", "go for it"), most bare
numbers measure nothing anyone will ask for ("down 10 in the 4th"), and the date line a chat
export starts each session with ("[date: 1:47 pm on 18 May, 2023]") is a timestamp, not a fact
the user stated. Taken as details, these filled the ledger and pushed out what was said.
"""

from __future__ import annotations

import re

# Words a sentence is made of and a command line's first argument never is: a pronoun, an
# article, a preposition, an auxiliary. "make sure", "go for it", "make a difference".
FUNCTION_WORDS = frozenset("""
a an the my your his her its our their this that these those me you him us them i we they he
she it to of for with about into onto over under from by at on in up out off down away back
and but so or nor if then than as like is am are was were be been being do does did done have
has had will would can could should shall may might must not no yes too also very really just
sure some any all every each more most much many few lot there here what when where why how
who which whatever something anything everything nothing one ones own same such even still
through around across after before again later now today tomorrow yesterday together ahead
myself yourself himself herself itself ourselves themselves
""".split())
# Programs whose name is also an everyday English word: what follows must read as arguments.
ENGLISH_TOOLS = frozenset("make go curl yarn cargo brew helm apt export python python3 tar "
                          "uv".split())
# The first arguments a person runs these with ("make test", "npm run build", "go build").
SUBCOMMANDS = {
    "git": "add am apply bisect blame branch checkout cherry-pick clean clone commit config diff "
           "fetch grep init log merge mv pull push rebase reflog remote reset restore revert rm "
           "show stash status switch tag worktree submodule",
    "npm": "install i ci run test start build publish update uninstall audit init exec ls "
           "outdated link pack version",
    "pnpm": "install i add remove run test start build dev exec dlx update",
    "yarn": "install add remove run test start build dev lint upgrade why workspace dlx",
    "pip": "install uninstall freeze list show download wheel check",
    "uv": "pip run sync add remove lock venv tool init build publish python",
    "docker": "build run exec ps images pull push compose logs stop start restart rm rmi inspect "
              "network volume system login tag",
    "kubectl": "get describe apply delete logs exec rollout scale edit create port-forward top "
               "config cp patch label annotate drain cordon",
    "helm": "install upgrade rollback uninstall list repo template status lint dependency",
    "make": "all build test check clean install lint run dev deploy release docs format fmt "
            "help setup dist bench",
    "cargo": "build test run check clippy fmt add install publish update bench doc new init "
             "tree clean",
    "go": "build test run get mod vet fmt install generate work tool env version clean list",
    "brew": "install upgrade update uninstall services tap list info doctor cleanup",
    "apt": "install update upgrade remove purge search list autoremove",
    "terraform": "init plan apply destroy validate fmt import output state workspace",
    "systemctl": "start stop restart reload status enable disable daemon-reload",
}
SUBCOMMANDS_OF = {tool: frozenset(words.split()) for tool, words in SUBCOMMANDS.items()}
SHORT_ARGS = 2  # "ssh bastion", "grep TODO": a program no one says in prose, a word or two

# What a command line has and a sentence does not: a flag, a path, an operator, a variable, an
# assignment, a file or module name, host:port, "." for here, a quoted argument, a revision.
_SIGN = re.compile(
    r"(?:^|\s)--?[A-Za-z0-9]"
    r"|[/\\~@=]|\$[A-Za-z_{(]"
    r"|(?:^|\s)(?:\|\|?|&&|>>?|<|2>&1|;)(?=\s|$)"
    r"|[A-Za-z_][.:]\w|\w[.:][A-Za-z_]"
    r"|(?:^|\s)\.{1,2}(?=\s|$)"
    r"|(?:^|\s)[\"']")
# Where a command said in a sentence ends: the sentence's end ("pip install -e ." ends at no
# full stop of its own), or the Chinese around it ("执行 kubectl get pods 看一下").
_END = re.compile(r"(?<=\w)\.(?=\s|$)|[!?](?=\s|$)|[！？。，；]|\s*[\u4e00-\u9fff]")
# A quote that opens or closes an argument; the one in "that's" does neither.
_QUOTE = re.compile(r"\"|(?<![A-Za-z])'|'(?![A-Za-z])")
_WORD = re.compile(r"[A-Za-z][\w'’-]*")


def _prose_word(token: str) -> bool:
    word = token.strip(".,;:!?\"()").lower()
    return word in FUNCTION_WORDS or "'" in word or "’" in word


def command_end(text: str, start: int, end: int) -> int:
    """Where the command line in text[start:end] ends, quoted arguments read whole."""
    at = start
    while at < end:
        stop = _END.search(text, at, end)
        if stop is None:
            return end
        quotes = len(_QUOTE.findall(text, start, stop.start()))
        if quotes % 2 == 0 or not (close := _QUOTE.search(text, stop.start(), end)):
            return stop.start()
        at = close.end()
    return end


def shell_like(tool: str, args: str) -> bool:
    """Whether `tool` followed by `args` reads as a command line, not an English sentence."""
    tokens = args.split()
    if not tokens or _prose_word(tokens[0]):
        return False
    if _SIGN.search(args):
        return True
    if tokens[0] in SUBCOMMANDS_OF.get(tool, ()):
        # "go get some food", "go test it out": a subcommand then a sentence.
        return tool not in ENGLISH_TOOLS or not any(_prose_word(t) for t in tokens[1:])
    return tool not in ENGLISH_TOOLS and len(tokens) <= SHORT_ARGS


def said_in_ticks(inner: str) -> bool:
    """Whether backticks hold a phrase, not code: no Latin letter or digit at all ("加油！"), or
    a sentence of words ending as one ("`let's do it!`")."""
    if not re.search(r"[A-Za-z0-9_]", inner):
        return True
    words = inner.split()
    return (len(words) >= 2 and inner.rstrip()[-1:] in "!?！？。" and not _SIGN.search(inner)
            and all(_WORD.fullmatch(w.strip(".,;:!?")) for w in words)
            and any(_prose_word(w) for w in words))


# ---- numbers and dates that are no stated fact ---------------------------------------------

# The line a chat export opens a session with: "[date: 1:47 pm on 18 May, 2023]", "[日期：…]".
STAMP = re.compile(r"^\[(?:date|time|timestamp|日期|时间)\s*[:：][^\]\n]{1,80}\]", re.M | re.I)
# The numbers chat is made of: a score, an age, a day, a year. A bare port or amount ("Redis on
# 6390", "开在 9301") is said in a working session as a fact.
_CHAT_SIZED = re.compile(r"\d{1,2}|(?:19|20)\d\d")
# Words before a number that say what it is: "port 8443", "the limit is 40", "预算是 30".
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:port|is|are|was|were|be|of|to|at|id|no|number|version|v|code|pin|room|gate|"
    r"ext|set|limit|max|min)|[:：=#是为到至]|端口|编号|号码|设为|改成|改为)\s*$", re.I)
# A word after it that is not a sentence's glue: "40 points", "7443 端口".
_NOT_LABEL_ZH = "的了吗呢吧啊呀哈和跟在就也都还又"


def _labelled_after(rest: str) -> bool:
    if rest[:1].isascii() and rest[:1].isalpha():
        return False  # "the 15th": an ordinal, a day of a month
    rest = rest.lstrip()
    if m := re.match(r"[A-Za-z][A-Za-z-]*", rest):
        return m.group().lower() not in FUNCTION_WORDS
    return bool(re.match(r"[\u4e00-\u9fff]", rest)) and rest[0] not in _NOT_LABEL_ZH


def bare_number(text: str, context: str) -> bool:
    """A number of chat's size with no unit and nothing naming what it counts in the words
    around it."""
    if not _CHAT_SIZED.fullmatch(text):
        return False
    at = context.find(text)
    if at < 0:
        return True
    return not (_LABEL_BEFORE.search(context[:at])
                or _labelled_after(context[at + len(text):]))


def weak(kind: str, text: str, context: str) -> bool:
    """A detail that is chat rather than a stated fact: the ledger's last to keep."""
    if kind == "time":
        return bool(STAMP.fullmatch(text))
    return kind == "number" and bare_number(text, context)
