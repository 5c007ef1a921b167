"""The local model's server as the app sees it: loading (with the seconds so far), ready or failed.

The app starts the server itself, in a worker, so the user watches it load on the status line
and can type meanwhile; a message sent before it is ready waits for it instead of failing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LocalServer
from jarvis_tui.texts.i18n import Texts

LOCAL_MODEL_TEXTS = Texts(
    en={
        "status_loading": "⏳ Loading the local model… {seconds}s. You can type; a message "
                          "sent now waits for it.",
        "status_waiting": "⏳ Loading the local model… {seconds}s. Your message is sent as "
                          "soon as it is ready. Esc stops",
        "ready": "🖥 The local model is ready ({model}, {window} tokens, loaded in "
                 "{seconds:.1f}s). It runs on this machine: small and slow beside a hosted "
                 "model, and it makes mistakes. For a stronger one, set OPENAI_API_KEY or "
                 "ANTHROPIC_API_KEY, or start with --base-url / --provider ollama (README, "
                 "\"Providers\").",
        "failed": "✖ The local model could not start: {why}",
        "failed_send": "The local model is not running (see the notice above); connect a "
                       "provider with F3 or restart with an API key.",
    },
    zh={
        "status_loading": "⏳ 正在加载本地模型… {seconds} 秒。可以先输入；"
                          "现在发送的消息会等它加载完。",
        "status_waiting": "⏳ 正在加载本地模型… {seconds} 秒。"
                          "加载完成后立即发送你的消息。按 Esc 停止",
        "ready": "🖥 本地模型已就绪（{model}，{window} 个 token，"
                 "加载用时 {seconds:.1f} 秒）。它在本机运行，比托管模型小而慢，也会出错。"
                 "要使用更强的模型，请设置 OPENAI_API_KEY 或 ANTHROPIC_API_KEY，"
                 "或用 --base-url / --provider ollama 启动（详见 README 的 “Providers” 一节）。",
        "failed": "✖ 本地模型无法启动：{why}",
        "failed_send": "本地模型没有运行（见上方提示）；"
                       "请按 F3 连接其他服务，或设置 API key 后重启。",
    },
)


class LocalModel:
    """One server's state for the screens: `seconds` while loading, then ready or `error`."""

    name = LOCAL_MODEL_NAME

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.seconds = 0.0
        self.error: str | None = None
        self._settled = asyncio.Event()

    @property
    def loading(self) -> bool:
        return not self._settled.is_set()

    async def start(self, progress: Callable[[float], None] | None = None) -> None:
        """Start the server; LocalServerError is kept in `error` and raised again."""
        def tick(seconds: float) -> None:
            self.seconds = seconds
            if progress is not None:
                progress(seconds)

        try:
            await self.server.start(tick)
        except Exception as err:
            self.error = str(err) or type(err).__name__
            raise
        finally:
            self._settled.set()

    async def wait(self) -> str | None:
        """Until loading is over: None when the server answers, else why it does not."""
        await self._settled.wait()
        return self.error

    def stop(self) -> None:
        self.server.stop()
