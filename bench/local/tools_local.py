"""Issue 27, item 3, for the record: MCP tools with --local. Does the bundled model (Qwen2.5-Coder
0.5B Instruct, Q4_K_M, under llama-cpp-python's server with the GGUF's own chat template) call a
tool when a question needs one, and leave the tools alone when it does not?

The tools are those a local session offers once a summary exists: the real definitions of
mcp-server-time (get_current_time, convert_time) and mcp-server-git (git_status, git_log), listed
through the app's MCP client, and search_history; the system message is the app's own with a
short summary under its header and search_history's note. Requests go through OpenAIProvider as
the app builds it for the local model (text_tool_calls), with the server's sampling as the app's
chat (or --temperature T), so a call counts only when the app would see one: a reply that is
wholly calls of offered tools.

Printed, with and without LOCAL_TOOL_SENTENCE after the prompt (as the engine sends the system
message to the local model while it has tools):
  right calls   of the NEED questions, those answered with a call of the right tool whose
                arguments are usable (the zone, the time, the repository asked about; a query)
  false calls   of the PLAIN questions, those answered with any call
  wrong calls   of the NEED questions, those answered with calls none of which is right (the
                user is asked to allow them all the same)
  call-shaped text  replies shown as text that hold a call of a tool not offered ("multiply")
and a full round for every right call of an MCP tool: the call run by the real server, its
result sent back (the assistant message with content "", the result as a tool message, tools
still offered, as the engine's next step does), and whether the answer then uses the result
(quotes a time the result gives, a commit's hash or subject, or the changed file); beside it, for
comparison only, the same result given as words under the question with no tools offered.

    .venv/bin/python bench/local/tools_local.py --model PATH.gguf      start a server on a free port
    .venv/bin/python bench/local/tools_local.py --base-url URL/v1      use one already running
    add --passes N to ask every question N times, --log FILE to keep the answers (and go on
    from them after a stop)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.providers.base import ChatDelta, ChatToolCall  # noqa: E402
from jarvis_tui.core.providers.local_server import (  # noqa: E402
    LOCAL_MODEL_NAME,
    LOCAL_TOOL_SENTENCE,
    LocalServer,
    free_port,
    local_model_path,
    with_tool_sentence,
)
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.settings.mcp import McpServerConfig  # noqa: E402
from jarvis_tui.core.tools.history_tool import HISTORY_SPEC, SUMMARY_NOTE  # noqa: E402
from jarvis_tui.core.tools.mcp_client import McpHub  # noqa: E402
from jarvis_tui.core.tools.results import tool_definitions, tool_result_message  # noqa: E402
from jarvis_tui.core.tools.specs import ToolSpec  # noqa: E402
from jarvis_tui.core.window.system_message import system_text  # noqa: E402
from tests.mcp_servers import make_git_repo  # noqa: E402

N_CTX = 4096
REPLY_TOKENS = 160  # enough for a call or the start of an answer; two cores write ~25 a second
SUMMARY = ("The user is preparing the 1.4 release of their project. They set up a staging "
           "server and we discussed how to deploy to it; they asked for release-note wording.")
MCP_TOOLS = ("get_current_time", "convert_time", "git_status", "git_log")
REPO = "{repo}"  # the questions' repository, filled in with the bench's own
QUICK = False  # --quick: one server and tool offered, no full round after a right call
# How each variant makes the system prompt: "with" as the engine does for the local model.
VARIANTS: dict[str, Callable[[str], str]] = {"without the sentence": lambda prompt: prompt,
                                             "with the sentence": with_tool_sentence}


@dataclass(frozen=True)
class Need:
    text: str
    tool: str
    usable: Callable[[dict, str], bool]  # (arguments, repository) -> usable as the user meant


def zone(name: str) -> Callable[[dict, str], bool]:
    return lambda args, _: args.get("timezone") == name


def convert(source: str, at: str, target: str) -> Callable[[dict, str], bool]:
    return lambda args, _: (args.get("source_timezone"), args.get("time"),
                            args.get("target_timezone")) == (source, at, target)


def repo(args: dict, path: str) -> bool:
    return str(args.get("repo_path", "")).rstrip("/") == path


def query(args: dict, _: str) -> bool:
    return isinstance(args.get("query"), str) and bool(args["query"].strip())


NEED = [
    Need("What time is it in Tokyo right now?", "get_current_time", zone("Asia/Tokyo")),
    Need("What's the current time in New York?", "get_current_time", zone("America/New_York")),
    Need("If it is 09:30 in London, what time is it in Sydney?", "convert_time",
         convert("Europe/London", "09:30", "Australia/Sydney")),
    Need(f"Show me the last 5 commits of the repository at {REPO}.", "git_log", repo),
    Need(f"Are there uncommitted changes in my repository at {REPO}?", "git_status", repo),
    Need("Earlier in this conversation I told you the staging server's port. Search our history "
         "and tell me what it was.", "search_history", query),
    Need("现在东京几点？", "get_current_time", zone("Asia/Tokyo")),
    Need("伦敦现在是几点？", "get_current_time", zone("Europe/London")),
    Need("北京时间 15:00 是纽约的几点？", "convert_time",
         convert("Asia/Shanghai", "15:00", "America/New_York")),
    Need(f"看看 {REPO} 这个仓库最近 3 次提交。", "git_log", repo),
    Need(f"{REPO} 仓库里有没有未提交的修改？", "git_status", repo),
    Need("我们之前聊过 staging 服务器的端口，帮我在历史记录里查一下是多少。", "search_history",
         query),
]
PLAIN = [
    "What is the capital of Italy?",
    "Explain in one sentence what a Git commit is.",
    "Write a Python function that reverses a string.",
    "What is 17 times 23?",
    "Translate 'good morning' into French.",
    "What does the HTTP status code 404 mean?",
    "意大利的首都是哪里？",
    "用一句话解释什么是 Git 分支。",
    "写一个 Python 函数，计算列表的平均值。",
    "17 乘以 23 等于多少？",
    "把“谢谢”翻译成英文。",
    "HTTP 状态码 500 是什么意思？",
]


class Temperature(httpx.AsyncHTTPTransport):
    """Chat requests sent at a set temperature (the app's chat sends none: the server's 0.8)."""

    def __init__(self, temperature: float) -> None:
        super().__init__()
        self.temperature = temperature

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/chat/completions"):
            body = {**json.loads(request.content), "temperature": self.temperature}
            headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
            request = httpx.Request(request.method, request.url, headers=headers, json=body,
                                    extensions=request.extensions)
        return await super().handle_async_request(request)


@dataclass
class Reply:
    text: str
    calls: list[ChatToolCall]
    seconds: float


async def ask(provider: OpenAIProvider, messages: list[dict], tools: list[dict]) -> Reply:
    started = time.perf_counter()
    events = [e async for e in provider.stream_chat(messages, model=LOCAL_MODEL_NAME,
                                                    max_tokens=REPLY_TOKENS, tools=tools)]
    text = "".join(e.text for e in events if isinstance(e, ChatDelta))
    calls = [e for e in events if isinstance(e, ChatToolCall)]
    return Reply(text, calls, time.perf_counter() - started)


def call_shaped(text: str) -> bool:
    return bool(re.search(r'"name"\s*:\s*"[^"]+"\s*,\s*"arguments"', text))


def result_data(tool: str, result: str) -> list[str]:
    """What an answer made from `result` would quote: the times it gives, the commits' hashes
    and subjects, the changed file."""
    if tool in ("get_current_time", "convert_time"):
        found = []
        for hh, mm in re.findall(r"T(\d\d):(\d\d)", result):
            h = int(hh)
            found += [f"{hh}:{mm}", f"{h}:{mm}", f"{h % 12 or 12}:{mm}"]
        return found
    if tool == "git_log":
        return ([h[:7] for h in re.findall(r"\b[0-9a-f]{40}\b", result)]
                + re.findall(r"Revision \d+:", result))
    return ["module.py"] if "module.py" in result else []


async def full_round(provider: OpenAIProvider, hub: McpHub, specs: dict[str, ToolSpec],
                     messages: list[dict], reply: Reply, tools: list[dict]) -> tuple[str, str]:
    """The answered call sent back with its result: what the model does next, as the engine
    sends it, and (for comparison, not what the app does) with the result given as words in
    the user's message and no tools offered."""
    calls = [ToolCall(c.id, c.name, c.arguments) for c in reply.calls]
    results = []
    for call in calls:
        result = await hub.run(call, specs[call.name])
        results.append((call, result))
    data = [d for call, r in results for d in result_data(call.name, r.text)]
    follow = [*messages, {"role": "assistant", "content": "",
                          "tool_calls": [c.wire() for c in calls]},
              *(tool_result_message(c, r.text, error=r.is_error).to_wire() for c, r in results)]
    as_engine = await ask(provider, follow, tools)
    told = "\n\n".join(f"The {c.name} tool returned:\n{r.text}" for c, r in results)
    as_words = await ask(provider, [messages[0], {"role": "user", "content": (
        f"{messages[1]['content']}\n\n{told}")}], [])
    return (judge("round", as_engine, calls, data, results),
            judge("round, result as words", as_words, calls, data, results))


def judge(label: str, again: Reply, calls: list[ToolCall], data: list[str],
          results: list) -> str:
    def key(c: ChatToolCall | ToolCall) -> tuple[str, str]:
        return c.name, json.dumps(json.loads(c.arguments), sort_keys=True)

    if again.calls:
        same = {key(c) for c in again.calls} == {key(c) for c in calls}
        outcome = "called the same again" if same else "called other tools"
        shown = "; ".join(f"{c.name} {c.arguments}" for c in again.calls)
    else:
        shown = again.text.replace("\n", " ")
        if any(r.is_error for _, r in results):
            outcome = "tool error"
        elif call_shaped(again.text):  # the result's figures may follow, but not as an answer
            outcome = "echoed a call as text"
        elif any(d in again.text for d in data):
            outcome = "answered from the result"
        else:
            outcome = "answered without the result"
    print(f"      {label}: {outcome}: {shown[:100]!r}")
    return outcome


async def ask_need(need: Need, system: str, provider: OpenAIProvider, hub: McpHub,
                   specs: dict[str, ToolSpec], tools: list[dict], path: str) -> dict:
    text = need.text.replace(REPO, path)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": text}]
    reply = await ask(provider, messages, tools)
    good = [c for c in reply.calls
            if c.name == need.tool and need.usable(json.loads(c.arguments), path)]
    record = {"right": bool(good), "wrong_call": bool(reply.calls) and not good,
              "call_shaped": call_shaped(reply.text), "did": did(reply),
              "wanted": need.tool}
    print(f"  {'right' if good else 'miss ':6}{reply.seconds:5.1f}s  {text[:48]:48}  "
          f"{record['did'][:110]}")
    if good and all(c.name in MCP_TOOLS for c in reply.calls) and not QUICK:
        record["round"], record["round_as_words"] = await full_round(
            provider, hub, specs, messages, reply, tools)
    return record


async def ask_plain(text: str, system: str, provider: OpenAIProvider,
                    tools: list[dict]) -> dict:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": text}]
    reply = await ask(provider, messages, tools)
    record = {"false": bool(reply.calls), "call_shaped": call_shaped(reply.text),
              "did": did(reply)}
    print(f"  {'FALSE' if reply.calls else 'ok':6}{reply.seconds:5.1f}s  {text[:48]:48}  "
          f"{record['did'][:110]}")
    return record


def did(reply: Reply) -> str:
    return ("; ".join(f"{c.name} {c.arguments}" for c in reply.calls)
            or f"text {reply.text[:70]!r}".replace("\\n", " "))


def share(flags: list[bool]) -> str:
    return f"{sum(flags):>2}/{len(flags):<3}{100 * sum(flags) / max(1, len(flags)):5.1f}%"


def halves(records: list[dict], key: str) -> str:
    """English and Chinese apart: the first six questions of each list are English."""
    en = [r[key] for r in records if r["i"] < 6]
    zh = [r[key] for r in records if r["i"] >= 6]
    return f"en {sum(en)}/{len(en)}, zh {sum(zh)}/{len(zh)}"


def report(records: list[dict], variants: dict[str, Callable[[str], str]]) -> None:
    print(f"\n{'':22}{'right calls':>20}{'false calls':>20}{'wrong calls':>20}"
          f"  {'call-shaped text':>16}")
    for name in variants:
        need = [r for r in records if r["variant"] == name and r["kind"] == "need"]
        plain = [r for r in records if r["variant"] == name and r["kind"] == "plain"]
        shaped = sum(r["call_shaped"] for r in need + plain)
        print(f"{name:22}{share([r['right'] for r in need]):>20}"
              f"{share([r['false'] for r in plain]):>20}"
              f"{share([r['wrong_call'] for r in need]):>20}  {shaped:>16}")
        print(f"{'':22}{halves(need, 'right'):>20}{halves(plain, 'false'):>20}"
              f"{halves(need, 'wrong_call'):>20}")
    for name in variants:
        for key, how in (("round", "as the engine sends it"),
                         ("round_as_words", "result as words, no tools (not the app's way)")):
            outcomes = [r[key] for r in records if r["variant"] == name and key in r]
            counts = {o: outcomes.count(o) for o in dict.fromkeys(outcomes)}
            print(f"full rounds, {name}, {how}: {len(outcomes)}: "
                  + ", ".join(f"{o} {n}" for o, n in counts.items()))
    for r in records:
        if r["kind"] == "need" and not r["right"]:
            print(f"  miss ({r['variant']}): {r['wanted']} -> {r['did'][:130]}")


async def tool_specs(repo_path: Path) -> tuple[McpHub, list[ToolSpec]]:
    servers = [
        McpServerConfig("time", "stdio", command=sys.executable, allow=("*",),
                        args=("-m", "mcp_server_time", "--local-timezone", "Europe/Berlin")),
        McpServerConfig("git", "stdio", command=sys.executable, allow=("*",),
                        args=("-m", "mcp_server_git", "--repository", str(repo_path)))]
    if QUICK:  # the first question's server and tool alone: the shortest prompt
        servers = servers[:1]
    hub = McpHub(servers, start_timeout=120.0)
    for status in await hub.start():
        if status.state != "ready":
            await hub.aclose()
            sys.exit(f"{status.name} did not start: {status.error}")
    if QUICK:
        return hub, [s for s in hub.specs() if s.name == NEED[0].tool]
    return hub, [s for s in hub.specs() if s.name in MCP_TOOLS] + [HISTORY_SPEC]


async def main_async(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    # --quick: the engine's variant alone, one question that needs a tool
    variants = {"with the sentence": VARIANTS["with the sentence"]} if args.quick else VARIANTS
    with tempfile.TemporaryDirectory() as tmp:
        path = str(make_git_repo(Path(tmp) / "jarvis", commits=6))
        server = None
        base_url = args.base_url
        if base_url is None:
            port = free_port()
            server = LocalServer(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(args.model),
                 "--n_ctx", str(N_CTX), "--host", "127.0.0.1", "--port", str(port)],
                port=port, log_path=Path(tmp) / "llama.log", startup_timeout=600)
            await server.start()
            base_url = server.base_url
        hub, offered = await tool_specs(Path(path))
        transport = None if args.temperature is None else Temperature(args.temperature)
        provider = OpenAIProvider(base_url, "", text_tool_calls=True, transport=transport,
                                  timeout=600, connect_timeout=10, first_token_timeout=600,
                                  reply_timeout=600)
        try:
            tools = tool_definitions(offered)
            specs = {s.name: s for s in offered}
            prompt = Settings().system_prompt
            sampling = ("the server's sampling (as the app)" if args.temperature is None
                        else f"temperature {args.temperature}")
            print(f"{args.model or 'the model'} at {base_url}, {sampling}, "
                  f"replies capped at {REPLY_TOKENS} tokens; tools offered: {', '.join(specs)}; "
                  f"{len(NEED)} questions needing a tool, {len(PLAIN)} not (half Chinese each), "
                  f"{args.passes} pass(es)")
            records = read_log(args.log)
            done = {(r["variant"], r["pass"], r["kind"], r["i"]) for r in records}
            for name, make_prompt in variants.items():
                system = system_text(make_prompt(prompt), SUMMARY, SUMMARY_NOTE)
                print(f"\n== {name}")
                for n in range(args.passes):
                    for kind, count in (("need", 1),) if args.quick else (
                            ("need", len(NEED)), ("plain", len(PLAIN))):
                        for i in range(count):
                            if (name, n, kind, i) in done:
                                continue
                            record = {"variant": name, "pass": n, "kind": kind, "i": i}
                            record.update(
                                await ask_need(NEED[i], system, provider, hub, specs, tools,
                                               path) if kind == "need"
                                else await ask_plain(PLAIN[i], system, provider, tools))
                            records.append(record)
                            if args.log is not None:
                                with args.log.open("a", encoding="utf-8") as log:
                                    log.write(json.dumps(record, ensure_ascii=False) + "\n")
        finally:
            await provider.aclose()
            await hub.aclose()
            if server is not None:
                server.stop()
    report([r for r in records if r["pass"] < args.passes], variants)
    print(f"\nthe sentence: {LOCAL_TOOL_SENTENCE!r}")
    print(f"wall time {time.perf_counter() - started:.0f} s")


def read_log(path: Path | None) -> list[dict]:
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="the GGUF file to serve")
    parser.add_argument("--base-url", help="a running llama-cpp-python server's /v1 address")
    parser.add_argument("--passes", type=int, default=1, help="times each question is asked")
    parser.add_argument("--temperature", type=float, help="send this temperature (the app sends "
                        "none for chat: the server's default)")
    parser.add_argument("--log", type=Path, help="a JSON-lines file of the answers: those already "
                        "in it are not asked again (a run that was stopped goes on)")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: the bundled model unless --model or --base-url, "
                             "one question needing a tool and that tool alone, the engine's "
                             "variant, 48-token replies, no full round")
    args = parser.parse_args()
    if args.quick:
        global REPLY_TOKENS, QUICK
        REPLY_TOKENS, QUICK = 48, True
        args.model = args.model or (None if args.base_url else local_model_path())
    if (args.model is None) == (args.base_url is None):
        parser.error("give --model or --base-url")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
