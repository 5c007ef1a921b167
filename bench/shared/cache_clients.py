"""The workload and the three clients of bench/cost/cache.py: jarvis-tui's engine, a client that
appends the whole history, and the "last 20 messages" client. Each takes a base URL and calls
`on_turn()` before each turn, so the caller can cut its request log (or a server's log) by turn.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from jarvis_tui.core import events as ev
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.messages import COMPLETE
from jarvis_tui.core.providers import make_provider
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.store import Store
from tests.fakeserver import count_tokens, fit_reply

SYSTEM = "You are Jarvis, a helpful assistant. Answer in the user's language."
CJK = re.compile(r"[\u3400-\u9fff]")

DATA = Path(__file__).resolve().parents[1] / "data"


def _sentences(name: str, end: str) -> list[str]:
    text = " ".join((DATA / name).read_text(encoding="utf-8").split())
    return [t.strip() for t in re.split(f"(?<=[{end}])", text) if len(t.strip()) > 8]


# The user's prose: natural text, each turn the next few sentences, so no two turns say the
# same thing (people do not repeat whole sentences; a workload that does would make recall
# bring back the turn it repeats, rightly, and measure that instead of the cache).
EN = _sentences("english.txt", ".!?")
ZH = _sentences("chinese.txt", "。！？")
EN_REPLY = ["That is a fair question, and the short answer is that it depends on the server.",
            "The request keeps the oldest turns only as long as they fit the budget.",
            "A provider's prompt cache only helps when the new request starts with the old one.",
            "I would keep the system message fixed and add new material at the end.",
            "If the server refuses the request, the client should compact and try again.",
            "Storing every message means nothing is lost even when the summary is wrong.",
            "For the release, the Linux and macOS builds both need the same test matrix.",
            "Let me know if you want a shorter summary or more detail on any point."]
ZH_REPLY = ["这个问题问得好，简单地说，要看服务器怎么实现。",
            "请求里只保留放得下的旧对话，其余的折叠进摘要。",
            "提供方的前缀缓存只有在新请求以旧请求开头时才有用。",
            "我建议系统消息保持不变，新的内容追加在末尾。",
            "如果服务器拒绝请求，客户端应该先压缩，再重试一次。",
            "所有消息都存下来，即使摘要写错了，也不会丢失原文。",
            "发布之前，Linux 和 macOS 的构建都要跑同一套测试。",
            "如果你想要更短的摘要，或者某一点想展开，告诉我就好。"]


@dataclass
class Turn:
    kind: str  # "prose", "code", "json" or "huge" (a paste larger than the window)
    text: str


def _grow(make: Callable[[int], str], tokens: int, joiner: str = "\n") -> str:
    """Pieces make(0), make(1), ... joined until the text reaches `tokens` (cl100k)."""
    pieces: list[str] = []
    step = 16  # count every 16 pieces: counting each of thousands would dominate the run
    while not pieces or count_tokens(joiner.join(pieces)) < tokens:
        pieces.extend(make(len(pieces) + k) for k in range(step))
    return joiner.join(pieces)


def _code(i: int) -> str:
    return (f"def handler_{i}(request, retries={i % 5}):\n"
            f"    \"\"\"Answer route {i}; log and retry on a timeout.\"\"\"\n"
            f"    return respond(request, code={200 + i % 7}, cache_key='r{i}')\n")


def _record(i: int) -> str:
    return json.dumps({"id": i, "user": f"user{i % 37}", "city": ["北京", "Berlin", "上海",
                       "Lisbon"][i % 4], "score": round(i * 1.37 % 100, 2),
                       "tags": ["cache", "window", "summary"][: 1 + i % 3]},
                      ensure_ascii=False) + ","


HUGE_AT = (25, 47)


def workload(turns: int, window: int) -> list[Turn]:
    """Prose in both languages, code and JSON pastes scaled to the window, and at turns 25 and
    47 a paste 1.3x the window (it has to be cut to be sent at all)."""
    out = []
    used = {False: 0, True: 0}  # sentences used so far, English and Chinese
    for i in range(turns):
        if i in HUGE_AT:
            out.append(Turn("huge", "Here is the whole service log, find the failure:\n"
                            + _grow(_code, int(window * 1.3))))
        elif i % 10 == 4:
            out.append(Turn("code", "Please review this module:\n```python\n"
                            + _grow(_code, int(window * 0.12)) + "```"))
        elif i % 10 == 8:
            out.append(Turn("json", "These are the records from the export:\n["
                            + _grow(_record, int(window * 0.08)) + "]"))
        else:
            pool = ZH if i % 2 else EN
            # 2 to 5 sentences, the ones after the last turn in that language: 40-200 tokens.
            at, count = used[pool is ZH], 2 + i % 4
            picked = [pool[(at + k) % len(pool)] for k in range(count)]
            used[pool is ZH] = at + count
            out.append(Turn("prose", (" " if pool is EN else "").join(picked)))
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def request_kind(body: dict) -> str:
    """"chat", "summary" or "probe". The engine's summary calls go through provider.complete,
    which never streams, while its chat requests and both plain clients' always do: this holds
    whatever the summary request's messages look like. The one other unstreamed request is the
    provider's one-token probe behind an empty llama-cpp-python stream."""
    if body.get("stream") is True:
        return "chat"
    return "probe" if int(body.get("max_tokens") or 0) == 1 else "summary"


def summary_reply(body: dict) -> str:
    """A short summary, whatever the request looks like (a transcript in one user message, or
    the chat itself followed by an instruction): the head of each user turn, at most 150 tokens."""
    heads = []
    for m in body["messages"][1:]:
        if m.get("role") != "user":
            continue
        text = _text(m.get("content"))
        lines = [ln[6:] for ln in text.splitlines() if ln.startswith("User: ")] or [text]
        heads.extend(ln[:40] for ln in lines)
    return fit_reply("Summary: " + "; ".join(heads), 150)[0]


def chat_reply(body: dict) -> str:
    """A reply in the user's language, 4 to 9 sentences (about 80-250 tokens), the same for the
    same user text whichever client sent it (so the clients' histories stay comparable)."""
    users = [m for m in body["messages"] if m.get("role") == "user"]
    text = _text(users[-1].get("content")) if users else ""
    seed = zlib.crc32(text[:200].encode("utf-8"))
    zh = bool(CJK.search(text[:200]))
    pool = ZH_REPLY if zh else EN_REPLY
    echo = text.split("\n", 1)[0][:40]
    sentences = [pool[(seed + k) % len(pool)] for k in range(4 + seed % 6)]
    if "```" in text or text.startswith("These are the records"):
        sentences.insert(1, "```python\nreturn respond(request, code=200)\n```")
    head = f"关于“{echo}”：" if zh else f"About \"{echo}\": "
    return head + ("" if zh else " ").join(sentences)


def reply_fn(body: dict) -> str:
    return summary_reply(body) if request_kind(body) == "summary" else chat_reply(body)


@dataclass
class Run:
    name: str
    answered: list[bool] = field(default_factory=list)  # per turn attempted
    errors: int = 0  # turns that ended in an error (the engine's Failed, a plain client's 400)
    compactions: int | None = None  # the engine's CompactionFinished events
    recalls: int = 0  # turns whose request carried recalled turns
    stored: tuple[int, int] | None = None  # (messages the store holds intact, messages expected)
    memory_tokens: list[int] = field(default_factory=list)  # the engine's memory section, by turn


async def _ask(client: httpx.AsyncClient, base_url: str, messages: list[dict],
               max_tokens: int, model: str) -> str | None:
    """One streamed request, as a chat client sends it; None if it was refused or cut."""
    body = {"model": model, "messages": messages, "max_tokens": max_tokens, "stream": True}
    parts, finished = [], False
    try:
        async with client.stream("POST", f"{base_url}/chat/completions", json=body) as resp:
            if resp.status_code != 200:
                await resp.aread()
                return None
            async for line in resp.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[6:]).get("choices") or []:
                    parts.append((choice.get("delta") or {}).get("content") or "")
                    finished = finished or bool(choice.get("finish_reason"))
    except (httpx.HTTPError, ValueError):
        return None  # llama-cpp-python refuses an overflowing stream by dropping it
    return "".join(parts) if finished else None


async def plain(base_url: str, turns: list[Turn], on_turn: Callable[[], None], *,
                keep_last: int | None, max_tokens: int, name: str, model: str = "fake") -> Run:
    """keep_last=None: the whole history every time, and the first refusal ends the run (the
    floor for fresh tokens while it lasts). keep_last=20: system + the last 20 messages; a
    refused turn stays in the history, as in bench/cost/conversation.py."""
    run = Run(name)
    history: list[dict] = []
    async with httpx.AsyncClient(timeout=600) as client:
        for turn in turns:
            on_turn()
            history.append({"role": "user", "content": turn.text})
            sent = history if keep_last is None else history[-keep_last:]
            reply = await _ask(client, base_url, [{"role": "system", "content": SYSTEM}] + sent,
                               max_tokens, model)
            run.answered.append(reply is not None)
            if reply is None:
                run.errors += 1
                if keep_last is None:
                    break
                continue
            history.append({"role": "assistant", "content": reply})
    return run


# A user's memory as it grows in a working month (issue 29): preferences, standing
# instructions, names and roles, decisions, in both languages.
MEMORY = ("Answer in Chinese, but keep code comments in English.",
          "Our staging cluster runs in Frankfurt (eu-central-1); production is in Dublin.",
          "我负责支付服务，Lena 是后端负责人，周报每周五下午发。",
          "Prefer pytest over unittest; tests live under tests/ next to the package.",
          "数据库迁移一律用 alembic，不要手写 SQL。",
          "The release branch is cut every second Tuesday; hotfixes go to release/*.",
          "Never suggest force-pushing to main.",
          "我的笔记本是 macOS，服务器是 Ubuntu 22.04。")


async def engine(base_url: str, turns: list[Turn], on_turn: Callable[[], None], *, db: Path,
                 memory: tuple[str, ...] = (), **settings: Any) -> Run:
    """jarvis-tui's engine as the app drives it: the provider as the app makes it for the
    model (the bundled one's summary sampling), a real store, holding `memory` (the user's
    memory entries, sent at the front of every request)."""
    run = Run("jarvis-tui engine", compactions=0)
    config = Settings(base_url=base_url, system_prompt=SYSTEM, **settings)
    async with make_provider(config) as provider:
        with Store(db) as store:
            for text in memory:
                store.add_memory(text, kind="preference")
            eng = Engine(config, store, provider)
            for turn in turns:
                on_turn()
                ok = False
                async for event in eng.stream_reply(turn.text):
                    if isinstance(event, ev.Failed):
                        run.errors += 1
                    elif isinstance(event, ev.Finished):
                        ok = True
                    elif isinstance(event, ev.CompactionFinished):
                        run.compactions += 1
                    elif isinstance(event, ev.Recalled):
                        run.recalls += 1
                run.answered.append(ok)
                run.memory_tokens.append(eng.front.memory_sent().tokens)
            stored = store.messages(eng.conversation.id)
    users = [m.content for m in stored if m.role == "user"]
    intact = sum(a == t.text for a, t in zip(users, turns, strict=False))  # a lost one is fewer
    replies = sum(m.role == "assistant" and m.status == COMPLETE and bool(m.content)
                  for m in stored)
    run.stored = (intact + min(replies, len(turns)), 2 * len(turns))
    return run
