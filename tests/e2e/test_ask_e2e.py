"""`jarvis-tui ask` as a user runs it, turn after turn, against the real model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LocalServer
from tests.e2e.conftest import N_CTX

pytestmark = pytest.mark.e2e

TURNS = [
    "My name is Lin and I keep a cat called Mochi. Please remember that.",
    "我们的项目叫 jarvis-tui，是一个终端聊天客户端。请记住这个名字。",
    "The budget for the launch is 4,200 euros. What should we spend it on?",
    "上下文窗口只有两千个词元，所以需要压缩早期的对话。",
    "List three ways a chat client can lose the user's text.",
    "请用一句话解释什么是摘要压缩。",
    "Our deadline is the 14th of March. Is that realistic?",
    "我喜欢喝乌龙茶，你呢？",
    "Write a haiku about context windows.",
    None,  # the pasted file
    "What was the file above about?",
    "把刚才的文件总结成三点。",
    "Which function in that file computes the square?",
    "Translate 'the window is full' into Chinese.",
    "窗口满了的时候，客户端应该怎么做？",
    "Give me one reason to keep the last turns verbatim.",
    "请列出我们讨论过的数字。",
    "What is the name of my cat?",
    "我们的项目叫什么名字？",
    "How much is the launch budget?",
    "When is the deadline?",
    "用中文和英文各说一句再见。",
    "Say something encouraging about long conversations.",
    "最后，请总结我们的整个对话。",
    "Thank you, that is all for today.",
]


def pasted_file() -> str:
    """About 6,000 tokens of source code with Chinese comments, as a user would paste it."""
    lines = ["Here is the file I am working on:", "```python"]
    for i in range(220):
        lines.append(f"def square_{i}(x: int) -> int:  # 计算第 {i} 项的平方")
        lines.append(f"    return x * x + {i}")
    lines.append("```")
    return "\n".join(lines)


def run(env: dict[str, str], *args: str, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jarvis_tui", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=600)


def test_25_turns_in_two_languages_with_a_6k_paste(home: dict[str, str],
                                                    llama_server: LocalServer):
    # Short replies and summaries keep the run short (the test needs them to happen, not to be
    # long: the server writes 17 tokens a second, reads 75); the window is the server's real one.
    flags = ["--base-url", llama_server.base_url, "--model", LOCAL_MODEL_NAME,
             "--context-window", str(N_CTX), "--response-reserve", "32",
             "--system-reserve", "128"]
    config = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("summary_max_tokens = 64\n", encoding="utf-8")
    notices = []
    for i, text in enumerate(TURNS):
        stdin = pasted_file() if text is None else None
        done = run(home, *flags, "ask", "-" if stdin else text, stdin=stdin)
        assert done.returncode == 0, f"turn {i + 1} failed: {done.stderr}"
        assert "Traceback" not in done.stderr
        notices.append(done.stderr)

    exported = run(home, "export", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    data = json.loads(exported.stdout)
    users = [m["content"] for m in data["messages"] if m["role"] == "user"]
    replies = [m for m in data["messages"] if m["role"] == "assistant"]
    # Every message is kept whole, the 6k paste included, whatever was sent.
    assert users == [pasted_file() if t is None else t for t in TURNS]
    assert len(replies) == len(TURNS)
    assert all(m["status"] == "complete" for m in replies), [m["status"] for m in replies]
    assert data["summaries"], f"no compaction happened in 25 turns of a {N_CTX}-token window"
    assert any("compacted" in n or "压缩" in n for n in notices)
