"""The words the user sees about what the engine did, in English and Chinese.

Shared by the command line and the TUI so both say the same thing.
"""

from __future__ import annotations

import re

from jarvis_tui.core import costs
from jarvis_tui.core import events as ev
from jarvis_tui.core.calls.specs import ToolCall
from jarvis_tui.core.messages import READ_TOOL
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
from jarvis_tui.core.tools.history_tool import is_history_search, shown_query

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

TEXTS = {
    "en": {
        "compacting": "📦 Compacting: summarising {n} earlier messages…",
        "compacted": "📦 Conversation compacted: earlier turns summarised "
                     "({n} messages, {before} → {after} tokens){cost}",
        "compact_cost": "; the summary cost {prompt} prompt + {reply} reply tokens",
        "compact_cost_cached": "; the summary cost {prompt} prompt tokens (the conversation's "
                               "own, from the provider's cache) + {reply} reply tokens",
        "compact_failed": "⚠ Compaction failed ({why}); sending with plain windowing, "
                          "history is intact",
        "retrying": "↻ {reason}: retrying in {delay:.1f}s (attempt {attempt})",
        "limit": "ℹ The server's context window is {tokens} tokens (was {previous}); "
                 "using it from now on",
        "limit_suspect": "ℹ The server says its context window is only {tokens} tokens (was "
                         "{previous}), which looks wrong: using it for this session, and "
                         "keeping it only if a server says so again",
        "busy": "⏳ Another jarvis-tui{who} is answering in this session; waiting for it to "
                "finish…",
        "changed": "↻ Another jarvis-tui added {n} message{s} to this session; they are part of "
                   "the conversation now",
        "save_delayed": "⏳ The session database is locked by another program; the reply is "
                        "kept and saved as soon as the lock frees",
        "manual_failed": "📦 Nothing compacted: {why}",
        "held_stalled": "⚠ Compaction freed only {freed} tokens, too little to help, so it "
                        "stops for this turn: the newest turns that fit are sent as they are",
        "held_repeated": "⚠ Compaction came back to the turns it had just folded in, so it "
                         "stops for this turn: the newest turns that fit are sent as they are",
        "held_small": "⚠ Only {freed} tokens of older turns are left to summarise, too few to "
                      "make room, so nothing is summarised this turn: the newest turns that fit "
                      "are sent as they are",
        "held_paused": "⚠ Automatic compaction is paused: the last {n} summaries failed. The "
                       "newest turns that fit are sent; /compact, or a change of settings, "
                       "starts it again",
        "trimmed": "✂ Nothing left to compact; retrying with a smaller window ({budget} tokens)",
        "detected": "ℹ The server runs this model with a {tokens}-token context window",
        "truncated": "⚠ The server silently cut the request: it read {read} of about {sent} "
                     "tokens, dropping the oldest part. Compacting so nothing is forgotten",
        "failed": "✖ {why}",
        "empty": "ℹ The model sent an empty reply",
        "recalled": "↺ Recalled {n} earlier turn{s} from before the summary for this question "
                    "({tokens} tokens)",
        "recalled_other": "↺ Recalled {n} turn{s} from other sessions for this question: "
                          "{sessions} ({tokens} tokens)",
        "recalled_both": "↺ Recalled {own} earlier turn{own_s} from before the summary and {n} "
                         "from other sessions for this question: {sessions} ({tokens} tokens)",
        "memory_suggested": "💡 {n} thing{s} you said {look} worth remembering: F6 (Memory) to "
                            "review {them}; nothing is remembered without your yes",
        "length": "ℹ The reply stopped at the response reserve (max_tokens); raise "
                  "response_reserve for longer replies",
        "usage": "usage: prompt {prompt} tokens{cached} · completion {completion}",
        "usage_cached": " ({n} cached, {share})",
        "usage_written": " ({n} written to the cache)",
        "usage_no_cache": " (cache not reported)",
        "usage_none": "usage: the server reported no token counts",
        "usage_compaction": "compaction: {n} requests, prompt {prompt} · completion {completion}",
        "usage_partly": " (a model has no price; its part is not counted)",
        "tool_started": "⚙ {tool} {args}",
        "history_searched": "↺ searched earlier turns: {query}",
        "attachment_read": "📎 read {path}, {lines}",
        "lines_range": "lines {first}-{last}",
        "lines_from": "from line {first}",
        "tool_done": "✓ {tool}: {chars} characters in {seconds:.1f}s",
        "tool_error": "✗ {tool} failed: {why}",
        "tool_denied": "⊘ {tool} was not run: {why}",
        "tool_cancelled": "■ {tool} was stopped",
        "tool_limit": "⚠ The model asked for tools {n} times in a row for this message; it is "
                      "asked to answer with what it has (tool_max_steps)",
        "tool_pruned": "✂ {n} older tool output{s} sent as one-line stubs from now on (freed "
                       "{freed} tokens); they stay whole in the session",
        "tool_left_out": "⚠ The provider refused the definition of the tool {tool}{server}: "
                         "{why}. Asking again without it; it stays left out while its server "
                         "describes it the same way",
        "tools_heavy": "⚠ The definitions of {n} tools take {tokens} of the {budget}-token "
                       "budget, and go with every request: little is left for the conversation. "
                       "Turn off servers you do not need (enabled = false) or use a larger "
                       "context window",
        "tools_local": "ℹ The bundled local model ({model}) seldom calls a tool when a question "
                       "needs one and rarely answers from a tool's result; every call still asks "
                       "you first. For tools, use a remote model (README, \"Run offline\")",
    },
    "zh": {
        "compacting": "📦 正在压缩：摘要 {n} 条较早的消息…",
        "compacted": "📦 对话已压缩，早期内容已摘要（{n} 条消息，{before} → {after} tokens）{cost}",
        "compact_cost": "；摘要花费 {prompt} 个输入 token + {reply} 个输出 token",
        "compact_cost_cached": "；摘要花费 {prompt} 个输入 token（沿用对话本身的前缀，"
                               "由服务商缓存）+ {reply} 个输出 token",
        "compact_failed": "⚠ 压缩失败（{why}）；本轮按 token 窗口发送，历史记录完好",
        "retrying": "↻ {reason}：{delay:.1f} 秒后重试（第 {attempt} 次）",
        "limit": "ℹ 服务器的上下文窗口为 {tokens} tokens（原设置 {previous}），已采用",
        "limit_suspect": "ℹ 服务器称其上下文窗口只有 {tokens} tokens（原设置 {previous}），"
                         "这看起来不对：仅在本会话中使用，服务器再次这样说才会保留",
        "busy": "⏳ 另一个 jarvis-tui{who}正在这个会话中回答；等待它完成…",
        "changed": "↻ 另一个 jarvis-tui 向这个会话添加了 {n} 条消息；它们已成为对话的一部分",
        "save_delayed": "⏳ 会话数据库被另一个程序锁住；回复已保留，锁一释放就保存",
        "manual_failed": "📦 未压缩：{why}",
        "held_stalled": "⚠ 压缩只腾出了 {freed} 个 token，作用太小，本轮不再压缩："
                        "直接发送放得下的最新对话",
        "held_repeated": "⚠ 压缩又回到了刚刚并入摘要的对话，本轮不再压缩："
                         "直接发送放得下的最新对话",
        "held_small": "⚠ 较早的对话只剩 {freed} 个 token 可摘要，腾不出空间，本轮不做摘要："
                      "直接发送放得下的最新对话",
        "held_paused": "⚠ 自动压缩已暂停：最近 {n} 次摘要都失败了。将发送放得下的最新对话；"
                       "执行 /compact 或修改设置即可重新开始",
        "trimmed": "✂ 已无可压缩内容；缩小窗口后重试（{budget} tokens）",
        "detected": "ℹ 服务器以 {tokens} tokens 的上下文窗口运行此模型",
        "truncated": "⚠ 服务器悄悄截断了请求：约 {sent} tokens 只读取了 {read}，丢掉了最早的部分。"
                     "正在压缩对话，避免遗忘",
        "failed": "✖ {why}",
        "empty": "ℹ 模型返回了空回复",
        "recalled": "↺ 已为这个问题找回摘要之前的 {n} 轮原始对话（{tokens} 个 token）",
        "recalled_other": "↺ 已为这个问题从其他会话找回 {n} 轮原始对话：{sessions}"
                          "（{tokens} 个 token）",
        "recalled_both": "↺ 已为这个问题找回摘要之前的 {own} 轮原始对话，以及其他会话的 {n} 轮："
                         "{sessions}（{tokens} 个 token）",
        "memory_suggested": "💡 你说过的 {n} 件事似乎值得记住：按 F6（记忆）审阅；"
                            "未经你同意不会记住任何内容",
        "length": "ℹ 回复在响应预留（max_tokens）处被截断；如需更长的回复，请调大 response_reserve",
        "usage": "用量：提示 {prompt} token{cached} · 输出 {completion}",
        "usage_cached": "（缓存 {n}，{share}）",
        "usage_written": "（写入缓存 {n}）",
        "usage_no_cache": "（缓存未报告）",
        "usage_none": "用量：服务器未报告 token 数",
        "usage_compaction": "压缩：{n} 次请求，提示 {prompt} · 输出 {completion}",
        "usage_partly": "（有模型未设价格，未计入）",
        "tool_started": "⚙ {tool} {args}",
        "history_searched": "↺ 搜索了较早的对话：{query}",
        "attachment_read": "📎 读取了 {path} {lines}",
        "lines_range": "第 {first}-{last} 行",
        "lines_from": "第 {first} 行起",
        "tool_done": "✓ {tool}：{chars} 个字符，用时 {seconds:.1f} 秒",
        "tool_error": "✗ {tool} 失败：{why}",
        "tool_denied": "⊘ {tool} 未运行：{why}",
        "tool_cancelled": "■ {tool} 已停止",
        "tool_limit": "⚠ 模型为这条消息已连续调用工具 {n} 次；现在请它根据已有结果作答"
                      "（tool_max_steps）",
        "tool_pruned": "✂ {n} 个较早的工具输出此后以一行摘要发送（腾出 {freed} 个 token）；"
                       "会话中仍完整保存",
        "tool_left_out": "⚠ 服务商拒绝了工具 {tool}{server} 的定义：{why}。已去掉它重新请求；"
                         "在其服务器给出同样的定义期间，它不再提供给模型",
        "tools_heavy": "⚠ {n} 个工具的定义占用了 {budget} token 预算中的 {tokens} 个，"
                       "且每次请求都要发送，留给对话的空间很少。请关闭不需要的服务器"
                       "（enabled = false），或使用更大的上下文窗口",
        "tools_local": "ℹ 内置的本地模型（{model}）在需要工具时很少调用工具，也很少根据工具结果"
                       "作答；每次调用仍会先征得你的同意。需要工具时请使用远程模型"
                       "（README，“Run offline”）",
    },
}


def usage_line(usage: costs.Counts | None, language: str = "en", *,
               price: costs.Price | None = None,
               compaction: costs.CompactionCost | None = None,
               compaction_price: costs.Price | None = None) -> str:
    """One line of what a round cost: the answered request's counts (None: the server gave
    none), a compaction it ran first, and the money where the models are priced."""
    t = TEXTS.get(language, TEXTS["en"])
    parts = []
    amounts: dict[str, float] = {}
    unpriced = False
    if usage is None:
        parts.append(t["usage_none"])
    else:
        cached = usage.cached_tokens
        if cached is None:
            said = t["usage_no_cache"]
        else:
            whole = usage.prompt_tokens
            said = t["usage_cached"].format(n=costs.tokens(cached), share=costs.share(
                cached / whole if whole > 0 else 0.0))
        if usage.cache_write_tokens:
            said += t["usage_written"].format(n=costs.tokens(usage.cache_write_tokens))
        parts.append(t["usage"].format(prompt=costs.tokens(usage.prompt_tokens), cached=said,
                                       completion=costs.tokens(usage.completion_tokens)))
        if price is not None:
            amounts[price.currency] = costs.cost(
                price, usage.prompt_tokens, usage.completion_tokens, cached,
                usage.cache_write_tokens)
        unpriced = price is None
    if compaction is not None and compaction.requests:
        c = compaction
        parts.append(t["usage_compaction"].format(
            n=c.requests, prompt=costs.tokens(c.prompt_tokens),
            completion=costs.tokens(c.completion_tokens)))
        if compaction_price is not None:
            amounts[compaction_price.currency] = amounts.get(compaction_price.currency, 0.0) + \
                costs.cost(compaction_price, c.prompt_tokens, c.completion_tokens,
                           c.cached_tokens, c.cache_write_tokens)
        unpriced = unpriced or compaction_price is None
    if amounts:
        parts.append(costs.moneys(amounts) + (t["usage_partly"] if unpriced else ""))
    return " · ".join(parts)


HEAVY_TOOLS_SHARE = 1 / 3  # of the budget: tool definitions past this crowd the conversation out


def tools_weight(tools: int, tokens: int, budget: int, language: str = "en") -> str | None:
    """A warning when the tools' definitions, sent with every request, take much of the budget
    (23 tools can be two thirds of a 4,096-token window); None when they do not."""
    if tools == 0 or tokens <= budget * HEAVY_TOOLS_SHARE:
        return None
    t = TEXTS.get(language, TEXTS["en"])
    return t["tools_heavy"].format(n=tools, tokens=f"{tokens:,}", budget=f"{budget:,}")


def tools_warnings(model: str, tools: int, tokens: int, budget: int,
                   language: str = "en") -> list[str]:
    """What to tell the user once tools are offered: their definitions crowding the budget, and
    that the bundled local model does not use them well (bench/local/tools_local.py)."""
    lines = [tools_weight(tools, tokens, budget, language)]
    if tools and model == LOCAL_MODEL_NAME:
        lines.append(TEXTS.get(language, TEXTS["en"])["tools_local"].format(model=model))
    return [line for line in lines if line]


def pick_language(setting: str, sample: str = "") -> str:
    """`en` or `zh`: the setting if it names one, otherwise Chinese when the text is Chinese."""
    if setting in TEXTS:
        return setting
    return "zh" if _CJK.search(sample) else "en"


def searched_line(call: ToolCall, language: str = "en") -> str:
    """The one line a call of the built-in search_history is shown as, here and in the TUI."""
    return TEXTS.get(language, TEXTS["en"])["history_searched"].format(query=shown_query(call))


def builtin_line(call: ToolCall, language: str = "en") -> str | None:
    """The one line a call of a built-in tool (search_history, read_attachment) is shown as,
    here and in the TUI; None for any other tool, or a read whose arguments say nothing."""
    if is_history_search(call.name):
        return searched_line(call, language)
    if call.name != READ_TOOL:
        return None
    try:
        args = call.parsed()
    except ValueError:
        return None
    path, first, last = args.get("path"), args.get("first_line") or 1, args.get("last_line")
    if not isinstance(path, str):
        return None
    t = TEXTS.get(language, TEXTS["en"])
    lines = (t["lines_range"].format(first=first, last=last) if last
             else t["lines_from"].format(first=first))
    return t["attachment_read"].format(path=" ".join(path.split())[:120], lines=lines)


def _s(n: int) -> str:
    """English's plural ending for `n` ("1 turn", "2 turns"); the Chinese lines leave it out."""
    return "" if n == 1 else "s"


def describe(event: ev.Event, language: str = "en") -> str | None:
    """One line for an event the user should hear about, or None for the quiet ones."""
    t = TEXTS.get(language, TEXTS["en"])
    for family in (_compaction_line, _round_line, _tool_line):
        if (line := family(event, t, language)) is not None:
            return line
    return None


def _compaction_line(event: ev.Event, t: dict[str, str], language: str) -> str | None:
    """Compacting, and what it did or why it could not."""
    match event:
        case ev.CompactionStarted(messages=n):
            return t["compacting"].format(n=n)
        case ev.CompactionFinished(covered_messages=n, tokens_before=b, tokens_after=a):
            cost = ""
            if event.calls:
                key = "compact_cost_cached" if event.cached_prefix else "compact_cost"
                cost = t[key].format(prompt=f"{event.cost_prompt_tokens:,}",
                                     reply=f"{event.cost_completion_tokens:,}")
            return t["compacted"].format(n=n, before=b, after=a, cost=cost)
        case ev.CompactionFailed(error=why, reason="manual"):
            return t["manual_failed"].format(why=why)
        case ev.CompactionFailed(error=why):
            return t["compact_failed"].format(why=why)
        case ev.CompactionHeld(why=why, freed=freed, failures=n):
            return t[f"held_{why}"].format(freed=f"{max(freed, 0):,}", n=n)
    return None


def _round_line(event: ev.Event, t: dict[str, str], language: str) -> str | None:
    """What a round learns of the server, the window, the session and recall; how it ends."""
    match event:
        case ev.Retrying(reason=reason, attempt=attempt, delay_s=delay):
            # Provider messages end in a full stop; the notice continues after them.
            return t["retrying"].format(reason=reason.rstrip("."), attempt=attempt, delay=delay)
        case ev.ContextLimitLearned(tokens=tokens, previous=previous, suspect=suspect):
            key = "limit_suspect" if suspect else "limit"
            return t[key].format(tokens=tokens, previous=previous)
        case ev.SessionBusy(pid=pid):
            who = (f" (process {pid})" if language != "zh" else f"（进程 {pid}）") if pid else ""
            return t["busy"].format(who=who)
        case ev.SessionChanged(added=n):
            return t["changed"].format(n=n, s=_s(n))
        case ev.SaveDelayed():
            return t["save_delayed"]
        case ev.WindowDetected(tokens=tokens):
            return t["detected"].format(tokens=tokens)
        case ev.ContextTruncated(sent_tokens=sent, read_tokens=read):
            return t["truncated"].format(sent=sent, read=read)
        case ev.Trimmed(budget=budget):
            return t["trimmed"].format(budget=budget)
        case ev.Recalled(turns=n, tokens=tokens, sessions=()):
            return t["recalled"].format(n=n, s=_s(n), tokens=tokens)
        case ev.Recalled(turns=n, tokens=tokens, sessions=labels):
            shown = " ".join(dict.fromkeys(labels))
            key = "recalled_both" if n > len(labels) else "recalled_other"
            return t[key].format(own=n - len(labels), own_s=_s(n - len(labels)), n=len(labels),
                                 s=_s(len(labels)), sessions=shown, tokens=tokens)
        case ev.MemorySuggested(count=n) if n > 0:
            return t["memory_suggested"].format(n=n, s=_s(n), look="looks" if n == 1 else "look",
                                                them="it" if n == 1 else "them")
        case ev.Failed(error=why):
            return t["failed"].format(why=why)
        case ev.Finished(finish_reason="length"):
            return t["length"]
        case ev.Finished(message=msg) if not msg.content.strip():
            return t["empty"]
    return None


def _tool_line(event: ev.Event, t: dict[str, str], language: str) -> str | None:
    """A tool call started or ended, the step limit, a tool left out, outputs pruned."""
    match event:
        case ev.ToolStarted(call=call) if builtin_line(call, language) is not None:
            return builtin_line(call, language)
        case ev.ToolStarted(call=call):
            args = " ".join(call.arguments.split())
            return t["tool_started"].format(
                tool=call.name, args=args if len(args) <= 200 else args[:199] + "…")
        case ev.ToolFinished(call=call, result=result, outcome=outcome, seconds=seconds):
            # One line, as every notice is: a tool's error may hold line breaks.
            why = " ".join(result.content.removeprefix("Error: ").split())
            why = why if len(why) <= 300 else why[:299] + "…"
            if outcome == "ok":
                return t["tool_done"].format(tool=call.name, chars=f"{len(result.content):,}",
                                             seconds=seconds)
            if outcome == "cancelled":
                return t["tool_cancelled"].format(tool=call.name)
            key = "tool_denied" if outcome in ("denied", "unknown") else "tool_error"
            return t[key].format(tool=call.name, why=why)
        case ev.ToolStepLimit(steps=n):
            return t["tool_limit"].format(n=n)
        case ev.ToolLeftOut(name=name, server=server, why=why):
            where = (f" ({server})" if language != "zh" else f"（{server}）") if server else ""
            return t["tool_left_out"].format(tool=name, server=where, why=why.rstrip("."))
        case ev.ToolOutputsPruned(count=n, freed=freed):
            return t["tool_pruned"].format(n=n, s=_s(n), freed=f"{freed:,}")
    return None
