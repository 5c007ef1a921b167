"""What `/cost` says: a session's requests, tokens, cache share and money, in English and
Chinese."""

from __future__ import annotations

from jarvis_tui.core import costs
from jarvis_tui.core.costs import Tally
from jarvis_tui.texts.i18n import Texts

COST_TEXTS = Texts(
    en={
        "none": "💰 Session #{id}: no request with token counts yet.",
        "head": "💰 Session #{id}: {chat} chat and {summary} summary requests",
        "prompt": "Prompt: {n} tokens",
        "cached_all": "From the cache: {n} tokens, {share} of the prompt",
        "cached_some": "From the cache: {n} tokens, {share} of the prompt tokens of the {k} of "
                       "{of} requests whose server said",
        "cached_none": "From the cache: not reported by the server",
        "written": "Written to the cache: {n} tokens",
        "completion": "Completion: {n} tokens",
        "freed": "Compactions freed: {n} tokens",
        "money": "Cost: {money}",
        "money_part": "Cost: {money}, not counting {models} (no price set)",
        "no_price": "Cost: no price set for {models}; add a [prices.\"MODEL\"] table to the "
                    "config file (README, Configuration)",
    },
    zh={
        "none": "💰 会话 #{id}：还没有带 token 计数的请求。",
        "head": "💰 会话 #{id}：{chat} 次对话请求，{summary} 次摘要请求",
        "prompt": "提示：{n} token",
        "cached_all": "来自缓存：{n} token，占提示的 {share}",
        "cached_some": "来自缓存：{n} token，占 {of} 次请求中有报告的 {k} 次的提示 token 的 "
                       "{share}",
        "cached_none": "来自缓存：服务器未报告",
        "written": "写入缓存：{n} token",
        "completion": "输出：{n} token",
        "freed": "压缩腾出：{n} token",
        "money": "费用：{money}",
        "money_part": "费用：{money}，不含 {models}（未设价格）",
        "no_price": "费用：{models} 未设价格；在配置文件中添加 [prices.\"模型名\"] 表"
                    "（见 README 的 Configuration）",
    },
)


def cost_report(session: Tally, conversation_id: int, lang: str) -> str:
    """The lines /cost prints for a session's tally."""
    if not session.requests:
        return COST_TEXTS(lang, "none", id=conversation_id)
    lines = [COST_TEXTS(lang, "head", id=conversation_id, chat=f"{session.chat_requests:,}",
                        summary=f"{session.summary_requests:,}"),
             COST_TEXTS(lang, "prompt", n=costs.tokens(session.prompt_tokens))]
    share = session.cached_share
    if session.cached_tokens is None or share is None:
        lines.append(COST_TEXTS(lang, "cached_none"))
    elif session.reported_requests < session.requests:
        lines.append(COST_TEXTS(lang, "cached_some", n=costs.tokens(session.cached_tokens),
                                share=costs.share(share), k=f"{session.reported_requests:,}",
                                of=f"{session.requests:,}"))
    else:
        lines.append(COST_TEXTS(lang, "cached_all", n=costs.tokens(session.cached_tokens),
                                share=costs.share(share)))
    if session.cache_write_tokens:
        lines.append(COST_TEXTS(lang, "written", n=costs.tokens(session.cache_write_tokens)))
    lines.append(COST_TEXTS(lang, "completion", n=costs.tokens(session.completion_tokens)))
    if session.freed_tokens is not None:
        lines.append(COST_TEXTS(lang, "freed", n=costs.tokens(session.freed_tokens)))
    models = ", ".join(m or "?" for m in session.unpriced)
    if not session.money:
        lines.append(COST_TEXTS(lang, "no_price", models=models))
    elif session.unpriced:
        lines.append(COST_TEXTS(lang, "money_part", money=costs.moneys(session.money),
                                models=models))
    else:
        lines.append(COST_TEXTS(lang, "money", money=costs.moneys(session.money)))
    return "\n".join(lines)
