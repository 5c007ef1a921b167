"""The chat screen's words, in English and Chinese."""

from __future__ import annotations

from jarvis_tui.core.providers import missing_key
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.texts.i18n import Texts

CHAT_TEXTS = Texts(
    en={
        "placeholder": "Message Jarvis… (Enter sends, Ctrl+J new line, /help for commands)",
        "untitled": "New session",
        "status_idle": "Enter send · Ctrl+J new line · F1 help · /compact /pin /export",
        "status_waiting": "⏳ Waiting for the model… Esc stops",
        "status_streaming": "✍ Receiving the reply… Esc stops (what arrived is kept)",
        "status_compaction_wait": "⏳ Compacting the conversation first; your message is sent "
                                  "as soon as it is done. Esc stops",
        "status_retry": "↻ Retrying in {left:.1f}s (attempt {attempt} of {most}); the notice "
                        "above says why. Esc stops",
        "busy": "A reply is still on its way: wait for it or press Esc to stop it",
        "stopped_partial": "■ Stopped. The partial reply is kept and marked.",
        "stopped_empty": "■ Stopped before the reply began; your message is back in the input.",
        "restored": "Your message is back in the input: edit it or press Enter to try again.",
        "status_busy": "⏳ Another jarvis-tui is answering in this session; yours is sent when it "
                       "is done. Esc stops",
        "unsaved": "The reply above is not in the session database: F4 copies it. It is saved "
                   "with your next message if there is room by then.",
        "already_compacting": "A compaction is already running.",
        "compact_while_sending": "A reply is on its way; /compact again when it has finished.",
        "compact_discarded": "📦 The proposed summary was discarded; nothing changed.",
        "nothing_to_pin": "There is no message to pin yet.",
        "recall_usage": "Usage: /recall WORDS, for example /recall launch budget. It lists "
                        "earlier turns that share those words; Enter pins one. /recall --all "
                        "WORDS looks in every session.",
        "pinned": "📌 Pinned: “{text}”. It is always sent verbatim and never summarised.",
        "unpinned": "Unpinned: “{text}”.",
        "exported": "Exported {n} message{s} to {path}",
        "export_failed": "Could not export to {path}: {why}",
        "nothing_to_copy": "There is no reply to copy yet.",
        "reply_what": "the last reply ({n} character{s})",
        "request_what": "the next request as JSON ({n} message{s})",
        "no_code": "This message has no code block.",
        "no_code_yet": "No reply has a code block yet.",
        "nothing_to_view": "No reply to show yet.",
        "code_what": "the {kind} block ({lines})",
        "code_what_plain": "the code block ({lines})",
        "n_lines": "{n} lines",
        "one_line": "1 line",
        "no_summary": "No summary yet: it is made when the conversation reaches the compaction "
                      "threshold, or now with /compact.",
        "edit_while_compacting": "A compaction is running; the summary can be edited when it "
                                 "finishes.",
        "summary_saved": "Summary saved as edited by you; it is used from the next request on.",
        "already_new": "This session is still empty; it is already new.",
        "no_key": "No API key: set {var} (or api_key in the config file) and restart, "
                  "or press F3 and point the base URL at a local server.",
    },
    zh={
        "placeholder": "给 Jarvis 发消息…（Enter 发送，Ctrl+J 换行，/help 查看命令）",
        "untitled": "新会话",
        "status_idle": "Enter 发送 · Ctrl+J 换行 · F1 帮助 · /compact /pin /export",
        "status_waiting": "⏳ 等待模型回复… 按 Esc 停止",
        "status_streaming": "✍ 正在接收回复… 按 Esc 停止（已收到的内容会保留）",
        "status_compaction_wait": "⏳ 正在先压缩对话；完成后立即发送你的消息。按 Esc 停止",
        "status_retry": "↻ {left:.1f} 秒后重试（第 {attempt}/{most} 次），原因见上方提示。"
                        "按 Esc 停止",
        "busy": "回复仍在进行：请等待，或按 Esc 停止",
        "stopped_partial": "■ 已停止。不完整的回复已保留并标记。",
        "stopped_empty": "■ 回复开始前已停止；你的消息已放回输入框。",
        "restored": "你的消息已放回输入框：可以修改，或按 Enter 重试。",
        "status_busy": "⏳ 另一个 jarvis-tui 正在这个会话中回答；它完成后发送你的消息。按 Esc 停止",
        "unsaved": "上面的回复没有存入会话数据库：按 F4 复制。若届时有空间，"
                   "会随你的下一条消息一起保存。",
        "already_compacting": "压缩已在进行中。",
        "compact_while_sending": "回复仍在进行；请在回复结束后再执行 /compact。",
        "compact_discarded": "📦 已放弃建议的摘要；没有任何改动。",
        "nothing_to_pin": "还没有可以固定的消息。",
        "recall_usage": "用法：/recall 关键词，例如 /recall 发布预算。"
                        "它会列出包含这些词的早期对话；按 Enter 固定其中一轮。"
                        "/recall --all 关键词 会查找所有会话。",
        "pinned": "📌 已固定：“{text}”。它会始终原文发送，从不被摘要。",
        "unpinned": "已取消固定：“{text}”。",
        "exported": "已导出 {n} 条消息到 {path}",
        "export_failed": "无法导出到 {path}：{why}",
        "nothing_to_copy": "还没有可复制的回复。",
        "reply_what": "最后一条回复（{n} 个字符）",
        "request_what": "下一次请求的 JSON（{n} 条消息）",
        "no_code": "这条消息没有代码块。",
        "no_code_yet": "还没有包含代码块的回复。",
        "nothing_to_view": "还没有可以显示的回复。",
        "code_what": "{kind} 代码块（{lines}）",
        "code_what_plain": "代码块（{lines}）",
        "n_lines": "{n} 行",
        "one_line": "1 行",
        "no_summary": "还没有摘要：对话达到压缩阈值时会自动生成，也可以用 /compact 立即生成。",
        "edit_while_compacting": "正在压缩；完成后才能编辑摘要。",
        "summary_saved": "摘要已保存为你编辑的版本，从下一次请求起使用。",
        "already_new": "当前会话还是空的，已经是新会话。",
        "no_key": "没有 API key：请设置 {var}（或在配置文件中设置 api_key）后重启，"
                  "或按 F3 把 base URL 指向本地服务器。",
    },
)


def missing_key_problem(settings: Settings, lang: str) -> str | None:
    """The one case where sending cannot work and the server would only say so after retries."""
    var = missing_key(settings)
    return CHAT_TEXTS(lang, "no_key", var=var) if var else None


BRANCH_TEXTS = Texts(
    en={
        "nothing_to_retry": "There is no question to answer again yet.",
        "retry_covered": ("The last question is folded into the summary, so it cannot be "
                          "answered again here; fork the session from it (f on the message, "
                          "or /fork) to try again there."),
        "retry_busy": "A reply is on its way; Esc stops it, then /retry.",
        "retry_excluded": ("That turn is excluded from requests; x on it (or /forget undo) "
                           "brings it back, then it can be answered again."),
        "retrying_again": "↻ Answering the question again; the reply it had stays as "
                          "version {n} (< and > on the reply switch between them).",
        "asking_again": "↻ Asking the question again.",
        "asking_anew": ("↻ Asking the question again as a new version of it; the turns after "
                        "it stay with the version before (< and > on the question switch "
                        "between them)."),
        "retry_failed": "The reply it had is shown again.",
        "retry_failed_anew": ("The turns after the question are shown again; this try is kept "
                              "as a version of it (< and > on the question)."),
        "no_versions": "This message has no other versions.",
        "version_shown": "Showing version {i} of {n}.",
        "switch_busy": "A reply is on its way; switch versions when it has finished.",
        "forgot": ("⊘ Turn taken out of every request (kept in the store and exports): "
                   "“{what}”. /forget undo, or x on it, brings it back."),
        "forgot_covered": ("⊘ Turn taken out of every request: “{what}”. The summary was made "
                           "with it and may still mention it: F2 edits the summary."),
        "unforgot": "↺ Turn back in the requests: “{what}”.",
        "withdrawn": " {n} memory suggestion{s} from it withdrawn (/remember keeps what you want).",
        "nothing_to_forget": "There is no turn to take out yet.",
        "nothing_to_unforget": "No turn shown is excluded.",
        "forget_busy": "That turn is being answered; wait for the reply, or Esc to stop it.",
        "already_forgotten": ("The last turn is already excluded; /forget undo brings it "
                              "back."),
        "forked": ("⑂ Forked into a new session: “{title}”. The one before is unchanged "
                   "(Ctrl+O lists both)."),
        "fork_busy": "A reply is on its way; fork when it has finished.",
        "nothing_to_fork": "There is no message to fork from yet.",
        "edit_not_question": ("Only your own messages can be edited; r on a reply (or "
                              "/retry) answers its question again."),
        "edit_busy": "A reply is on its way; edit when it has finished (Esc stops it).",
        "edit_covered_title": "This message is in the summary",
        "edit_covered": ("The summary already stands for this message, so it cannot be "
                         "changed here without the summary going wrong. Fork the session "
                         "from just before it? The new session gets your edited message and "
                         "a summary made from its own turns; this one stays as it is."),
        "edit_forked": ("⑂ Forked before the message you are editing: “{title}”. It is in the "
                        "prompt: change it and press Enter."),
        "edit_forked_first": ("⑂ Nothing came before the message you are editing, so it is in "
                              "the prompt of a new, empty session: change it and press Enter. "
                              "The old session is unchanged (Ctrl+O lists both)."),
        "edit_what": "message of {time}",
        "resent_branch": ("✎ Resent as a new branch; the old one is kept (< and > on your "
                          "message switch between them)."),
        "edit_gone": "The message being edited is not shown any more; sent as a new message.",
    },
    zh={
        "nothing_to_retry": "还没有可以重新回答的问题。",
        "retry_covered": ("最后一个问题已被并入摘要，无法在此重新回答；请从它分叉会话"
                          "（在消息上按 f，或 /fork）后在新会话中重试。"),
        "retry_busy": "回复正在生成；按 Esc 停止后再 /retry。",
        "retry_excluded": ("该轮对话已从请求中排除；在其上按 x（或 /forget undo）"
                           "恢复后才能重新回答。"),
        "retrying_again": "↻ 正在重新回答该问题；原回复保留为第 {n} 版"
                          "（在回复上按 < 和 > 切换）。",
        "asking_again": "↻ 正在重新提问。",
        "asking_anew": ("↻ 正在作为该问题的新版本重新提问；之后的对话保留在原来的版本中"
                        "（在问题上按 < 和 > 切换）。"),
        "retry_failed": "已重新显示原来的回复。",
        "retry_failed_anew": ("已重新显示该问题之后的对话；这次尝试保留为该问题的一个版本"
                              "（在问题上按 < 和 >）。"),
        "no_versions": "这条消息没有其他版本。",
        "version_shown": "正在显示第 {i} 版，共 {n} 版。",
        "switch_busy": "回复正在生成；完成后再切换版本。",
        "forgot": ("⊘ 该轮对话已从之后的所有请求中排除（仍保存在会话库和导出中）："
                   "“{what}”。/forget undo 或在其上按 x 可恢复。"),
        "forgot_covered": ("⊘ 该轮对话已从之后的所有请求中排除：“{what}”。摘要生成时包含了它，"
                           "可能仍会提到它：按 F2 编辑摘要。"),
        "unforgot": "↺ 该轮对话已恢复发送：“{what}”。",
        "withdrawn": "由它产生的 {n} 条记忆建议已撤回（想保留的可以用 /remember）。",
        "nothing_to_forget": "还没有可以排除的对话。",
        "nothing_to_unforget": "显示的对话中没有被排除的。",
        "forget_busy": "这一轮正在回答；请等回复完成，或按 Esc 停止。",
        "already_forgotten": "最后一轮已被排除；/forget undo 可恢复。",
        "forked": "⑂ 已分叉为新会话：“{title}”。原会话保持不变（Ctrl+O 可看到两者）。",
        "fork_busy": "回复正在生成；完成后再分叉。",
        "nothing_to_fork": "还没有可以分叉的消息。",
        "edit_not_question": "只能编辑你自己的消息；在回复上按 r（或 /retry）可重新回答其问题。",
        "edit_busy": "回复正在生成；完成后再编辑（Esc 可停止）。",
        "edit_covered_title": "这条消息已在摘要中",
        "edit_covered": ("摘要已代表这条消息，在此修改会使摘要与对话不符。要从它之前分叉会话吗？"
                         "新会话包含你修改后的消息，并会用它自己的对话生成摘要；"
                         "当前会话保持不变。"),
        "edit_forked": ("⑂ 已在你要编辑的消息之前分叉：“{title}”。"
                        "消息已放入输入框：修改后按 Enter。"),
        "edit_forked_first": ("⑂ 你要编辑的消息之前没有内容，所以它已放入一个新的空会话的输入框："
                              "修改后按 Enter。原会话保持不变（Ctrl+O 可看到两者）。"),
        "edit_what": "{time} 的消息",
        "resent_branch": "✎ 已作为新分支重新发送；旧分支仍保留（在你的消息上按 < 和 > 切换）。",
        "edit_gone": "正在编辑的消息已不再显示；已作为新消息发送。",
    },
)


TOOL_TEXTS = Texts(
    en={
        "status_approval": "⏸ The model wants to run {name}: Tab, then y / a / n to answer",
        "status_running": "⚙ Running {name}… Esc stops it",
        "status_tools": "⏳ Tool results sent; waiting for the model… Esc stops",
        "stopped_tools": "■ Stopped. The tool calls and results so far are kept in the "
                         "session.",
    },
    zh={
        "status_approval": "⏸ 模型想运行 {name}：先按 Tab，再按 y / a / n 回答",
        "status_running": "⚙ 正在运行 {name}… 按 Esc 停止",
        "status_tools": "⏳ 工具结果已发送，等待模型… 按 Esc 停止",
        "stopped_tools": "■ 已停止。已完成的工具调用及其结果仍保留在会话中。",
    },
)
