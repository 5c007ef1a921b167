"""Every setting, declared once: its type, default, check and the words for what it expects,
its environment variable and command-line flag, its line in README's config block, and how the
settings screen shows it.

config.py builds the Settings record and its loading from this; cli.py its flags; the settings
screen its fields; README's block is generated from it (python -m jarvis_tui.core.settings.doc).
Settings held in tables of their own ([prices."MODEL"]) are config.TABLE_KEYS.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from jarvis_tui.core.providers.registry import DEFAULT, PROVIDERS

LANGUAGES = ("auto", "en", "zh")


@dataclass(frozen=True)
class Words:
    """A text in the interface's two languages."""

    en: str
    zh: str = ""

    def __call__(self, language: str) -> str:
        return self.zh if language == "zh" and self.zh else self.en


# -- checks: predicates that also say what they allow, so the screen can use the range ---------

@dataclass(frozen=True)
class Range:
    lo: float
    hi: float

    def __call__(self, value: float) -> bool:
        # An int compares exactly however large it is; math.isfinite would turn one past
        # 1e308 into a float and raise OverflowError.
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return self.lo <= value <= self.hi


@dataclass(frozen=True)
class Choices:
    values: tuple[str, ...]

    def __call__(self, value: str) -> bool:
        return value in self.values

    @property
    def expected(self) -> str:
        return "one of " + ", ".join(self.values)


def anything(value: object) -> bool:
    return True


def not_blank(value: str) -> bool:
    return bool(value.strip())


def a_url(value: str) -> bool:
    return value.startswith(("http://", "https://")) and len(value) > len("https://")


@dataclass(frozen=True)
class Flag:
    """A command-line option --NAME-WITH-DASHES that overrides the file and the environment."""

    help: str
    metavar: str | None = None


Look = Literal["text", "number", "percent", "select"]


@dataclass(frozen=True)
class Shown:
    """A field of the settings screen. Fields are shown by `order`; a percent field shows the
    fraction times 100 and its range is the check's; `{range}` in a hint is that range."""

    look: Look
    order: int
    label: Words
    hint: Words
    choice_labels: dict[str, Words] | None = None  # a select's words for its choices


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type  # str, int, float or bool
    default: Any
    check: Callable[[Any], bool]
    expected: Words  # after "expected"; the Chinese is needed when the screen shows the field
    comment: str  # its comment in README's config block
    env: str = ""  # its environment variable: JARVIS_ and the name in capitals unless given
    flag: Flag | None = None
    shown: Shown | None = None
    secret: bool = False  # never in a repr

    def __post_init__(self) -> None:
        # Every setting can be given in the environment, by one rule a user can guess.
        if not self.env:
            object.__setattr__(self, "env", "JARVIS_" + self.name.upper())


SECONDS = Words("a number of seconds > 0")

SCHEMA: tuple[Setting, ...] = (
    Setting("provider", str, DEFAULT.name, Choices(tuple(PROVIDERS)),
            Words(Choices(tuple(PROVIDERS)).expected), " | ".join(PROVIDERS),
            flag=Flag("wire protocol: " + ", ".join(p.help for p in PROVIDERS.values()))),
    Setting("base_url", str, DEFAULT.base_url, a_url,
            Words("a URL starting with http:// or https://", "以 http:// 或 https:// 开头的网址"),
            "default: the provider's own", flag=Flag("API base URL"),
            shown=Shown("text", 90, Words("Base URL", "接口地址（Base URL）"),
                        Words("the API address, starting with http:// or https://",
                              "API 地址，以 http:// 或 https:// 开头"))),
    Setting("model", str, DEFAULT.model, not_blank,
            Words("a non-empty model name", "非空的模型名称"),
            "default: the provider's own", flag=Flag("model name"),
            shown=Shown("text", 80, Words("Model", "模型"),
                        Words("the model name the server knows", "服务器识别的模型名称"))),
    Setting("summary_model", str, "", anything,
            Words("a model name (empty = same as model)", "模型名称（留空 = 与模型相同）"),
            '"" = the chat model',
            flag=Flag("model used for summaries"),
            shown=Shown("text", 100, Words("Summary model", "摘要模型"),
                        Words("empty = same as model", "留空 = 与模型相同"))),
    Setting("api_key", str, "", anything, Words("a string"),
            "prefer the environment: " + " / ".join(
                p.key_env for p in PROVIDERS.values() if p.key_env),
            flag=Flag("API key (prefer " + " / ".join(
                p.key_env for p in PROVIDERS.values() if p.key_env) + ")"),
            secret=True),
    Setting("system_prompt", str,
            "You are Jarvis, a helpful assistant. Answer in the user's language.", anything,
            Words("a string"), "sent at the start of every request"),
    Setting("context_window", int, 0, Range(0, 100_000_000),
            Words("a whole number >= 0 (0 = auto)", "大于或等于 0 的整数（0 = 自动）"),
            "0 = ask the server, else a table of known models, else 8192",
            flag=Flag("model context window, 0 = ask the server or the model table", "TOKENS"),
            shown=Shown("number", 10, Words("Context window (tokens)", "上下文窗口（token）"),
                        Words("0 = detect from the server / known model",
                              "0 = 从服务器或已知模型检测"))),
    Setting("response_reserve", int, 1024, Range(1, 10_000_000),
            Words("a whole number >= 1", "大于或等于 1 的整数"),
            "tokens kept free for the reply (sent as max_tokens)",
            flag=Flag("tokens kept free for the reply", "TOKENS"),
            shown=Shown("number", 20, Words("Response reserve (tokens)", "回复预留（token）"),
                        Words("kept free for the model's answer", "为模型的回答留出的空间"))),
    Setting("system_reserve", int, 512, Range(0, 10_000_000),
            Words("a whole number >= 0", "大于或等于 0 的整数"),
            "tokens kept for the system prompt",
            flag=Flag("tokens kept for the system prompt", "TOKENS"),
            shown=Shown("number", 30, Words("System reserve (tokens)", "系统预留（token）"),
                        Words("kept for the system prompt", "为系统提示词留出的空间"))),
    Setting("compact_threshold", float, 0.70, Range(0.1, 1.0),
            Words("a number between 0.1 and 1.0 (70% is written 0.7)"),
            "compact when the budget is this full",
            flag=Flag("compact when the budget is this full (0.1-1.0)", "FRACTION"),
            shown=Shown("percent", 40, Words("Compaction threshold (%)", "压缩阈值（%）"),
                        Words("compact older turns when the budget is this full; "
                              "{range} (70 = 70%)",
                              "预算用到这个比例时压缩较早的对话；{range}（70 即 70%）"))),
    # A compaction folds older turns in until the request is at most this share of the budget,
    # so the next one is many turns away (each one re-reads the front of the request).
    Setting("compact_low_water", float, 0.40, Range(0.05, 0.95),
            Words("a number between 0.05 and 0.95 (40% is written 0.4)"),
            "...folding older turns in until it is this full (below the threshold)",
            flag=Flag("a compaction goes down to this share of the budget (0.05-0.95)",
                      "FRACTION"),
            shown=Shown("percent", 50, Words("Compact down to (%)", "压缩到（%）"),
                        Words("a compaction folds older turns in until the budget is this "
                              "full, so the next one is many turns away; {range}, below the "
                              "threshold",
                              "压缩时把较早的对话并入摘要，直到预算只用到这个比例，"
                              "下一次压缩就会在很多轮之后；{range}，须低于阈值"))),
    Setting("keep_recent_turns", int, 3, Range(0, 1000),
            Words("a whole number between 0 and 1000", "0 到 1000 之间的整数"),
            "newest turns a compaction keeps verbatim (fewer if they would not fit)",
            flag=Flag("turns always sent verbatim", "N"),
            shown=Shown("number", 60, Words("Turns kept verbatim", "原文保留的轮数"),
                        Words("the most recent turns are never summarised",
                              "最近的这些轮对话永远不会被摘要"))),
    Setting("summary_max_tokens", int, 512, Range(32, 1_000_000),
            Words("a whole number >= 32"), "the longest summary a compaction asks for"),
    Setting("details_share", float, 0.06, Range(0.0, 0.25),
            Words("a number between 0 and 0.25 (6% is written 0.06; 0 = no details ledger)",
                  "0 到 0.25 之间的数（6% 写作 0.06；0 = 不保留细节清单）"),
            "room for details a summary left out (paths, numbers, commands, what was pasted), "
            "kept word for word below it, as a share of the budget (at least 512 tokens on "
            "small windows); 0 = off",
            shown=Shown("percent", 72, Words("Details ledger (%)", "细节清单（%）"),
                        Words("room for details a summary left out, kept word for word; "
                              "{range} of the budget, at least 512 tokens (0 = off)",
                              "为摘要遗漏的细节原样保留的空间；占预算的 {range}，"
                              "至少 512 个 token（0 = 关闭）"))),
    Setting("details_max_tokens", int, 16384, Range(0, 1_000_000),
            Words("a whole number >= 0 (0 = no details ledger)",
                  "大于或等于 0 的整数（0 = 不保留细节清单）"),
            "the most tokens the details ledger may use, whatever the window; 0 = off"),
    # Off: it pays only with a summariser that obeys and keeps what it was told
    # (bench/fidelity/repair.py).
    Setting("summary_repair", bool, False, anything,
            Words("true or false", "true 或 false"),
            "after a summary, one more request asks it to state the details it left out "
            "(not with the bundled local model)"),
    Setting("recall_budget", float, 0.35, Range(0.0, 0.5),
            Words("a number between 0 and 0.5 (15% is written 0.15; 0 turns recall off)"),
            "room for earlier turns brought back into a request for a question (a statement "
            "or paste: half, at most 15% of the window); 0 = off",
            shown=Shown("percent", 70, Words("Recall budget (%)", "找回预算（%）"),
                        Words("room for earlier turns brought back when a message is about "
                              "them; {range} (0 = off)",
                              "新消息提到早期内容时，为找回的原始对话留出的空间；"
                              "{range}（0 = 关闭）"))),
    # Words alone miss a question put in other words ("what car does Evan drive?" against "my
    # new Prius"): the bundled embedding model ranks by meaning too (core/recall/hybrid.py).
    Setting("recall_by_meaning", bool, True, anything,
            Words("true or false", "true 或 false"),
            "rank earlier turns by meaning as well as by words when bringing them back "
            "(a small embedding model on this machine); false = by words only"),
    Setting("embedding_model", str, "", anything,
            Words("a model name (empty = the bundled model)", "模型名称（留空 = 内置模型）"),
            "the provider's embeddings model for recall by meaning (its /embeddings endpoint, "
            "as OpenAI serves it); \"\" = the bundled model, on this machine"),
    # A session held with one provider may be private to it (a local model's): the user can
    # keep each session's turns to its own requests.
    Setting("recall_other_sessions", bool, True, anything,
            Words("true or false", "true 或 false"),
            "when a message points back beyond this session (\"last week\", \"上次\"), bring "
            "back other sessions' turns too, and let the model's search_history search them; "
            "false = this session only, so no session's turns go to another's provider"),
    # A key said in one session would otherwise reach every session whose question points
    # back to it, and another provider with it.
    Setting("recall_redact_secrets", bool, True, anything,
            Words("true or false", "true 或 false"),
            "what comes back from other sessions (recall, search_history's all_sessions, "
            "/recall --all, search --all) has its secrets hidden by export --redact's rules and "
            "the keys jarvis-tui was given; false = as it was said"),
    # The user's memory goes at the front of every request, within this many tokens and never
    # more than a tenth of the request's budget (a small window keeps room for the talk).
    Setting("memory_budget", int, 512, Range(0, 100_000),
            Words("a whole number between 0 and 100000 (0 = memory off)",
                  "0 到 100000 之间的整数（0 = 关闭记忆）"),
            "tokens the user's memory may take at the front of every request (at most a tenth "
            "of the budget); 0 = off",
            shown=Shown("number", 71, Words("Memory budget (tokens)", "记忆预算（token）"),
                        Words("room for your memory entries at the front of every request, "
                              "at most a tenth of the budget (0 = off)",
                              "每次请求开头为你的记忆条目留出的空间，最多占预算的十分之一"
                              "（0 = 关闭）"))),
    Setting("memory_suggestions", bool, True, anything,
            Words("true or false", "true 或 false"),
            "when a compaction folds turns in, offer what you said that looks worth remembering "
            "(a preference, an instruction, a name and role, a decision) for you to accept; "
            "nothing is remembered without your yes; false = off"),
    # Its definition (about 150 tokens) and a line under the summary go with every request once
    # a summary exists.
    Setting("history_search_tool", bool, True, anything,
            Words("true or false", "true 或 false"),
            "once turns are folded into a summary, offer the model a tool that searches them "
            "(search_history; never to the bundled local model, which misuses it); false = off"),
    Setting("tool_max_steps", int, 10, Range(1, 100),
            Words("a whole number between 1 and 100", "1 到 100 之间的整数"),
            "tool calls the model may make in a row for one message; then it must answer"),
    Setting("tool_output_share", float, 0.25, Range(0.02, 1.0),
            Words("a number between 0.02 and 1 (25% is written 0.25)"),
            "the most of the budget one tool result takes in a request; a larger one is sent "
            "head and tail (the stored result stays whole)"),
    Setting("tool_keep_outputs", int, 2, Range(0, 1000),
            Words("a whole number between 0 and 1000", "0 到 1000 之间的整数"),
            "newest tool results always sent whole; older ones become a one-line stub before "
            "anything is summarised"),
    Setting("tool_timeout", float, 120.0, Range(0.001, 86_400), SECONDS,
            "seconds one tool call may run (Esc stops it sooner)"),
    Setting("mcp_servers_file", str, "", anything,
            Words("a path to a JSON file with mcpServers (\"\" = none)",
                  "含 mcpServers 的 JSON 文件路径（\"\" = 不用）"),
            'a Claude-Desktop-style JSON file of MCP servers ("mcpServers"); "" = none; '
            "a relative path is relative to the config file's folder; "
            "[mcp.servers.NAME] tables win over its servers of the same name"),
    Setting("request_timeout", float, 120.0, Range(0.001, 86_400), SECONDS,
            "seconds without a byte from the server (then asked once more)"),
    Setting("connect_timeout", float, 10.0, Range(0.001, 86_400), SECONDS,
            "seconds to open a connection"),
    Setting("first_token_timeout", float, 300.0, Range(0.001, 86_400), SECONDS,
            "seconds from sending to the first text of the reply (raise it for models that "
            "think for minutes before they answer)"),
    Setting("reply_timeout", float, 600.0, Range(0.001, 86_400), SECONDS,
            "seconds from sending to the end of the reply; what arrived is kept"),
    Setting("max_retries", int, 4, Range(0, 20), Words("a whole number between 0 and 20"),
            "for 429, 5xx, timeouts, refused connections"),
    Setting("retry_base_delay", float, 1.0, Range(0, 3600), Words("a number of seconds >= 0"),
            "seconds; doubles each attempt, with jitter, up to retry_max_delay"),
    Setting("retry_max_delay", float, 30.0, Range(0, 3600), Words("a number of seconds >= 0"),
            "seconds; the longest wait between attempts"),
    Setting("theme", str, "jarvis-dark", not_blank, Words("a non-empty theme name"),
            "jarvis-dark, jarvis-light, a theme file of yours, or a Textual theme",
            shown=Shown("select", 200, Words("Theme", "主题"),
                        Words("previewed as you choose; Esc puts the old one back",
                              "选择后立即预览；按 Esc 恢复原主题"))),
    Setting("language", str, "auto", Choices(LANGUAGES), Words(Choices(LANGUAGES).expected),
            "auto | en | zh (auto follows LANG / LC_ALL)",
            shown=Shown("select", 210, Words("Language", "界面语言"),
                        Words("auto follows the system locale", "自动 = 跟随系统语言环境"),
                        choice_labels={"auto": Words("auto (follow the system)",
                                                     "自动（跟随系统）"),
                                       "en": Words("English"), "zh": Words("中文")})),
)
SETTINGS: dict[str, Setting] = {s.name: s for s in SCHEMA}


def on_screen() -> list[Setting]:
    """The settings the settings screen shows, in its order."""
    return sorted((s for s in SCHEMA if s.shown), key=lambda s: s.shown.order if s.shown else 0)


def with_flags() -> list[Setting]:
    return [s for s in SCHEMA if s.flag]


def with_env() -> dict[str, str]:
    """Environment variable: setting name, for the variables of every provider."""
    return {s.env: s.name for s in SCHEMA if s.env}
