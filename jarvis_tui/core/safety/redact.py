"""Credentials found by their shape in any text, for `export --redact`, for what the app shows
of a tool server (its command line, its address), and to keep them out of the user's memory.

One table of rules, each named for what it finds. They follow the shapes the maintained
secret scanners look for (gitleaks' and detect-secrets' rules: the token prefixes, PEM blocks,
JWTs, passwords in URLs, assignments to names like *_TOKEN). detect-secrets itself does not fit:
it flags whole lines of a source file rather than the span of the secret (so it cannot replace
one in a sentence), it misses Bearer and Basic headers, `hf_`, `npm_` and unquoted assignments,
and its last release is from 2024.

What looks like code that reads a secret (`api_key = os.environ[...]`, `token = get_token()`,
`password: str`) is left alone: it holds none, and an export should stay readable. Passwords said
in plain words ("the password is Hunter2", "密码是 S3cret") or given on a command line
(`mysql -pS3cret`) are passwords.py's rules, in the same table.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

from jarvis_tui.core.safety import passwords
from jarvis_tui.core.safety.known_secrets import Scrubber

REDACTED = "[redacted]"

# A token edge is anything that cannot be part of the token, so CJK text glued to a key
# ("密钥sk-...，") still lets it match; \b would count CJK as word characters.
_L = r"(?<![A-Za-z0-9_-])"
_R = r"(?![A-Za-z0-9_-])"

# Tokens whose prefix says what they are.
_PREFIXED = {
    "openai_anthropic": r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
    "google_api": r"AIza[0-9A-Za-z_-]{35}",
    "google_oauth": r"ya29\.[0-9A-Za-z_-]{20,}",
    "github": r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}",
    "gitlab": r"gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt)-[A-Za-z0-9_-]{20,}",
    "slack": r"xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}",
    "aws_access_key_id": r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    "stripe": r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,}",
    "hugging_face": r"hf_[A-Za-z0-9]{30,}",
    "npm": r"npm_[A-Za-z0-9]{36}",
    "pypi": r"pypi-[A-Za-z0-9_-]{50,}",
    "sendgrid": r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    "jwt": r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    # Vault's service, batch and recovery tokens: the dot would otherwise read as code (a.b)
    # to the rule for values assigned to --token and VAULT_TOKEN.
    "vault": r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
}
_TOKENS = re.compile(_L + "(?:" + "|".join(_PREFIXED.values()) + ")" + _R)

# A private key block, PEM or OpenSSH, on its lines or inside a JSON string (a GCP
# service-account file's "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE...") up to its END
# line; one cut short is hidden to the end of its base64.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z ]*PRIVATE KEY[A-Z ]*-----"
    r"(?:(?:(?!-----BEGIN).){0,20000}?-----END[A-Z ]*PRIVATE KEY[A-Z ]*-----"
    r"|[A-Za-z0-9+/=\s\\]*)", re.DOTALL)

# Slack's incoming webhooks: the path is the credential.
_SLACK_WEBHOOK = re.compile(r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/)"
                            r"[A-Za-z0-9/_+-]+")
# scheme://user:password@host (postgres, redis, amqp, https...)
_URL_PASSWORD = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)"
                           r"([^\s@/]+)(@)")
# The value of an Authorization header, whatever its scheme.
_AUTHORIZATION = re.compile(
    r"""((?:proxy-)?authorization["']?\s*[:=]\s*["']?"""
    r"(?:(?:basic|bearer|token|digest|negotiate)\s+)?)([^\s\"']{6,})", re.IGNORECASE)
# Bearer or Basic credentials elsewhere (curl -H, logs). Prose has the words too ("the bearer
# of this letter", "Basic setup"): a credential has a digit (or base64's + / =), or is longer
# than any word.
_BEARER = re.compile(
    r"(?<![A-Za-z])(Bearer\s+)(?:(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}"
    r"|[A-Za-z0-9._~+/=-]{20,})", re.IGNORECASE)
_BASIC = re.compile(r"(?<![A-Za-z])(Basic\s+)(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}={0,2}")

# Names whose value is a secret: api_key, GH_TOKEN, client_secret, passwd, AccountKey... Matched
# from the start of a word only: tried at every letter of a long one (a base64 blob), the name
# would take time quadratic in its length.
_KEY_NAME = (r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:api[_-]?key|access[_-]?key|secret[_-]?key"
             r"|private[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|secret|token|password"
             r"|passwd|passphrase|credentials?)")
# api_key = "...", "api_key": "...", apiKey: '...'
_QUOTED = re.compile(rf"""({_KEY_NAME}["']?\s*[:=]\s*)(["'])([^"'\n]+)\2""", re.IGNORECASE)
# TOKEN=abc in a shell line or an .env file, passwd: hunter2 in YAML, AccountKey=...; in a
# connection string.
_BARE = re.compile(rf"""({_KEY_NAME}\s*[:=]\s*)([^\s"'`,;&()\[\]{{}}<>]{{6,}})(\(|\[)?""",
                   re.IGNORECASE)
# A value that is code, not a secret: a.b.c (os.environ, self.token), a type, a variable.
_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|(?:None|True|False|null|true|false|str"
                   r"|string|bytes|Optional|required|optional)|[$%].*", re.IGNORECASE)


def _quoted(match: re.Match[str], mark: str) -> str:
    name, quote, value = match.groups()
    if _CODE.fullmatch(value):  # "${DB_PASSWORD}", "str"
        return match.group(0)
    return f"{name}{quote}{mark}{quote}"


def _bare(match: re.Match[str], mark: str) -> str:
    name, value, call = match.group(1), match.group(2), match.group(3)
    if call or _CODE.fullmatch(value):  # get_token(), environ["X"], os.environ, $TOKEN
        return match.group(0)
    return name + mark


Rule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]]


def _rules(mark: str) -> list[Rule]:
    """(what it finds, in words; its pattern; what a match becomes), in the order they run."""
    return [
        ("a private key", _PRIVATE_KEY, lambda m: mark),
        ("a Slack webhook", _SLACK_WEBHOOK, lambda m: m.group(1) + mark),
        ("a password in a URL", _URL_PASSWORD, lambda m: m.group(1) + mark + m.group(3)),
        ("an API token", _TOKENS, lambda m: mark),
        ("an Authorization header", _AUTHORIZATION, lambda m: m.group(1) + mark),
        ("a bearer token", _BEARER, lambda m: m.group(1) + mark),
        ("Basic credentials", _BASIC, lambda m: m.group(1) + mark),
        ("a secret assigned to a name like api_key or password", _QUOTED,
         lambda m: _quoted(m, mark)),
        ("a secret assigned to a name like api_key or password", _BARE,
         lambda m: _bare(m, mark)),
        # After the assignments, which have hidden `password: S3cret` already.
        ("a password on a command line", passwords.COMMAND, passwords.command(mark)),
        ("a secret given to a flag like --password or --token", passwords.FLAG,
         passwords.flag(mark)),
        ("a password in plain words", passwords.PROSE_EN, passwords.prose(mark)),
        ("a password in plain words", passwords.PROSE_ZH, passwords.prose_zh(mark)),
    ]


# Letters and digits in another width or style: "ｓｋ-proj-…" and "ｐａｓｓｗｏｒｄ" as a Chinese
# input method types them in full-width mode, 𝐬𝐤-… from a styled document. NFKC makes
# each the ASCII character (and tokenizers apply NFKC, so a model reads the key itself), so the
# rules read them folded; one character each, so a match's place is the same in the original.
# Only letters, digits, _ - and =: folding ，！： would move where a Chinese clause ends.
_FOLD_BLOCKS = ((0xFF01, 0xFF5E), (0x1D400, 0x1D7FF), (0x2460, 0x24FF), (0x2070, 0x209F),
                (0x00B2, 0x00B9))
_FOLD = {cp: folded for start, end in _FOLD_BLOCKS for cp in range(start, end + 1)
         if len(folded := unicodedata.normalize("NFKC", chr(cp))) == 1
         and re.fullmatch(r"[A-Za-z0-9_=-]", folded)}
# The blocks as ranges: a class of a thousand single characters is slow to search.
_FOLDABLE = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _FOLD_BLOCKS) + "]")


def folded(text: str) -> str:
    """`text` with full-width and styled letters and digits as ASCII, each one character."""
    return text.translate(_FOLD) if _FOLDABLE.search(text) else text


def _sub(pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str], text: str) -> str:
    """pattern.sub(replace, text), matched in folded(text); of a match, only what the rule
    changed is taken from the folded text, the rest stays as the user wrote it."""
    fold = folded(text)
    if fold == text:
        return pattern.sub(replace, text)
    out, at = [], 0
    for m in pattern.finditer(fold):
        new, old = replace(m), m.group(0)
        if new == old:
            continue
        head = len(os.path.commonprefix([old, new]))
        tail = len(os.path.commonprefix([old[head:][::-1], new[head:][::-1]]))
        out += [text[at:m.start() + head], new[head:len(new) - tail]]
        at = m.end() - tail
    return "".join([*out, text[at:]]) if out else text


# What each prefixed token is, for secret_in's one line.
_TOKEN_WORDS = {
    "openai_anthropic": "an OpenAI API key", "google_api": "a Google API key",
    "google_oauth": "a Google OAuth token", "github": "a GitHub token",
    "gitlab": "a GitLab token", "slack": "a Slack token",
    "aws_access_key_id": "an AWS access key", "stripe": "a Stripe key",
    "hugging_face": "a Hugging Face token", "npm": "an npm token", "pypi": "a PyPI token",
    "sendgrid": "a SendGrid key", "jwt": "a JSON Web Token", "vault": "a HashiCorp Vault token",
}
_EACH_TOKEN = {name: re.compile(_L + f"(?:{rule})" + _R) for name, rule in _PREFIXED.items()}


def redact(text: str, mark: str = REDACTED) -> str:
    """`text` with every credential this module knows the shape of replaced by `mark`."""
    # What the rules put in is ASCII: a text with nothing to fold never has any.
    fold = _FOLDABLE.search(text) is not None
    for _, pattern, replace in _rules(mark):
        text = _sub(pattern, replace, text) if fold else pattern.sub(replace, text)
    return text


def redactor(known_secrets: Iterable[str] = ()) -> Callable[[str], str]:
    """What text becomes where it leaves the session it was said in (another session's request,
    a list of every session's turns): the secrets jarvis-tui was given as ***, then every
    credential redact() knows as [redacted]. The same text always gives the same bytes."""
    return _redactor(tuple(known_secrets))


# Recall across sessions runs for the gauge at every keystroke and scrubs the same few turns
# each time: redacting a turn that holds a paste took 150 ms of a 220 ms keystroke. Texts are
# kept up to a size, so the cache holds at most MEMO_TEXTS * MEMO_CHARS characters.
MEMO_TEXTS = 64
MEMO_CHARS = 100_000


@lru_cache(maxsize=8)
def _redactor(known: tuple[str, ...]) -> Callable[[str], str]:
    scrub = Scrubber(known)

    @lru_cache(maxsize=MEMO_TEXTS)
    def remembered(text: str) -> str:
        return redact(scrub(text))

    return lambda text: remembered(text) if len(text) <= MEMO_CHARS else redact(scrub(text))


# A title is its first message cut short ("… eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.…"): a key cut
# in half matches no rule, so a cut word shaped like a key's start (letters and digits, long
# enough to matter) is hidden as well; "v3.12…" or "2026-11-…" is not one.
_KEYISH = "[A-Za-z0-9_./+=:-]"
_CUT_WORD = re.compile(rf"(?<!{_KEYISH})(?={_KEYISH}*\d)(?={_KEYISH}*[A-Za-z]){_KEYISH}{{12,}}…")


@lru_cache(maxsize=1024)  # every read of a session's record shows its title: a few dozen, short
def redact_title(title: str, mark: str = REDACTED) -> str:
    """A session's title as shown anywhere: made from a message's first characters, it holds
    no credential, whole or cut short by the title's end."""
    return _CUT_WORD.sub(mark + "…", redact(title, mark))


def secret_in(text: str) -> str | None:
    """What credential `text` holds, in a few words ("an OpenAI API key"), found by the rules
    redact() hides them by; None when it holds none they know."""
    text = folded(text)
    for what, pattern, replace in _rules(REDACTED):
        if pattern is _TOKENS:
            for name, token in _EACH_TOKEN.items():
                if m := token.search(text):
                    anthropic = name == "openai_anthropic" and m.group(0).startswith("sk-ant-")
                    return "an Anthropic API key" if anthropic else _TOKEN_WORDS[name]
            continue
        if pattern.sub(replace, text) != text:
            return what
    return None
