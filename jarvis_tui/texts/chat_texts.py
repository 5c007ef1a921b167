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
