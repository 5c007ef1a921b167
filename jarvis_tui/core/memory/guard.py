"""Whether a text may be a memory entry: every request of every session carries memory, so an
entry is short, plain text, and never a secret (the scrubber's rules, and the secrets the app
was given, decide what one looks like).

Characters that show nothing (zero-width ones, bidi overrides, Unicode tag characters) are
removed rather than refused: a pasted line can carry them unknown to the user, and tag
characters spell words a model reads and a terminal never shows, so an entry keeps what the
user saw, and `invisible_note` says what was removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jarvis_tui.core.safety.known_secrets import Scrubber
from jarvis_tui.core.safety.redact import redact, secret_in
from jarvis_tui.core.safety.textsafe import (
    invisible_count,
    tag_spelling,
    terminal_safe,
    visible,
    without_invisible,
)

_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_CHARS = 1000  # an entry is a fact or a preference, not a document
SPELLED_CHARS = 120  # of what hidden tag characters spelled, in the line that says so


# Said in the language the app speaks: a refusal is the one line the user reads about what
# they just tried to keep.
REASONS = {
    "en": {
        "empty": "a memory entry needs some text",
        "long": "memory entries are short: this one is {chars:,} characters, the most is "
                "{most:,}; keep the fact or preference itself",
        "control": "a memory entry is plain text: this one holds terminal control characters",
        "unicode": "a memory entry is text: this one holds {n:,} character{s} that {are} not "
                   "valid Unicode (a byte that is not UTF-8, or half of a surrogate pair); "
                   "write it again as plain text",
        "key": "a memory never holds a secret: this holds a key jarvis-tui was given (the API "
                "key, or an MCP server's token)",
        "secret": "a memory never holds a secret: this looks like {what}",
    },
    "zh": {
        "empty": "记忆条目不能为空",
        "long": "记忆条目要简短：这条有 {chars:,} 个字符，最多 {most:,} 个；只保留事实或偏好本身",
        "control": "记忆条目只能是纯文本：这条含有终端控制字符",
        "unicode": "记忆条目只能是文本：这条含有 {n:,} 个无效的 Unicode 字符（不是 UTF-8 的字节，"
                   "或落单的代理项）；请用纯文本重新写",
        "key": "记忆里不能存密钥：这条含有 jarvis-tui 使用的密钥（API 密钥或 MCP 服务器的令牌）",
        "secret": "记忆里不能存密钥：这条看起来像{what}",
    },
}

# Not a refusal: what was removed before the entry was stored, said once where it was typed.
NOTES = {
    "en": {
        "invisible": "removed {n:,} invisible character{s}{spelled}; stored what you can see",
        "spelled": " (Unicode tag characters that spelled \"{text}\")",
    },
    "zh": {
        "invisible": "已删除 {n:,} 个不可见字符{spelled}；只保存了看得见的部分",
        "spelled": "（Unicode 标签字符，拼出了“{text}”）",
    },
}


# What redact.secret_in names a credential, as the Chinese refusal says it (it names them in
# English for exports and logs); a name missing here is said as it is.
WHAT_ZH = {
    "a private key": "私钥", "a Slack webhook": "Slack webhook 地址",
    "a password in a URL": "网址里的密码", "an API token": "API 令牌",
    "an Authorization header": "Authorization 请求头", "a bearer token": "Bearer 令牌",
    "Basic credentials": "Basic 认证凭据",
    "a secret assigned to a name like api_key or password": "赋给 api_key、password 等名字的密钥",
    "a password on a command line": "命令行里的密码",
    "a secret given to a flag like --password or --token": "传给 --password、--token 等参数的密钥",
    "a password in plain words": "直接写出的密码",
    "an OpenAI API key": "OpenAI API 密钥", "an Anthropic API key": "Anthropic API 密钥",
    "a Google API key": "Google API 密钥", "a Google OAuth token": "Google OAuth 令牌",
    "a GitHub token": "GitHub 令牌", "a GitLab token": "GitLab 令牌", "a Slack token": "Slack 令牌",
    "an AWS access key": "AWS 访问密钥", "a Stripe key": "Stripe 密钥",
    "a Hugging Face token": "Hugging Face 令牌", "an npm token": "npm 令牌",
    "a PyPI token": "PyPI 令牌", "a SendGrid key": "SendGrid 密钥",
    "a JSON Web Token": "JSON Web Token（JWT）", "a HashiCorp Vault token": "HashiCorp Vault 令牌",
}


class MemoryRefused(Exception):
    """A text that cannot be a memory entry; its str() is the one line that says why (in
    English), said() the same in the app's language."""

    def __init__(self, reason: str, **fields: object) -> None:
        super().__init__(REASONS["en"][reason].format(**fields))
        self.reason, self.fields = reason, fields

    def said(self, language: str) -> str:
        fields = self.fields
        if language == "zh" and isinstance(what := fields.get("what"), str):
            fields = {**fields, "what": WHAT_ZH.get(what, what)}
        return REASONS.get(language, REASONS["en"])[self.reason].format(**fields)


def _refused(text: str, known_secrets: Iterable[str]) -> MemoryRefused | None:
    # A lone surrogate (an argument's byte that is not UTF-8, "\ud800" in an imported file)
    # can be neither stored nor printed; refused by count, since the rest may be a secret.
    if broken := len(_SURROGATE.findall(text)):
        return MemoryRefused("unicode", n=broken, s="" if broken == 1 else "s",
                             are="is" if broken == 1 else "are")
    stripped = without_invisible(text).strip()
    if not stripped:
        return MemoryRefused("empty")
    if len(stripped) > MAX_CHARS:
        return MemoryRefused("long", chars=len(stripped), most=MAX_CHARS)
    if terminal_safe(stripped) != stripped:
        return MemoryRefused("control")
    scrub = Scrubber(known_secrets)
    if scrub(stripped) != stripped:
        return MemoryRefused("key")
    if (what := secret_in(stripped)) is not None:
        return MemoryRefused("secret", what=what)
    return None


def refusal(text: str, known_secrets: Iterable[str] = (), language: str = "en") -> str | None:
    """One line saying why `text` cannot be stored as a memory entry, or None when it can.
    `known_secrets`: the app's own (the API key), refused whatever their shape."""
    refused = _refused(text, known_secrets)
    return refused.said(language) if refused is not None else None


def check(text: str, known_secrets: Iterable[str] = ()) -> str:
    """`text` as an entry is stored (without the characters that show nothing, trimmed), or
    MemoryRefused saying why it cannot be."""
    if (refused := _refused(text, known_secrets)) is not None:
        raise refused
    return without_invisible(text).strip()


def invisible_note(text: str, language: str = "en",
                   known_secrets: Iterable[str] = ()) -> str | None:
    """The one line saying what `check` removes from `text` (how many characters that show
    nothing, and what tag characters among them spelled, a secret among them hidden), or None
    when it removes none."""
    count = invisible_count(text)
    if not count:
        return None
    said = NOTES.get(language, NOTES["en"])
    hidden = Scrubber(known_secrets)(redact(tag_spelling(text)))
    spelled = " ".join(visible(hidden).split())
    if len(spelled) > SPELLED_CHARS:
        spelled = spelled[:SPELLED_CHARS - 1] + "…"
    plural = "" if count == 1 or language == "zh" else "s"
    return said["invisible"].format(n=count, s=plural,
                                    spelled=said["spelled"].format(text=spelled) if spelled
                                    else "")
