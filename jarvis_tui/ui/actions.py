"""Every action of the chat screen, declared once: its keys, its slash command, its palette entry
and its help line, in English and Chinese.

The screen's BINDINGS (and so the Footer), the slash parser, `/help`, the command palette and the
F1 help screen are all made from ACTIONS, so a command cannot be listed in one and missing from
another. Each action runs the chat screen's `action_<id>` method, with the typed argument when it
has an argument hint. Entries without a binding of ours (Enter, Ctrl+J ...) are the prompt's or
Textual's own keys, listed so the help screen shows them too.

An action of `scope="message"` acts on one message: its keys are bound on the conversation, so
they work only while it has the focus (Tab) and one message is selected there, and may be plain
letters, as the prompt does not see them. It still runs the chat screen's `action_<id>`, which
takes the selected message, or the newest that fits when run as a /command or from the palette.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import REPLACED_KEYS, Keys, key_to_character

from jarvis_tui.texts.i18n import Texts

Words = tuple[str, str]  # (English, Chinese)


@dataclass(frozen=True)
class Action:
    id: str
    keys: str = ""  # default keys as Textual writes them ("f1", "shift+pageup,ctrl+up"); "" none
    key_text: Words | None = None  # what the key does: Footer and F1 help
    slash: str = ""  # the command typed as /name, "" for none
    arg: str = ""  # its argument hint; an action with one gets the typed text
    slash_text: Words | None = None  # its line in /help
    palette: Words | None = None  # its title in the command palette, None: not there
    palette_help: Words | None = None  # {key}: the key (or the /command) that does the same
    show: bool = True  # in the Footer
    priority: bool = False  # runs even when the prompt would take the key
    bound: bool = True  # False: the key is the prompt's or Textual's, we only describe it
    rebindable: bool = True
    textual_action: str = ""  # what the binding runs, when not this screen's action_<id>
    scope: str = "screen"  # "message": bound on the conversation, for its selected message


ACTIONS: tuple[Action, ...] = (
    Action("stop", "escape", ("Stop reply", "停止回复")),
    Action("help", "f1", ("Help", "帮助"), slash="help",
           slash_text=("List every key and command", "列出全部按键与命令")),
    Action("summary", "f2", ("Summary", "摘要"),
           palette=("Summary: view and edit", "摘要：查看与编辑"),
           palette_help=("Open the conversation summary in an editor ({key})",
                         "在编辑器中打开对话摘要（{key}）")),
    Action("settings", "f3", ("Settings", "设置"), palette=("Settings", "设置"),
           palette_help=("Context window, reserves, threshold, model, theme, language ({key})",
                         "上下文窗口、预留、阈值、模型、主题、语言（{key}）")),
    Action("copy_reply", "f4", ("Copy reply", "复制回复"), slash="copy",
           slash_text=("Copy the last reply to the clipboard", "把最后一条回复复制到剪贴板"),
           palette=("Copy the last reply", "复制最后一条回复"),
           palette_help=("Copy the last reply to the clipboard ({key})",
                         "把最后一条回复复制到剪贴板（{key}）")),
    Action("new_session", "ctrl+n", ("New session", "新会话"), slash="new",
           slash_text=("Start a new session (the current one stays in the store)",
                       "开始新会话（当前会话仍保存在会话库中）"),
           palette=("New session", "新会话"),
           palette_help=("Start a new session; the current one stays stored ({key})",
                         "开始新会话；当前会话仍会保存（{key}）")),
    Action("sessions", "ctrl+o", ("Sessions", "会话"), palette=("Sessions", "会话"),
           palette_help=("List the stored sessions and resume one ({key})",
                         "列出已保存的会话并继续其中之一（{key}）")),
    Action("tools", "f5", ("Tools", "工具"), slash="tools",
           slash_text=("List the tool servers (MCP), their state and their tools",
                       "列出工具服务器（MCP）、它们的状态和工具"),
           palette=("Tool servers", "工具服务器"),
           palette_help=("The tool servers, their state and the tools they offer ({key})",
                         "工具服务器、它们的状态及提供的工具（{key}）"),
           # The footer is full at 110 columns; the ready notice, F1 and the palette name F5.
           show=False),
    Action("memory", "f6", ("Memory", "记忆"), slash="memory",
           slash_text=("What every request of every session is told: the entries, which the "
                       "next request sends, and the suggestions to accept or dismiss",
                       "每个会话的每次请求都会带上的记忆：条目、下一次请求发送哪些，"
                       "以及待接受或忽略的建议"),
           palette=("Memory: what every session is told", "记忆：每个会话都会被告知的内容"),
           palette_help=("List, add, edit, pin and delete memory entries; review suggestions "
                         "({key})", "列出、添加、编辑、固定和删除记忆条目；审阅建议（{key}）"),
           # The footer is full at 110 columns; F1, the palette and the notices name F6.
           # Priority: the prompt (a TextArea) binds F6 itself, to select a line.
           show=False, priority=True),
    Action("remember", slash="remember", arg="TEXT",
           slash_text=("Remember TEXT in every request of every session (F6 lists the memory)",
                       "在每个会话的每次请求中记住 TEXT（F6 列出记忆）")),
    Action("next_request", "f7", ("Next request", "下一次请求"), slash="request",
           slash_text=("The next request as the model will receive it, part by part with its "
                       "tokens", "下一次请求中模型将收到的内容，逐项列出 token 数"),
           palette=("Next request: what the model is sent", "下一次请求：发给模型的内容"),
           palette_help=("Each part of the next request with its tokens, as the model will "
                         "receive it ({key})",
                         "下一次请求的每个部分及其 token 数，与模型收到的一致（{key}）"),
           # Not in the full footer; F1 and the palette name F7. Priority: the prompt (a
           # TextArea) binds F7 itself, to select all.
           show=False, priority=True),
    Action("toggle_sidebar", "ctrl+b", ("Hide / show the gauge and summary sidebar",
                                        "隐藏 / 显示右侧的 token 预算与摘要栏"), show=False),
    # Textual's own ctrl+q quits whatever this binding says, so moving it would not free the key.
    Action("quit", "ctrl+q", ("Quit", "退出"), rebindable=False, textual_action="app.quit"),
    # The prompt keeps focus and uses PageUp/PageDown itself; these scroll the conversation.
    Action("page_up", "shift+pageup,ctrl+up", ("Scroll the conversation a page up",
                                               "对话向上滚动一页"), show=False, priority=True),
    Action("page_down", "shift+pagedown,ctrl+down", ("Scroll the conversation a page down",
                                                     "对话向下滚动一页"),
           show=False, priority=True),
    Action("oldest", "ctrl+home", ("Jump to the first message of the session",
                                   "跳到会话的第一条消息"), show=False, priority=True),
    Action("newest", "ctrl+end", ("Jump back to the newest message", "回到最新的消息"),
           show=False, priority=True),
    Action("compact", slash="compact", arg="[focus]",
           slash_text=("Summarise older turns now and preview the summary before it replaces "
                       "anything: Ctrl+S stores it (as you edited it), Esc discards it; an "
                       "optional focus says what to keep in detail",
                       "立即摘要较早的对话，并在替换任何内容之前先预览摘要：Ctrl+S 保存"
                       "（含你的修改），Esc 放弃；可选的 focus 指明需要详细保留的内容"),
           palette=("Compact now", "立即压缩"),
           palette_help=("Summarise older turns now; the summary is previewed, to accept or "
                         "discard ({key})",
                         "立即摘要较早的对话；先预览摘要，由你接受或放弃（{key}）")),
    Action("pin", slash="pin",
           slash_text=("Pin (or unpin) the last message: always sent verbatim, never summarised",
                       "固定（或取消固定）最后一条消息：始终原文发送，从不被摘要")),
    Action("recall", slash="recall", arg="[--all] QUERY",
           slash_text=("Find earlier turns by their words or meaning, with dates; Enter pins one "
                       "so it is always sent, even from before the summary; --all: in every "
                       "session",
                       "按字词或含义查找早期对话（附日期）；按 Enter 固定其中一轮，"
                       "即使它已在摘要中也会始终发送；--all：查找所有会话")),
    Action("export", slash="export", arg="[path.md|path.json]",
           slash_text=("Write the whole session, summaries included, to a Markdown or JSON file",
                       "把整个会话（含摘要）导出为 Markdown 或 JSON 文件")),
    Action("attach", slash="attach", arg="PATH",
           slash_text=("Attach a file (PATH:FIRST-LAST for some lines) or a folder's listing "
                       "to the next message; it shows above the prompt with its tokens",
                       "把文件（路径:起始行-结束行 只附加部分行）或文件夹的清单附加到下一条消息；"
                       "它显示在输入框上方，并标出 token 数"),
           palette=("Attach a file", "附加文件"),
           palette_help=("Send a file with the next message: type /attach PATH ({key})",
                         "随下一条消息发送文件：输入 /attach 路径（{key}）")),
    Action("attach_pasted", "ctrl+t", ("Attach pasted path", "附加粘贴的路径"), show=False,
           palette=("Attach the path just pasted", "附加刚粘贴的路径"),
           palette_help=("A file's path pasted into the prompt goes as the file instead ({key})",
                         "把刚粘贴到输入框中的文件路径改为附加该文件（{key}）")),
    Action("detach", slash="detach", arg="[N]",
           slash_text=("Remove attachment N before sending (no N: all of them)",
                       "发送前移除第 N 个附件（不写 N：全部移除）")),
    Action("send_as", slash="as", arg="N whole|digest|FIRST-LAST",
           slash_text=("How attachment N goes: whole, as a digest the model reads in ranges, "
                       "or only lines FIRST-LAST",
                       "设置第 N 个附件的发送方式：全文、摘要（模型按需分段读取），"
                       "或只发送第 FIRST-LAST 行")),
    Action("cost", slash="cost",
           slash_text=("What this session's requests cost: tokens, the share read from the "
                       "provider's cache, and money where the model has a price",
                       "本会话请求的开销：token 数、来自服务商缓存的比例，"
                       "以及已设价格的模型的费用"),
           palette=("Session cost", "会话开销"),
           palette_help=("Tokens, cache share and money of this session's requests ({key})",
                         "本会话请求的 token 数、缓存比例与费用（{key}）")),
    Action("retry", "ctrl+r", ("Answer again", "重新回答"), slash="retry",
           slash_text=("Answer the last question again; the reply it had stays as a version "
                       "(< and > on it switch)",
                       "重新回答最后一个问题；原回复保留为一个版本（在其上按 < 和 > 切换）"),
           palette=("Answer the last question again", "重新回答最后一个问题"),
           palette_help=("Regenerate the last reply; the old one is kept as a version ({key})",
                         "重新生成最后一条回复；旧回复保留为一个版本（{key}）"), show=False),
    Action("retry_message", "r", ("Answer again", "重新回答"), scope="message"),
    Action("edit", "e", ("Edit", "编辑"), slash="edit", scope="message",
           slash_text=("Edit your last message and resend it; the turns after it stay on a "
                       "branch of their own",
                       "编辑并重新发送你的最后一条消息；其后的对话保留在单独的分支上")),
    # Not in the Footer, which is full: the "‹ 2/3 ›" beside a message with versions, the
    # palette and F1 name them.
    Action("older_version", "less_than_sign", ("Previous version", "上一个版本"),
           scope="message", show=False, slash="older",
           slash_text=("Show the previous version of the newest reply or message that has "
                       "several", "显示最新一条有多个版本的回复或消息的上一个版本"),
           palette=("Previous version of the reply", "回复的上一个版本"),
           palette_help=("Switch the newest reply (or edited message) with versions to the "
                         "one before ({key})", "把最新有多个版本的回复（或编辑过的消息）"
                         "切换到上一个版本（{key}）")),
    Action("newer_version", "greater_than_sign", ("Next version", "下一个版本"),
           scope="message", show=False, slash="newer",
           slash_text=("Show the next version of the newest reply or message that has several",
                       "显示最新一条有多个版本的回复或消息的下一个版本"),
           palette=("Next version of the reply", "回复的下一个版本"),
           palette_help=("Switch the newest reply (or edited message) with versions to the "
                         "one after ({key})", "把最新有多个版本的回复（或编辑过的消息）"
                         "切换到下一个版本（{key}）")),
    Action("forget", "x", ("Exclude / include", "排除 / 恢复"),
           scope="message", slash="forget", arg="[undo]",
           slash_text=("Take the last turn out of every later request (kept in the store and "
                       "exports, shown dimmed); /forget undo brings it back",
                       "把最后一轮对话从之后的所有请求中排除（仍保存在会话库和导出中，"
                       "显示为灰色）；/forget undo 恢复"),
           palette=("Exclude the last turn from requests", "从请求中排除最后一轮对话"),
           palette_help=("Take the last turn out of what is sent; it stays stored ({key})",
                         "不再发送最后一轮对话；它仍会保存（{key}）")),
    Action("fork", "f", ("Fork", "分叉"), scope="message",
           slash="fork",
           slash_text=("Fork the session into a new one from its last message (or, on a "
                       "selected message, from there); this one stays as it is",
                       "从最后一条消息（或选中的消息）把会话分叉为新会话；当前会话保持不变"),
           palette=("Fork the session", "分叉会话"),
           palette_help=("A new session holding this one up to its last message ({key})",
                         "新会话，包含当前会话直到最后一条消息的内容（{key}）")),
    # Not in the Footer: at 110 columns "m Remember" would cut "c Copy code" off; F1, the
    # palette and the Memory screen's empty line name M.
    Action("remember_message", "m", ("Remember", "记住"), scope="message", show=False,
           palette=("Remember the last message", "记住最后一条消息"),
           palette_help=("Put the message in the memory sent with every session's requests "
                         "({key} on a selected message)",
                         "把消息放入每个会话请求都会带上的记忆（选中消息时按 {key}）")),
    Action("send", "enter", ("Send the message (or run a /command)", "发送消息（或执行 /命令）"),
           bound=False, rebindable=False),
    Action("newline", "ctrl+j,alt+enter", ("New line in the message", "在消息中换行"),
           bound=False, rebindable=False),
    # Up / Down move the cursor inside a message of several rows; only at its first / last row
    # do they walk the history (the prompt's own keys, like Enter).
    Action("history_back", "up", ("On the first row: the message sent before (this session)",
                                  "在第一行时：上一条发送过的消息（本会话）"),
           bound=False, rebindable=False),
    Action("history_forward", "down", ("On the last row: the next message sent, then your "
                                       "draft again",
                                       "在最后一行时：下一条发送过的消息，最后回到你的草稿"),
           bound=False, rebindable=False),
    Action("history_back_all", "alt+up", ("The message sent before, in any session",
                                          "上一条发送过的消息（全部会话）"),
           bound=False, rebindable=False),
    Action("history_forward_all", "alt+down", ("The next message sent, in any session",
                                               "下一条发送过的消息（全部会话）"),
           bound=False, rebindable=False),
    # From the prompt to the conversation (its sidebar is next in the focus chain); elsewhere
    # the screen lets Textual move the focus on.
    Action("tab", "tab", ("From the prompt to the conversation, to select a message there",
                          "从输入框进入对话，以便选中一条消息"),
           show=False, rebindable=False),
    Action("copy_selection", "ctrl+c", ("Copy the text selected with the mouse",
                                        "复制用鼠标选中的文字"), bound=False, rebindable=False),
    Action("palette", "ctrl+p", ("Command palette: settings, summary, sessions, themes",
                                 "命令面板：设置、摘要、会话、主题"),
           bound=False, rebindable=False),
    # The conversation's own keys while it has the focus (widgets/message_cursor.py).
    Action("select_message", "up,down", ("Select the previous / next message",
                                         "选中上一条 / 下一条消息"),
           bound=False, rebindable=False, scope="message"),
    Action("select_end", "home,end", ("Select the first / last loaded message",
                                      "选中已加载的第一条 / 最后一条消息"),
           bound=False, rebindable=False, scope="message"),
    Action("scroll_page", "pageup,pagedown", ("Scroll the conversation a page", "对话滚动一页"),
           bound=False, rebindable=False, scope="message"),
    Action("back_to_prompt", "escape,tab", ("Back to the prompt", "回到输入框"),
           bound=False, rebindable=False, scope="message"),
    Action("copy_code", "c", ("Copy code", "复制代码"), slash="code",
           slash_text=("Copy a code block of the last reply (a list when it has several)",
                       "复制最后一条回复中的代码块（有多个时先列出供选择）"),
           palette=("Copy a code block", "复制代码块"),
           palette_help=("Copy a code block of the selected message, else of the last reply "
                         "({key} on a selected message)",
                         "复制选中消息的代码块，没有选中时取最后一条回复（选中消息时按 {key}）"),
           scope="message"),
    # Not in the Footer, which is full: a message shown cut says this key on its cut line.
    Action("view_whole", "v", ("View all of it", "查看全文"), slash="view", scope="message",
           show=False,
           slash_text=("The whole last reply as plain text that scrolls",
                       "以可滚动的纯文本显示最后一条回复的全文"),
           palette=("View the whole last reply", "查看最后一条回复的全文"),
           palette_help=("All of it as plain text that scrolls, however large ({key} on a "
                         "selected message)",
                         "以可滚动的纯文本显示全文，无论多大（选中消息时按 {key}）")),
)

BY_ID = {a.id: a for a in ACTIONS}
BY_SLASH = {a.slash: a for a in ACTIONS if a.slash}
REBINDABLE = [a.id for a in ACTIONS if a.bound and a.rebindable and a.keys]


def _texts(field: str) -> Texts:
    pairs = {a.id: getattr(a, field) for a in ACTIONS if getattr(a, field) is not None}
    return Texts(en={f"key_{i}": w[0] for i, w in pairs.items()},
                 zh={f"key_{i}": w[1] for i, w in pairs.items()})


# As i18n.translate_bindings looks them up: key_<action>.
KEY_TEXTS = _texts("key_text")


def _say(words: Words, lang: str) -> str:
    return words[1] if lang == "zh" else words[0]


def bindings() -> list[Binding]:
    """ChatScreen.BINDINGS: each with the action's id, so a [keys] keymap can move it."""
    return [Binding(a.keys, a.textual_action or a.id, a.key_text[0] if a.key_text else a.id,
                    show=a.show, priority=a.priority, id=a.id)
            for a in ACTIONS if a.bound and a.keys and a.scope == "screen"]


def message_bindings() -> list[Binding]:
    """The conversation's bindings for the message-scope actions: they run the screen's
    action_<id> (the one their /command runs), with the ids a [keys] keymap moves."""
    return [Binding(a.keys, f"screen.{a.id}", a.key_text[0] if a.key_text else a.id,
                    show=a.show, id=a.id)
            for a in ACTIONS if a.bound and a.keys and a.scope == "message"]


def keymap(table: dict[str, str]) -> dict[str, str]:
    """The [keys] lines Textual's keymap should apply: those that name a rebindable action."""
    return {i: k for i, k in table.items() if i in REBINDABLE}


def keys_of(action: Action, keymap: dict[str, str]) -> str:
    """The keys that run `action` now: the user's [keys] line for it, else its default."""
    return keymap.get(action.id, action.keys) if action.rebindable else action.keys


def key_name(key: str) -> str:
    """"ctrl+n" → "Ctrl+N", "f1" → "F1", "escape" → "Esc": as keys are printed on keyboards."""
    names = {"escape": "Esc", "pageup": "PgUp", "pagedown": "PgDn", "less_than_sign": "<",
             "greater_than_sign": ">"}

    def part(p: str) -> str:
        return names.get(p, p.upper() if p[:1] == "f" and p[1:].isdigit() else p.capitalize())

    return " / ".join("+".join(part(p) for p in one.split("+")) for one in key.split(","))


def help_keys(lang: str, keymap: dict[str, str], scope: str = "screen") -> list[tuple[str, str]]:
    """The F1 screen's key rows of one scope: every action with a key, as it is bound now."""
    return [(key_name(keys_of(a, keymap)), _say(a.key_text, lang))
            for a in ACTIONS if a.keys and a.key_text and a.scope == scope]


def help_commands(lang: str) -> list[tuple[str, str]]:
    """The F1 screen's (and /help's) command rows."""
    return [(f"/{a.slash} {a.arg}".strip(), _say(a.slash_text, lang))
            for a in ACTIONS if a.slash and a.slash_text]


def palette_entries(lang: str, keymap: dict[str, str]) -> list[tuple[Action, str, str]]:
    """(action, title, help) for each palette entry; the help names the key, or the command."""
    out = []
    for a in ACTIONS:
        if a.palette is None or a.palette_help is None:
            continue
        hint = key_name(keys_of(a, keymap)) if a.keys else f"/{a.slash}"
        out.append((a, _say(a.palette, lang), _say(a.palette_help, lang).format(key=hint)))
    return out


# -- the [keys] table -------------------------------------------------------------------------

MODIFIERS = ("ctrl", "alt", "shift", "meta", "super", "hyper")
_NAMED = {k.value.rsplit("+", 1)[-1] for k in Keys if not k.value.startswith("<")}
KEY_FORM = "keys are written like ctrl+n, f5, alt+enter"


def _known_key(key: str) -> bool:
    *mods, base = key.split("+")
    if not base or len(set(mods)) != len(mods) or any(m not in MODIFIERS for m in mods):
        return False
    if len(base) == 1:
        return base.isprintable() and not base.isspace()
    return base in _NAMED or base in REPLACED_KEYS or key_to_character(base) is not None


def _prompt_keys() -> set[str]:
    """Keys the prompt (a TextArea) binds itself: with the focus there, it takes them first."""
    from textual.widgets import TextArea

    keys = [b.key if isinstance(b, Binding) else b[0] for b in TextArea.BINDINGS]
    return {k.strip() for key in keys for k in key.split(",")}


def _quoted(text: str) -> str:
    """As the line stands in the TOML file."""
    return json.dumps(text, ensure_ascii=False)


def _split(keys: str) -> list[str]:
    return [k for k in (k.strip() for k in keys.split(",")) if k]


# The prompt's own keys: they act only while it has the focus, never on a selected message.
PROMPT_ONLY = frozenset({"send", "newline", "history_back", "history_forward", "history_back_all",
                         "history_forward_all"})


def _everywhere(key: str, keymap: dict[str, str]) -> Action | None:
    """The screen action that takes `key` even while the conversation has the focus: a
    priority binding runs before the focused widget's, and the fixed keys stay what they are."""
    return next((a for a in ACTIONS if a.scope == "screen" and (a.priority or not a.rebindable)
                 and a.id not in PROMPT_ONLY and key in _split(keys_of(a, keymap))), None)


def keys_problem(keymap: dict[str, str]) -> str | None:
    """The first problem of a [keys] table in one line (an unknown action or key name, a key
    given to two actions of one scope), or None when every line can be used."""
    for action_id, keys in keymap.items():
        line = f"[keys] {action_id} = {_quoted(keys)}"
        if action_id not in BY_ID or not BY_ID[action_id].bound or not BY_ID[action_id].keys:
            close = difflib.get_close_matches(action_id, REBINDABLE, n=1)
            hint = f"did you mean '{close[0]}'?" if close else "actions: " + ", ".join(
                REBINDABLE)
            return f"{line}: unknown action '{action_id}'; {hint}"
        action = BY_ID[action_id]
        if not action.rebindable:
            return f"{line}: {action_id} keeps its key {action.keys}; it cannot be rebound"
        for key in (k.strip() for k in keys.split(",")):
            if not _known_key(key):
                return f"{line}: unknown key name '{key}'; {KEY_FORM}"
            if action.scope == "message":
                # The conversation has the focus then, not the prompt: letters are free.
                holder = _everywhere(key, keymap)
                if holder is not None:
                    return (f"{line}: {key} runs {holder.id} everywhere, on a selected "
                            "message too; pick another key")
                continue
            if key_to_character(key) is not None or key.startswith("shift+") and len(key) == 7:
                return (f"{line}: '{key}' types a character into the prompt; give it ctrl+ "
                        "or alt+, or use an F key")
            if key in _prompt_keys() and not action.priority:
                return (f"{line}: the prompt, which has the focus, uses {key} itself; "
                        "pick another key")
    # A message key may shadow a screen key while the conversation has the focus (Esc goes
    # back to the prompt there, instead of stopping a reply): only one scope's keys must differ.
    owners: dict[str, dict[str, str]] = {}
    for action in ACTIONS:
        owner = owners.setdefault(action.scope, {})
        for key in _split(keys_of(action, keymap)):
            if key in owner:
                first, second = owner[key], action.id
                rebound = second if second in keymap else first
                return (f"[keys] {rebound} = {_quoted(keymap[rebound])}: {key} would run both "
                        f"{first} and {second}; give one of them another key")
            owner[key] = action.id
    return None
