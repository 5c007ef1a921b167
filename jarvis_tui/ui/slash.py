"""Slash commands typed in the prompt: how a line is parsed. Which commands exist and what each
does is declared in ui/actions.py."""

from __future__ import annotations

from dataclasses import dataclass

from jarvis_tui.core.pasted import Spans, deleted, tidy
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.actions import BY_SLASH

COMMAND_TEXTS = Texts(
    en={"unknown": "Unknown command /{name}. Known: {known}. To send text that starts with "
                   "a slash, begin it with //"},
    zh={"unknown": "未知命令 /{name}。可用命令：{known}。若要发送以斜杠开头的文字，请以 // 开头"},
)


@dataclass(frozen=True)
class Command:
    action: str  # the id of the action in ui/actions.py
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
    if name not in BY_SLASH:
        raise UnknownCommand(head)
    return Command(BY_SLASH[name].id, arg.strip())


def pasted_of_sent(typed: str, sent: str, pasted: Spans) -> Spans:
    """The pasted spans of `sent`, the text parse() made of `typed` (whose spans are
    `pasted`): the same, or shifted past what `//x` loses in becoming `/x`."""
    if sent == typed or not pasted:
        return tidy(pasted, len(sent))
    start = len(typed) - len(typed.lstrip()) + 1  # the blanks before "//" and one slash
    if typed[start:start + len(sent)] != sent:
        return ((0, len(sent)),)  # not parse()'s shape after all: count it all as pasted
    return tidy(deleted(pasted, 0, start), len(sent))


def unknown_text(lang: str, name: str) -> str:
    known = ", ".join(f"/{n}" for n in BY_SLASH)
    return COMMAND_TEXTS(lang, "unknown", name=name, known=known)
