"""Passwords said in plain words or given on a command line, for redact.py's rule table: "the
prod db password is Hunter2-prod!", "passphrase correcthorse", "密码是 S3cret", `mysql -pS3cret`,
`sshpass -p S3cret`, `curl -u admin:S3cret`, `--token S3cret`.

Most prose about passwords holds none ("reset your password", "the password is stored in
Vault", "密码错误", "密码不能为空"), so what follows the word counts only when it looks like a
password: it has a digit or a symbol (Hunter2-prod!, Tr0ub4dor&3), or it is quoted, or it is
one plain word that ends the clause and is not a word prose puts there ("the passphrase is
correcthorse." but not "the password is wrong." nor "the password manager."). A password is
ASCII (what a keyboard types into a password field), so a Chinese sentence's value is the
ASCII run after 密码是.

A command line is read by the command's own rules: `mysql -p` alone asks for the password and
the next word is the database; `-pS3cret` glued is the password.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# What English puts after "password is" or "the password" that is not one: what a password is
# or has, where it is, and the nouns that make compounds ("password manager").
_PROSE_WORDS = frozenset("""
wrong incorrect correct right invalid valid required optional mandatory missing empty blank
expired expiring expires changed reset resets stored saved kept set sent hashed encrypted
salted hidden masked shown weak strong long short secure insecure safe unsafe same different
fine ok okay good bad new old temporary random unknown known forgotten lost compromised
leaked stolen rotated updated generated needed accepted rejected enabled disabled locked
unlocked easy hard simple complex unique useless default unset none null nothing something
case-sensitive case-insensitive sensitive insensitive
everything anything it this that these those what which whatever mine yours his hers ours
theirs yes no true false too not also still now here there below above attached included
again twice once yesterday today tomorrow please first later instead anymore either anyway
manager managers policy policies change changes field fields prompt prompts protected
protection hash hashes hashing requirement requirements strength length rule rules expiry
expiration recovery file files vault generator generators entry entries login logins
authentication auth complexity rotation history hint hints salt attempt attempts box form
page screen dialog input less based only store stores storage sharing reuse list lists
spraying cracking leak leaks breach breaches dump dumps flag flags option options argument
arguments parameter parameters value values variable variables prompted asked typed entered
supplied provided given removed deleted disabled verified checked confirmed matched ignored
visible readable printed logged exposed plaintext plain text characters chars letters digits
digit number numbers symbol symbols word words phrase phrases password passwords passphrase
passphrases passcode passcodes
""".split())

# A value: quoted, or one word of printable ASCII that is not punctuation ending the sentence.
_VALUE = (r"""(?:"[^"\n]{4,80}"|'[^'\n]{4,80}'|“[^”\n]{4,80}”|「[^」\n]{4,80}」|『[^』\n]{4,80}』"""
          r"""|[!-~]*[A-Za-z0-9!#$%&*+/<=>@^_~\\-])""")
# The clause ends after a value: the text or the line ends, or sentence punctuation follows.
_CLAUSE_END = re.compile(r"[.,;:!?)\]}>'\"]*(?:\s*\Z|[ \t]*\n|[，。；！？、）])"
                         r"|[.,;:!?)\]}>'\"]+(?=\s)")

# English: password, passphrase, passcode, passwd, pwd, pw (a word of its own: "1Password" is an
# app, "passwords.txt" a file), then what links it to its value: is, was, a colon, "set to",
# or nothing ("passphrase correcthorse").
_NAME_EN = r"(?<![A-Za-z0-9])(?:pass(?:word|phrase|code)s?|passwd|pwd|pw)(?![A-Za-z0-9])"
# "the password for root is", "the password to the prod db is": up to four words, none of them
# the link itself, so "the password for the account was changed to X" still finds X.
_WHOSE_EN = (r"(?:[ \t]+(?:for|of|to|on|at)"
             r"(?:[ \t]+(?!(?:is|was|are|set|changed|reset)(?![A-Za-z0-9]))[^\s:]{1,40}){1,4})?")
_LINK_EN = (rf"(?:{_WHOSE_EN}"
            r"(?:(?:[ \t]+(?:is|was))?[ \t]*(?:[:=：]|->|→|—|–)[ \t]*"
            # "was changed to" before "was": "changed" is no password, and the rest is not read
            # again once a match is declined.
            r"|[ \t]+(?:(?:is|was|got)[ \t]+)?(?:set|changed|reset)[ \t]+to[ \t]+"
            r"|(?:[ \t]+(?:is|was|are)|['’]s)(?:[ \t]+(?:now|still|just))?[ \t]+)|[ \t]+)")
PROSE_EN = re.compile(rf"({_NAME_EN})({_LINK_EN})({_VALUE})", re.IGNORECASE)

# Chinese: 密码是 / 密码为 / 密码：/ 口令是 / 密码 S3cret, the value ASCII, glued or spaced.
# 密码就是 / 密码都是 / 密码改成了 / 密码设为 / 密码设置为: what Chinese puts between the word and
# its value as often as 是.
_LINK_ZH = (r"(?:(?:就|也|都|还|還|仍|仍然|依然|一直|现在|現在|目前|其实|其實)?(?:是|为|為)"
            r"|(?:改|换|換|设|設|设置|設置|重置|修改|更改|更新)(?:成|为|為|到)了?)?")
# The ideographic space (U+3000) is a Chinese input method's space.
PROSE_ZH = re.compile(rf"((?:密码|密碼|口令)[ \t\u3000]*{_LINK_ZH}[ \t\u3000]*"
                      r"(?:[:：=][ \t\u3000]*)?)"
                      rf"({_VALUE})")

_SHAPED = re.compile(r"\d|[^\w\s'\-]")  # a digit or a symbol: "re-used" and "don't" are words
# Not a password but what stands for one: $DB_PASSWORD, %s, a mark already put, get_password().
_STANDS_FOR = re.compile(r"""["']?(?:[$%]|\[|\*{3}|[A-Za-z_]\w*\()""")


def looks_like_password(value: str, *, ends_clause: bool, bare: bool = False) -> bool:
    """Whether `value`, said after a password's name, is one: quoted, or shaped like one, or a
    plain word that prose does not put there and that ends its clause (`ends_clause`). A plain
    word right after the name (`bare`: "passphrase correcthorse") is longer than a noun of a
    compound tends to be."""
    if len(value) < 4 or _STANDS_FOR.match(value) or value.startswith(("/", "~", "-")):
        return False
    if value[0] in "\"'“「『":
        return True
    core = value.rstrip("!")
    if _SHAPED.search(core):
        return True
    if core.lower() in _PROSE_WORDS or not ends_clause:
        return False
    # A compound's noun is often hyphenated ("case-sensitive"); a password said bare is a word.
    return not bare or (len(core) >= 6 and core.isalpha())


def _ends_clause(match: re.Match[str]) -> bool:
    return bool(_CLAUSE_END.match(match.string, match.end()))


def prose(mark: str) -> Callable[[re.Match[str]], str]:
    """What a match of PROSE_EN becomes: its value hidden when it is a password."""
    def replace(match: re.Match[str]) -> str:
        name, link, value = match.groups()
        bare = not link.strip()
        if bare and name.lower() in ("pw", "pwd"):  # the shell's pwd: "run pwd first"
            return match.group(0)
        if not looks_like_password(value, ends_clause=_ends_clause(match), bare=bare):
            return match.group(0)
        return name + link + mark
    return replace


def prose_zh(mark: str) -> Callable[[re.Match[str]], str]:
    """What a match of PROSE_ZH becomes: its value hidden when it is a password."""
    def replace(match: re.Match[str]) -> str:
        said, value = match.groups()
        if not looks_like_password(value, ends_clause=_ends_clause(match)):
            return match.group(0)
        return said + mark
    return replace


# --token S3cret, --password S3cret, --api-key S3cret: a flag named like a secret, then its
# value as the next word (--token=S3cret is redact.py's assignment rule).
FLAG = re.compile(r"(?<![\w-])(--(?:[A-Za-z0-9]+-)*(?:password|passwd|pass|passphrase|token"
                  r"|api-?key|secret|access-key|secret-key)[ \t]+)"
                  rf"({_VALUE})", re.IGNORECASE)


def flag(mark: str) -> Callable[[re.Match[str]], str]:
    """What a match of FLAG becomes: its value hidden unless it is a word of prose ("pass
    --token and the value") or stands for one (--password "$PW")."""
    def replace(match: re.Match[str]) -> str:
        name, value = match.groups()
        if not looks_like_password(value, ends_clause=True) or _asks_for_it(match):
            return match.group(0)
        return name + mark
    return replace


_MYSQL_WORD = re.compile(r"(?<![\w./-])(?:mysql\w*|mariadb[\w-]*)(?![\w.-])")


def _asks_for_it(match: re.Match[str]) -> bool:
    """Whether the flag is mysql's --password, which asks for it (the next word is the
    database): a mysql command on the line before it (looked at a few words back only, so a
    long line costs no more per flag)."""
    text = match.string
    start = max(text.rfind("\n", max(0, match.start() - 200), match.start()) + 1,
                match.start() - 200)
    return bool(_MYSQL_WORD.search(text, start, match.start()))


# -- command lines ------------------------------------------------------------------------------

_MYSQL = r"mysql(?:dump|admin|import|check|show|binlog|slap)?|mariadb(?:-dump|-admin)?"
COMMAND = re.compile(rf"(?<![\w./-])({_MYSQL}|sshpass|redis-cli|curl|htpasswd)(?![\w.-])"
                     r"([^\n]*)")
# A shell word: its quoted and unquoted parts up to the next unquoted space.
_WORD = re.compile(r"""(?:'[^']*'|"[^"]*"|[^\s'"]+)+""")
_ENDS_COMMAND = ("|", "||", "&&", ";", "&")

Span = tuple[int, int]


def _words(tail: str) -> list[tuple[int, int, str]]:
    """The words of a command line up to where the command ends (a pipe, ;, &&)."""
    found = []
    for m in _WORD.finditer(tail):
        if m.group(0) in _ENDS_COMMAND:
            break
        found.append((m.start(), m.end(), m.group(0)))
    return found


def _glued(start: int, end: int, word: str, flag: str) -> Span | None:
    """-pS3cret: the value glued to a one-letter flag."""
    if word.startswith(flag) and len(word) > len(flag) and not word.startswith("--"):
        return start + len(flag), end
    return None


def _after_colon(start: int, end: int, word: str) -> Span | None:
    """user:S3cret (curl -u): the part after the first colon."""
    bare = word.strip("'\"")
    colon = bare.find(":")
    if colon <= 0 or colon + 1 == len(bare):
        return None  # "-u admin": curl asks for the password
    lead = len(word) - len(word.lstrip("'\""))
    return start + lead + colon + 1, end - (len(word) - lead - len(bare))


def _secret_spans(command: str, words: list[tuple[int, int, str]]) -> list[Span]:
    """Where in its words `command` was given a password."""
    spans: list[Span | None] = []
    if command == "htpasswd":
        options = [w for _, _, w in words[:next((i for i, (_, _, w) in enumerate(words)
                                                 if not w.startswith("-")), len(words))]]
        if any("b" in w for w in options):  # -b FILE USER PASSWORD; -nb USER PASSWORD
            at = len(options) + (1 if any("n" in w for w in options) else 2)
            spans.append(words[at][:2] if at < len(words) else None)
        return [s for s in spans if s]
    for i, (start, end, word) in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if command.startswith(("mysql", "mariadb")):
            # -pS3cret; -p alone asks for it, and the next word is the database.
            spans.append(_glued(start, end, word, "-p"))
        elif command == "sshpass":
            spans.append(nxt[:2] if word == "-p" and nxt else _glued(start, end, word, "-p"))
        elif command == "redis-cli" and word in ("-a", "--pass") and nxt:
            spans.append(nxt[:2])
        elif command == "curl" and word in ("-u", "--user", "-U", "--proxy-user") and nxt:
            spans.append(_after_colon(*nxt))
        elif command == "curl" and (glued := _glued(start, end, word, "-u")):
            spans.append(_after_colon(glued[0], end, word[2:]))
    return [s for s in spans if s]


def command(mark: str) -> Callable[[re.Match[str]], str]:
    """What a match of COMMAND becomes: the password it was given hidden."""
    def replace(match: re.Match[str]) -> str:
        name, tail = match.groups()
        for start, end in sorted(_secret_spans(name, _words(tail)), reverse=True):
            if not _STANDS_FOR.match(tail[start:end]):  # -p"$MYSQL_PWD": not on the line
                tail = tail[:start] + mark + tail[end:]
        return name + tail
    return replace
