"""Attachments (issue 42), third figure: tokens a provider evaluates anew per new token over a
session that brings in files larger than the window, attached (each goes as its digest, and
the model reads the lines it needs with read_attachment) against pasted (the whole text in the
message, what a user does without attachments; the window and compaction then deal with it).

The same session both ways, against the repository's strict fake server over loopback (it
refuses a request over the window with OpenAI's 400, counts with tiktoken, and logs every
request whole): for each file (two service logs, English and Chinese, and a module of code;
each 1.5 to 3 times the window), one turn that brings it with a question, then two questions
about lines deep inside it. Each question's text is the same in both runs; it ends with a
`call read_attachment {...}` line the fake model follows where the tool is offered (40 lines
where the question points), and which is only words to it where it is not. That is the
model's reading scripted, one read per question: a real model may read more, or less.

Tokens evaluated anew: each request's tokens past the longest prefix it shares with the
request before it (what a prefix cache cannot serve), chat and summary requests alike
(bench/cost/cache_metrics.py). New tokens: what each answered turn added to the conversation,
as its last request sent it (the user's message, tool calls and results) and the reply.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.cost.cache_metrics import measure, request_label, request_tokens
from jarvis_tui.core import events as ev
from jarvis_tui.core.attach.message import Sending, message_with
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.session import ChatSession, Store
from jarvis_tui.core.settings.config import Settings
from tests.fakeserver import FakeProvider

ATTACH = "attached (digest + read_attachment)"
PASTE = "pasted whole (baseline)"


@dataclass
class Cost:
    mode: str
    requests: int = 0
    refused: int = 0
    compactions: int = 0
    failed: int = 0
    evaluated: int = 0
    new: int = 0

    @property
    def per_new(self) -> float:
        return self.evaluated / self.new if self.new else 0.0


def files(folder: Path, window: int) -> list[Path]:
    """Two service logs (English, Chinese) and a module of code, each larger than `window`."""
    scale = max(1, window // 4096)
    made = {
        "worker.log": "".join(f"2026-12-05T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO worker "
                              f"{i % 7}: job {i} done in {i * 37 % 900} ms\n"
                              for i in range(500 * scale)),
        "网关.log": "".join(f"2026-12-05 11:{i // 60 % 60:02d}:{i % 60:02d} 警告 网关：第 {i} 个"
                          f"请求超时，重试 {i % 3} 次后成功\n" for i in range(420 * scale)),
        "orders.py": "".join(f"def order_{i}(cart, user):\n    \"\"\"Price order {i}.\"\"\"\n"
                             f"    total = sum(item.price for item in cart) * {1 + i % 5}\n"
                             f"    return user.discount(total, code='SAVE{i}')\n\n\n"
                             for i in range(160 * scale)),
    }
    paths = []
    for name, text in made.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def questions(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").count("\n")
    asked = []
    for share, words in ((0.1, "What does this file show?"),
                         (0.55, "What happened around line {n}?"),
                         (0.9, "And near line {n}, close to the end?")):
        n = int(lines * share)
        call = json.dumps({"path": path.name, "first_line": n, "last_line": n + 39},
                          ensure_ascii=False)
        asked.append(f"{words.format(n=n)}\ncall read_attachment {call}")
    return asked


async def run(mode: str, window: int, folder: Path) -> Cost:
    cost = Cost(mode)
    with FakeProvider(limit=window) as fake, Store(folder / f"{mode[:6]}.db") as store:
        settings = Settings(base_url=fake.base_url, model="bench-model", context_window=window,
                            response_reserve=512, system_reserve=256)
        session = ChatSession(settings, store, make_provider)
        starts: list[int] = []
        try:
            for path in files(folder, window):
                for i, text in enumerate(questions(path)):
                    starts.append(len(fake.requests))
                    if i == 0:
                        question = (message_with(text, session.as_sent(
                            [Sending(read_path(path, folder))])) if mode == ATTACH else
                            pasted(path, text))
                    else:
                        question = Message("user", text)
                    async for event in session.stream_reply(question):
                        if isinstance(event, ev.CompactionFinished):
                            cost.compactions += 1
                        elif isinstance(event, ev.Failed):
                            cost.failed += 1
        finally:
            await session.aclose()
        requests = list(fake.requests)
    stats = measure(requests, starts, len(starts))
    cost.requests = sum(r.path.endswith("/chat/completions") for r in requests)
    cost.refused = stats.refused
    cost.evaluated = sum(fresh for _, fresh in stats.evaluated)
    cost.new = new_tokens(requests, starts)
    return cost


def pasted(path: Path, question: str) -> Message:
    text = path.read_text(encoding="utf-8") + "\n\n"
    return Message("user", text + question, pasted=((0, len(text)),))


def new_tokens(requests: list, starts: list[int]) -> int:  # noqa: ANN001
    """Per turn, its last answered chat request's messages from the user's on (the message,
    tool calls, tool results) and the reply."""
    total = 0
    for turn, start in enumerate(starts):
        end = starts[turn + 1] if turn + 1 < len(starts) else len(requests)
        answered = [r for r in requests[start:end] if r.status == 200
                    and r.path.endswith("/chat/completions") and r.body.get("stream", True)
                    is not False and request_label(r.body) == "chat"]
        if not answered:
            continue
        rec = answered[-1]
        messages = rec.body["messages"]
        user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        tools = rec.body.get("tools")
        total += (len(request_tokens(messages, tools))
                  - len(request_tokens(messages[:user], tools)) + rec.completion_tokens)
    return total


def session_costs(window: int) -> list[Cost]:
    with tempfile.TemporaryDirectory() as tmp:
        return [asyncio.run(run(mode, window, Path(tmp))) for mode in (ATTACH, PASTE)]


def report(window: int) -> None:
    print(f"\n3. A session bringing in three files larger than the window ({window:,}), three "
          "questions each: tokens evaluated anew per new token, attached against pasted")
    print(f"{'':38}{'requests':>9}{'refused':>8}{'compactions':>12}{'failed':>7}"
          f"{'evaluated':>11}{'new':>9}{'per new':>9}")
    for c in session_costs(window):
        print(f"{c.mode:38}{c.requests:>9}{c.refused:>8}{c.compactions:>12}{c.failed:>7}"
              f"{c.evaluated:>11,}{c.new:>9,}{c.per_new:>9.2f}")
    print("target: attached no worse than pasted")
