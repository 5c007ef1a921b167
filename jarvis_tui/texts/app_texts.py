"""The app's own words (theme and settings notices), in English and Chinese; the palette's
entries are in ui/actions.py."""

from __future__ import annotations

from jarvis_tui.texts.i18n import Texts

APP_TEXTS = Texts(
    en={
        "theme_problem": "Theme file skipped",
        "no_theme": "There is no theme named {name!r}; using {fallback}. Pick one with F3 or "
                    "the command palette.",
        "theme_not_saved": "The theme is used now but was not saved: {why}",
        "settings_saved": "Settings saved and applied.",
    },
    zh={
        "theme_problem": "已跳过主题文件",
        "no_theme": "没有名为 {name!r} 的主题；改用 {fallback}。可按 F3 或在命令面板中选择主题。",
        "theme_not_saved": "主题已启用，但未能保存：{why}",
        "settings_saved": "设置已保存并生效。",
    },
)
