"""Slash commands typed in the prompt: what exists, what each does, and how a line is parsed."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.ui.i18n import Texts

# name, argument hint; descriptions are in T under "cmd_<name>".
COMMANDS: list[tuple[str, str]] = [
    ("compact", "[focus]"),
    ("new", ""),
    ("pin", ""),
    ("recall", "QUERY"),
    ("export", "[path.md|path.json]"),
    ("copy", ""),
    ("cost", ""),
    ("help", ""),
]

T = Texts(
    en={"cmd_compact": "Summarise older turns now; an optional focus says what to keep in detail",
        "cmd_new": "Start a new session (the current one stays in the store)",
        "cmd_pin": "Pin (or unpin) the last message: always sent verbatim, never summarised",
        "cmd_recall": "Find earlier turns by their words, with dates; Enter pins one so it is "
                      "always sent, even from before the summary",
        "cmd_export": "Write the whole session, summaries included, to a Markdown or JSON file",
        "cmd_copy": "Copy the last reply to the clipboard",
        "cmd_cost": "What this session's requests cost: tokens, the share read from the "
                    "provider's cache, and money where the model has a price",
        "cmd_help": "List every key and command",
        "unknown": "Unknown command /{name}. Known: {known}. To send text that starts with "
                   "a slash, begin it with //"},
    zh={"cmd_compact": "立即摘要较早的对话；可选的 focus 指明需要详细保留的内容",
        "cmd_new": "开始新会话（当前会话仍保存在会话库中）",
        "cmd_pin": "固定（或取消固定）最后一条消息：始终原文发送，从不被摘要",
        "cmd_recall": "按字词查找早期对话（附日期）；按 Enter 固定其中一轮，"
                      "即使它已在摘要中也会始终发送",
        "cmd_export": "把整个会话（含摘要）导出为 Markdown 或 JSON 文件",
        "cmd_copy": "把最后一条回复复制到剪贴板",
        "cmd_cost": "本会话请求的开销：token 数、来自服务商缓存的比例，以及已设价格的模型的费用",
        "cmd_help": "列出全部按键与命令",
        "unknown": "未知命令 /{name}。可用命令：{known}。若要发送以斜杠开头的文字，请以 // 开头"},
)


@dataclass(frozen=True)
class Command:
    name: str
    arg: str


class UnknownCommand(ValueError):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def parse(text: str) -> Command | str:
    """A Command for `/name args`, otherwise the text to send (`//x` sends `/x`).

    Raises UnknownCommand for a slash word that is not a command, so a typo is not sent to
    the model as a message."""
    stripped = text.strip()
    if stripped.startswith("//"):
        return stripped[1:]
    if not stripped.startswith("/") or stripped == "/":
        return text
    head, _, arg = stripped[1:].partition(" ")
    name = head.lower()
    if not name.isascii() or not name.isalpha():
        return text  # "/usr/bin/env is missing" is a message, not a command
    if name not in {n for n, _ in COMMANDS}:
        raise UnknownCommand(head)
    return Command(name, arg.strip())


def command_help(lang: str) -> list[tuple[str, str]]:
    return [(f"/{n} {a}".strip(), T(lang, f"cmd_{n}")) for n, a in COMMANDS]


def unknown_text(lang: str, name: str) -> str:
    known = ", ".join(f"/{n}" for n, _ in COMMANDS)
    return T(lang, "unknown", name=name, known=known)
