"""The app's own words (palette entries, theme and settings notices), in English and Chinese."""

from __future__ import annotations

from jarvis_tui.ui.i18n import Texts

T = Texts(
    en={
        "theme_problem": "Theme file skipped",
        "no_theme": "There is no theme named {name!r}; using {fallback}. Pick one with F3 or "
                    "the command palette.",
        "theme_not_saved": "The theme is used now but was not saved: {why}",
        "settings_saved": "Settings saved and applied.",
        "cmd_summary": "Summary: view and edit",
        "cmd_summary_help": "Open the conversation summary in an editor (F2)",
        "cmd_settings": "Settings",
        "cmd_settings_help": "Context window, reserves, threshold, model, theme, language (F3)",
        "cmd_sessions": "Sessions",
        "cmd_sessions_help": "List the stored sessions and resume one (Ctrl+O)",
        "cmd_new": "New session",
        "cmd_new_help": "Start a new session; the current one stays stored (Ctrl+N)",
        "cmd_compact": "Compact now",
        "cmd_compact_help": "Summarise older turns now (/compact)",
        "cmd_copy": "Copy the last reply",
        "cmd_copy_help": "Copy the last reply to the clipboard (F4)",
        "cmd_cost": "Session cost",
        "cmd_cost_help": "Tokens, cache share and money of this session's requests (/cost)",
    },
    zh={
        "theme_problem": "已跳过主题文件",
        "no_theme": "没有名为 {name!r} 的主题；改用 {fallback}。可按 F3 或在命令面板中选择主题。",
        "theme_not_saved": "主题已启用，但未能保存：{why}",
        "settings_saved": "设置已保存并生效。",
        "cmd_summary": "摘要：查看与编辑",
        "cmd_summary_help": "在编辑器中打开对话摘要（F2）",
        "cmd_settings": "设置",
        "cmd_settings_help": "上下文窗口、预留、阈值、模型、主题、语言（F3）",
        "cmd_sessions": "会话",
        "cmd_sessions_help": "列出已保存的会话并继续其中之一（Ctrl+O）",
        "cmd_new": "新会话",
        "cmd_new_help": "开始新会话；当前会话仍会保存（Ctrl+N）",
        "cmd_compact": "立即压缩",
        "cmd_compact_help": "立即摘要较早的对话（/compact）",
        "cmd_copy": "复制最后一条回复",
        "cmd_copy_help": "把最后一条回复复制到剪贴板（F4）",
        "cmd_cost": "会话开销",
        "cmd_cost_help": "本会话请求的 token 数、缓存比例与费用（/cost）",
    },
)
