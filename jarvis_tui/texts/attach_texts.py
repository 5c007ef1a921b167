"""What the user reads when a path cannot be attached: one line each, saying what was found and
what to do, in English and Chinese. The core says why (core/attach/refusal.py)."""

from __future__ import annotations

from jarvis_tui.core.attach.listing import size_text
from jarvis_tui.core.attach.refusal import AttachRefused
from jarvis_tui.texts.i18n import Texts, plural_s

ATTACH_TEXTS = Texts(
    en={
        "missing": "Not attached: there is no file or folder at {path}",
        "missing_dangling": "Not attached: {path} is a link to a file that is not there",
        "loop": "Not attached: {path} is a symbolic link that leads back to itself",
        "denied": "Not attached: you have no permission to read {path}",
        "not_file": "Not attached: {path} is a {what}, not a file; attach a regular file",
        "too_big": "Not attached: {path} is {size}, over the {limit} an attachment may be; "
                   "attach a part of it (/attach {path}:FIRST-LAST)",
        "binary": "Not attached: {path} is a {what}, not text",
        "encoding": "Not attached: {path} is text in {encoding}, not UTF-8; convert it first "
                    "(iconv -f {encoding} -t UTF-8)",
        "bad_name": "Not attached: the path {shown} holds control characters or invisible "
                    "marks that would show it as another name; rename it",
        "not_image": "Not attached: {path} is named as a {claimed} image but holds {found}",
        "broken_image": "Not attached: {path} is a damaged image ({why})",
        "bomb": "Not attached: {path} declares {width}x{height} pixels, over the {limit:,} "
                "an image may have (a decompression bomb, or far too large to send)",
        "bomb_unsized": "Not attached: {path} would decode to more pixels than an image may "
                        "have (a decompression bomb)",
        "changed": "Not attached: {path} changed while it was read; attach it again",
        "changed_since": "Not sent: {path} changed since it was attached; /detach it and "
                         "attach it again to send it as it is now",
        "vanished": "Not sent: {path} is gone since it was attached; /detach it, or attach it "
                    "again",
        "no_vision": "Not attached: {model} takes no images; choose a model that reads "
                     "images (the model setting) to send {path}",
        "read_error": "Not attached: {path} could not be read ({why})",
        "bad_range": "Not attached: {path} has {lines} line{s}; lines {first}-{last} are not "
                     "in it (PATH:FIRST-LAST, counting from 1)",
        "bad_range_open": "Not attached: {path} has {lines} line{s}; line {first} is not in it "
                          "(PATH:FIRST-LAST, counting from 1)",
        "not_yet": "Not attached: {path} is {what}; this version sends text files and "
                   "folders only",
    },
    zh={
        "missing": "未附加：{path} 不存在",
        "missing_dangling": "未附加：{path} 是指向不存在文件的链接",
        "loop": "未附加：{path} 是指回自身的符号链接",
        "denied": "未附加：没有读取 {path} 的权限",
        "not_file": "未附加：{path} 是{what}，不是普通文件；请附加普通文件",
        "too_big": "未附加：{path} 有 {size}，超过附件上限 {limit}；可只附加其中一部分"
                   "（/attach {path}:起始行-结束行）",
        "binary": "未附加：{path} 是{what}，不是文本",
        "encoding": "未附加：{path} 是 {encoding} 编码的文本，不是 UTF-8；请先转换"
                    "（iconv -f {encoding} -t UTF-8）",
        "bad_name": "未附加：路径 {shown} 含控制字符或不可见标记，显示出来会像另一个名字；"
                    "请重命名",
        "not_image": "未附加：{path} 名为 {claimed} 图片，内容却是{found}",
        "broken_image": "未附加：{path} 是损坏的图片（{why}）",
        "bomb": "未附加：{path} 声明有 {width}x{height} 像素，超过图片上限 {limit:,}"
                "（解压炸弹，或大到无法发送）",
        "bomb_unsized": "未附加：{path} 解码后的像素超过图片上限（解压炸弹）",
        "changed": "未附加：{path} 在读取时发生了变化；请重新附加",
        "changed_since": "未发送：{path} 在附加之后已改变；请先 /detach 再重新附加，"
                         "以发送它现在的内容",
        "vanished": "未发送：{path} 在附加之后已不存在；请 /detach 移除或重新附加",
        "no_vision": "未附加：{model} 不接受图片；要发送 {path}，请在设置中换用能读图片的模型",
        "read_error": "未附加：无法读取 {path}（{why}）",
        "bad_range": "未附加：{path} 共 {lines} 行，没有第 {first}-{last} 行（路径:起始行-结束行，"
                     "从 1 数起）",
        "bad_range_open": "未附加：{path} 共 {lines} 行，没有第 {first} 行（路径:起始行-结束行，"
                          "从 1 数起）",
        "not_yet": "未附加：{path} 是{what}；此版本只发送文本文件和文件夹",
    },
)

_WHAT_ZH = {"fifo": "命名管道（FIFO）", "character device": "字符设备", "block device": "块设备",
            "socket": "套接字", "binary data": "二进制数据", "text": "文本",
            "an image": "图片"}


def refusal_line(lang: str, refused: AttachRefused) -> str:
    """The one line that says why, in `lang`."""
    facts = dict(refused.facts)
    key = refused.reason
    if key == "missing" and facts.pop("dangling", False):
        key = "missing_dangling"
    if key == "bad_range":
        facts["s"] = plural_s(facts.get("lines", 0))
        key = "bad_range" if facts.get("last") else "bad_range_open"
    if key == "changed" and facts.pop("since", False):
        key = "changed_since"
    if key == "bomb" and not facts.get("width"):
        key = "bomb_unsized"
    for name in ("size", "limit"):
        if key == "too_big" and name in facts:
            facts[name] = size_text(facts[name])
    if lang == "zh" and "what" in facts:
        facts["what"] = _WHAT_ZH.get(facts["what"], facts["what"])
    if lang == "zh" and "found" in facts:
        facts["found"] = _WHAT_ZH.get(facts["found"], facts["found"])
    return ATTACH_TEXTS(lang, key, **facts)


_CHANGED = Texts(
    en={"changed": "{path} changed since this session last sent it ({before} then, {now} now); "
                   "this sends it as it is now, and the earlier turn keeps the old one"},
    zh={"changed": "{path} 自本会话上次发送以来已改变（当时 {before}，现在 {now}）；"
                   "这次发送的是现在的版本，之前的对话保留旧版本"},
)


def changed_line(lang: str, path: str, before: int, now: int) -> str:
    """A resend of a file that is not what the session sent before."""
    return _CHANGED(lang, "changed", path=path, before=size_text(before), now=size_text(now))


BAR_TEXTS = Texts(
    en={
        "chip": "{name} · {size} · {tokens} tokens",
        "chip_part": "{name} (lines {first}-{last}) · {size} · {tokens} tokens",
        "chip_digest": "{name} · {size} · digest · {tokens} tokens",
        "chip_image": "{name} · {pixels} · {size} · {tokens} tokens",
        "too_big": "larger than the window can hold ({tokens} of {budget} tokens): it goes "
                   "cut to its start and end; /as {n} digest sends its digest, /as {n} "
                   "FIRST-LAST a part",
        "went_digest": "📎 {name} ({tokens} tokens) is larger than the window can hold "
                       "({budget}): it goes as a digest, and the model reads the lines it "
                       "needs with read_attachment. /as {n} whole sends it anyway (cut to its "
                       "start and end, older turns summarised), /as {n} FIRST-LAST a part",
        "went_part": "📎 {name} ({tokens} tokens) is larger than the window can hold "
                     "({budget}), and this model does not read files in ranges: lines 1-{last} "
                     "of {lines} go. /as {n} FIRST-LAST sends others, /as {n} whole sends it "
                     "anyway (cut to its start and end)",
        "ask_part": "{name} ({tokens} tokens) is larger than the window can hold ({budget}), "
                    "and this model does not read files in ranges: lines 1-{last} of {lines} "
                    "go; PATH:FIRST-LAST sends others, --whole sends it anyway (cut to its "
                    "start and end)",
        "ask_digest": "{name} ({tokens} tokens) is larger than the window can hold "
                      "({budget}): it goes as a digest, and the model reads the lines it needs "
                      "with read_attachment; --whole sends it anyway (cut to its start and "
                      "end), PATH:FIRST-LAST a part",
        "scaled": "📎 {name} is {width}x{height} pixels; it goes scaled down to {sent}, the "
                  "most the provider reads ({tokens} tokens)",
        "as_usage": "How attachment N goes: /as N whole, /as N digest, or /as N FIRST-LAST "
                    "for those lines (N from 1 to {n})",
        "as_whole": "📎 {name} goes whole ({tokens} tokens)",
        "as_digest": "📎 {name} goes as a digest ({tokens} tokens); the model reads its lines "
                     "with read_attachment",
        "as_part": "📎 {name}: lines {first}-{last} go ({tokens} tokens)",
        "fits": "Sending adds {tokens} tokens ({used} of {budget} with the conversation). "
                "Click a file or /detach N to remove it, /detach for all",
        "compacts": "Sending adds {tokens} tokens: {used} of {budget}, past the {threshold} "
                    "where older turns are summarised first ({turns} turn{s}). /detach N "
                    "removes a file",
        "over": "Sending adds {tokens} tokens: {used} of {budget}, more than the window; "
                "{turns} older turn{s} will be summarised, or the oldest left out. /detach N "
                "removes a file",
        "attached": "📎 {name} is attached ({tokens} tokens); it goes with your next message",
        "changed": "📎 {line}",
        "detached": "📎 {name} is no longer attached",
        "detached_all": "📎 Nothing is attached any more",
        "nothing": "Nothing is attached",
        "bad_index": "There is no attachment {arg}: /detach N (1 to {n}), or /detach for all",
        "which": "Which file? /attach PATH, or PATH:FIRST-LAST for some of its lines",
        "walking": "… reading the folder ({n} paths so far)",
        "pasted_path": "You pasted the path of {path}: Ctrl+T attaches the file in its place",
        "no_pasted_path": "There is no pasted path to attach: paste a file's path first, or "
                          "/attach PATH",
        "no_match": "No path here matches {query} (.gitignore honoured; start a part with . "
                    "for hidden ones)",
    },
    zh={
        "chip": "{name} · {size} · {tokens} tokens",
        "chip_part": "{name}（第 {first}-{last} 行）· {size} · {tokens} tokens",
        "chip_digest": "{name} · {size} · 摘要 · {tokens} tokens",
        "chip_image": "{name} · {pixels} · {size} · {tokens} tokens",
        "too_big": "超出上下文窗口（{tokens} / {budget} tokens）：将只发送开头和结尾；"
                   "/as {n} digest 改发摘要，/as {n} 起始行-结束行 只发送其中一部分",
        "went_digest": "📎 {name}（{tokens} tokens）超出上下文窗口（{budget}）：改为发送摘要，"
                       "模型用 read_attachment 读取所需的行。/as {n} whole 仍发送全文（截取开头和"
                       "结尾，较早的对话会被摘要），/as {n} 起始行-结束行 只发送部分",
        "went_part": "📎 {name}（{tokens} tokens）超出上下文窗口（{budget}），且此模型不会按行段"
                     "读取文件：只发送第 1-{last} 行（共 {lines} 行）。/as {n} 起始行-结束行 发送"
                     "其他行，/as {n} whole 仍发送全文（截取开头和结尾）",
        "ask_part": "{name}（{tokens} tokens）超出上下文窗口（{budget}），且此模型不会按行段读取"
                    "文件：只发送第 1-{last} 行（共 {lines} 行）；路径:起始行-结束行 发送其他行，"
                    "--whole 仍发送全文（截取开头和结尾）",
        "ask_digest": "{name}（{tokens} tokens）超出上下文窗口（{budget}）：改为发送摘要，"
                      "模型用 read_attachment 读取所需的行；--whole 仍发送全文（截取开头和结尾），"
                      "路径:起始行-结束行 只发送部分",
        "scaled": "📎 {name} 为 {width}x{height} 像素；将缩小到服务商可读的上限 {sent} 发送"
                  "（{tokens} tokens）",
        "as_usage": "设置第 N 个附件的发送方式：/as N whole、/as N digest，或 /as N 起始行-结束行"
                    "（N 为 1 到 {n}）",
        "as_whole": "📎 {name} 将发送全文（{tokens} tokens）",
        "as_digest": "📎 {name} 将发送摘要（{tokens} tokens）；模型用 read_attachment 读取其中的行",
        "as_part": "📎 {name}：将发送第 {first}-{last} 行（{tokens} tokens）",
        "fits": "发送将增加 {tokens} tokens（连同对话共 {used} / {budget}）。"
                "点击文件或 /detach N 移除，/detach 全部移除",
        "compacts": "发送将增加 {tokens} tokens：共 {used} / {budget}，超过 {threshold}，"
                    "会先摘要较早的 {turns} 轮对话。/detach N 移除文件",
        "over": "发送将增加 {tokens} tokens：共 {used} / {budget}，超出窗口；较早的 {turns} "
                "轮对话会被摘要，或略去最早的对话。/detach N 移除文件",
        "attached": "📎 已附加 {name}（{tokens} tokens），将随下一条消息发送",
        "changed": "📎 {line}",
        "detached": "📎 已移除 {name}",
        "detached_all": "📎 已移除全部附件",
        "nothing": "没有附件",
        "bad_index": "没有第 {arg} 个附件：/detach N（1 到 {n}），或 /detach 全部移除",
        "which": "附加哪个文件？/attach 路径，或 路径:起始行-结束行 只发送部分行",
        "walking": "… 正在读取文件夹（已有 {n} 个路径）",
        "pasted_path": "你粘贴了 {path} 的路径：按 Ctrl+T 改为附加该文件",
        "no_pasted_path": "没有可附加的粘贴路径：先粘贴文件路径，或用 /attach 路径",
        "no_match": "这里没有与 {query} 匹配的路径（已遵循 .gitignore；以 . 开头可列出隐藏项）",
    },
)
