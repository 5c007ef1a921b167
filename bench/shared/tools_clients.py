"""The workload and the three clients of bench/cost/tools.py: jarvis-tui's engine, a client that
sends the last 20 messages, and one that appends everything. All three run their tool calls
through the same McpHub (the real mcp-server-git), wrapped so that each output is recorded as
the hub returned it. Each client calls `on_turn()` before a turn, so the caller can cut the fake
server's request log by turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.shared.cache_clients import EN, ZH, chat_reply, summary_reply
from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.engine.engine import Engine
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.providers.toolcalls import openai_tools
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.store import Store
from jarvis_tui.core.tools.results import tool_definitions
from jarvis_tui.core.tools.rules import ANY
from jarvis_tui.core.tools.specs import ToolBox

SYSTEM = "You are Jarvis, a helpful assistant. Use the git tools to answer about the repository."
COMMITS = 60  # revision n of module.py has 8n functions: outputs from ~1k to ~19k tokens
MAX_STEPS = 10  # the engine's default tool_max_steps; the plain clients stop there too
TURN_TIMEOUT = 300.0  # seconds: a turn that takes longer counts as failed, never a hang


@dataclass
class Turn:
    text: str
    calls: list[tuple[str, dict]]  # what the fake model will call (the `call` lines)


def workload(turns: int, repo: Path) -> list[Turn]:
    """Ten kinds of turn in a cycle: four without tools (English and Chinese prose), four with
    one call and two with two calls, whose outputs range from 70 to ~19k tokens. Revisions and
    counts move with the turn, so no two calls are the same."""
    out = []
    used = {False: 0, True: 0}
    for i in range(turns):
        k = i % 10
        rp = {"repo_path": str(repo)}
        v = (i // 10) % 3  # each cycle asks in other words: a question asked again verbatim
        # is about the earlier turn, and recall would rightly bring that turn back
        plans = {
            1: (("When did the functions start adding the revision number? Read the log.",
                 "Who has been committing lately, and how often?",
                 "List the recent commit messages so I can write release notes.")[v],
                [("git_log", {**rp, "max_count": 15 + i})]),
            2: (("Show me what an early revision changed.",
                 "Which lines did that old commit touch?",
                 "I need the patch of a commit from the start of the project.")[v],
                [("git_show", {**rp, "revision": f"HEAD~{55 - i}"})]),
            4: (("What is changed in the working tree and not staged yet?",
                 "Did someone edit module.py without committing? Check status and diff.",
                 "Before I commit: status, and every unstaged hunk.")[v],
                [("git_status", rp), ("git_diff_unstaged", rp)]),
            5: (("Show me a late revision in full.",
                 "Open a recent commit, the whole patch.",
                 "What exactly went into that newer change?")[v],
                [("git_show", {**rp, "revision": f"HEAD~{30 - i}"})]),
            7: (("Compare the newest log entries with a middle revision.",
                 "Put the last few commits next to one from the middle of the history.",
                 "How do recent commit messages relate to that mid-project patch?")[v],
                [("git_log", {**rp, "max_count": 8}),
                 ("git_show", {**rp, "revision": f"HEAD~{50 - i}"})]),
            8: (("How far is the working tree from a few revisions back?",
                 "Diff my checkout against an older commit.",
                 "Everything that differs between the files on disk and a past revision.")[v],
                [("git_diff", {**rp, "target": f"HEAD~{1 + i // 10}"})]),
        }
        if k in plans:
            ask, calls = plans[k]
            lines = "\n".join(f"call {name} {json.dumps(args)}" for name, args in calls)
            out.append(Turn(f"Turn {i + 1}. {ask}\n{lines}", calls))
            continue
        zh = k in (3, 6)
        pool = ZH if zh else EN
        at, count = used[zh], 2 + i % 3
        used[zh] = at + count
        out.append(Turn((" " if not zh else "").join(pool[(at + j) % len(pool)]
                                                     for j in range(count)), []))
    return out


def reply_fn(body: dict) -> str:
    """Text replies (tool calls come from the fake's `call` directive): a summary for the
    engine's summary requests (unstreamed, no tools), else a chat reply in the user's language."""
    if not body.get("stream") and not body.get("tools"):
        return summary_reply(body)
    return chat_reply(body)


class Recorder(ToolBox):
    """The hub as a ToolBox, noting each output as the hub returned it."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self.outputs: list[tuple[str, ToolResult]] = []  # (call id, result)

    def specs(self) -> list[ToolSpec]:
        return self.hub.specs()

    def allowed(self, spec: ToolSpec) -> bool:
        return self.hub.allowed(spec)

    def timeout_for(self, spec: ToolSpec) -> float:
        return self.hub.timeout_for(spec)

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        result = await self.hub.run(call, spec)
        self.outputs.append((call.id, result))
        return result


@dataclass
class Run:
    name: str
    answered: list[bool] = field(default_factory=list)  # per turn
    errors: int = 0  # errors shown: a failed turn (the engine's Failed), a failed compaction
    compactions: int | None = None
    stub_events: int | None = None  # ToolOutputsPruned events (results stubbed: stubbed)
    stubbed: int = 0
    recalls: int = 0
    export_whole: tuple[int, int] | None = None  # (tool outputs stored whole, outputs)
    tool_errors: int = 0  # outputs the hub returned as errors (a wrong revision...)


async def plain(base_url: str, turns: list[Turn], box: Recorder, on_turn: Callable[[], None],
                *, keep_last: int | None, max_tokens: int, name: str) -> Run:
    """system + the last `keep_last` messages (None: all of them), tool calls and results
    counted as messages, the same tools offered on every request. One attempt per request: a
    refusal ends the turn (what was stored so far stays in the history)."""
    run = Run(name)
    history: list[dict] = []
    specs = {s.name: s for s in box.specs()}
    defs = openai_tools(tool_definitions(specs.values()))  # as the engine's provider sends them

    async def turn(client: httpx.AsyncClient, text: str) -> bool:
        history.append({"role": "user", "content": text})
        for _ in range(MAX_STEPS + 1):
            sent = history if keep_last is None else history[-keep_last:]
            resp = await client.post(f"{base_url}/chat/completions", json={
                "model": "fake", "max_tokens": max_tokens, "tools": defs,
                "messages": [{"role": "system", "content": SYSTEM}, *sent]})
            if resp.status_code != 200:
                return False
            msg = resp.json()["choices"][0]["message"]
            if not msg.get("tool_calls"):
                history.append({"role": "assistant", "content": msg.get("content") or ""})
                return True
            history.append({"role": "assistant", "content": msg.get("content"),
                            "tool_calls": msg["tool_calls"]})
            for c in msg["tool_calls"]:
                call = ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                result = await box.run(call, specs[call.name])
                history.append({"role": "tool", "tool_call_id": call.id,
                                "content": result.text})
        return False  # still calling tools after MAX_STEPS

    async with httpx.AsyncClient(timeout=120) as client:
        for t in turns:
            on_turn()
            try:
                async with asyncio.timeout(TURN_TIMEOUT):
                    ok = await turn(client, t.text)
            except (TimeoutError, httpx.HTTPError):
                ok = False
            run.answered.append(ok)
            run.errors += not ok
    run.tool_errors = sum(r.is_error for _, r in box.outputs)
    return run


async def engine(base_url: str, turns: list[Turn], box: Recorder, on_turn: Callable[[], None],
                 *, db: Path, window: int) -> Run:
    """jarvis-tui's engine as the app drives it (real provider, real store), default settings
    but the window, every tool of the hub allowed."""
    run = Run("jarvis-tui", compactions=0, stub_events=0)
    config = Settings(base_url=base_url, model="fake", system_prompt=SYSTEM,
                      context_window=window)
    async with OpenAIProvider(base_url) as provider:
        with Store(db) as store:
            eng = Engine(config, store, provider, tools=box)
            eng.tool_policy.allowed.add((ANY, ANY))
            for t in turns:
                on_turn()
                ok = False
                try:
                    async with asyncio.timeout(TURN_TIMEOUT):
                        async for event in eng.stream_reply(t.text):
                            if isinstance(event, ev.Failed | ev.CompactionFailed):
                                run.errors += 1
                            elif isinstance(event, ev.Finished):
                                ok = True
                            elif isinstance(event, ev.CompactionFinished):
                                run.compactions += 1
                            elif isinstance(event, ev.ToolOutputsPruned):
                                run.stub_events += 1
                                run.stubbed += event.count
                            elif isinstance(event, ev.Recalled):
                                run.recalls += 1
                except TimeoutError:
                    run.errors += 1
                run.answered.append(ok)
            exported = store.export(eng.conversation.id)
    # Nothing lost: every output the hub returned is in the export, whole, as its call's result.
    stored = {m["tool_call_id"]: m["content"] for m in exported["messages"]
              if m["role"] == "tool"}
    whole = sum(stored.get(call_id) == r.text for call_id, r in box.outputs if not r.is_error)
    run.tool_errors = sum(r.is_error for _, r in box.outputs)
    run.export_whole = (whole, len(box.outputs) - run.tool_errors)
    return run


def split_pair(messages: list[dict]) -> bool:
    """Whether a call and its result are apart: a result without its call just before it, or
    a call whose results do not all follow it (as tests/test_tool_round.assert_pairs_whole)."""
    asked: set[str] = set()
    for m in messages:
        if m.get("tool_calls"):
            if asked:
                return True
            asked = {c.get("id") for c in m["tool_calls"]}
        elif m.get("role") == "tool":
            if m.get("tool_call_id") not in asked:
                return True
            asked.discard(m.get("tool_call_id"))
        elif asked:
            return True
    return bool(asked)
