"""The bundled local model's summary requests (style "plain", bench/local/summary_local.py): a short
instruction in the conversation's language, at the chat's prefix as the user's next turn, or
after the transcript in one user turn when the prefix cannot be used; a remote model keeps the
standard requests. Driven through the real engine and Summarizer against the fake server."""

from __future__ import annotations

import json

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import (
    PLAIN_PREFIX_INSTRUCTIONS,
    PLAIN_SMALL_INSTRUCTIONS,
    PLAIN_WORDS,
    PREFIX_INSTRUCTION,
    SUMMARY_SYSTEM_PROMPT,
    Summarizer,
    conversation_language,
    language_of,
)
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.window.tokens import TokenCounter
from tests.engine_helpers import (
    is_summary_request,
    make_engine,
    send,
    summarising_replies,
    summary_material,
)

EN_TURNS = [
    "I'm Priya Raman; we move the billing service to billing-02.internal on Friday.",
    "It crashed last night:\n```\nERROR pool.py:88 ConnectionResetError: [Errno 104]\n```",
    "We decided on pool_recycle = 300. Ask 王磊 about the database, phone +1 415 555 0137.",
    "Now write the systemd unit for it.",
]
ZH_TURNS = [
    "我是王磊，下周三把订单库从 MySQL 5.7 升级到 8.0，配置在 /opt/order/conf/db.yaml。",
    "昨晚报错：\n```\nERROR 1040 (HY000): Too many connections\n```",
    "我们决定把 max_connections 调到 500，有问题打 138 1234 5678。",
    "帮我写一个回滚脚本。",
]


def summary_bodies(fake) -> list[dict]:  # type: ignore[no-untyped-def]
    return [r.body for r in fake.chat_requests if r.status == 200 and is_summary_request(r.body)]


def chat_bodies(fake) -> list[dict]:  # type: ignore[no-untyped-def]
    return [r.body for r in fake.chat_requests if r.status == 200
            and not is_summary_request(r.body)]


async def compacted(fake, tmp_path, turns: list[str], focus: str | None = None,
                    **settings: object) -> list[ev.Event]:  # type: ignore[no-untyped-def]
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, keep_recent_turns=1, **settings)
    for text in turns:
        await send(engine, text)
    return [e async for e in engine.compact(reason="manual", focus=focus)]


async def test_the_local_model_is_asked_in_english_at_the_chat_prefix(fake_server, tmp_path):
    events = await compacted(fake_server, tmp_path, EN_TURNS, model=LOCAL_MODEL_NAME)
    assert isinstance(events[-1], ev.CompactionFinished) and events[-1].cached_prefix
    [summary] = summary_bodies(fake_server)
    instruction = summary["messages"][-1]
    assert instruction == {"role": "user", "content": PLAIN_PREFIX_INSTRUCTIONS["en"]}
    # The front is the last chat request's, byte for byte: the server's KV cache serves it.
    front, chat = summary["messages"][:-1], chat_bodies(fake_server)[-1]["messages"]
    assert front == chat[:len(front)] and front[-1]["role"] == "assistant"
    assert PREFIX_INSTRUCTION not in json.dumps(summary, ensure_ascii=False)


async def test_a_chinese_conversation_is_asked_in_chinese_with_its_focus(fake_server, tmp_path):
    events = await compacted(fake_server, tmp_path, ZH_TURNS, focus="电话号码",
                             model=LOCAL_MODEL_NAME)
    assert isinstance(events[-1], ev.CompactionFinished) and events[-1].cached_prefix
    [summary] = summary_bodies(fake_server)
    assert summary["messages"][-1]["content"] == (
        PLAIN_PREFIX_INSTRUCTIONS["zh"] + "\n\n" + PLAIN_WORDS["zh"]["focus"].format("电话号码"))


async def test_a_remote_model_keeps_the_standard_instruction(fake_server, tmp_path):
    await compacted(fake_server, tmp_path, ZH_TURNS, focus="电话号码")
    [summary] = summary_bodies(fake_server)
    assert summary["messages"][-1]["content"] == (
        f"{PREFIX_INSTRUCTION}\n\nPay special attention to: 电话号码")


async def test_the_local_summariser_small_prompt_is_one_user_turn_in_the_language(
        fake_server, tmp_path):
    # Another chat model: the chat's prefix is not the summariser's, so the small prompt.
    events = await compacted(fake_server, tmp_path, ZH_TURNS, summary_model=LOCAL_MODEL_NAME)
    assert isinstance(events[-1], ev.CompactionFinished) and not events[-1].cached_prefix
    [summary] = summary_bodies(fake_server)
    assert summary["model"] == LOCAL_MODEL_NAME
    [message] = summary["messages"]  # no system message: told there, the model chats on
    assert message["role"] == "user"
    assert message["content"].endswith("\n\n" + PLAIN_SMALL_INSTRUCTIONS["zh"])
    material = summary_material(summary)
    assert material.startswith("用户：" + ZH_TURNS[0]) and "\n\n助手：" in material
    assert "ERROR 1040 (HY000)" in material and SUMMARY_SYSTEM_PROMPT not in material


async def test_english_with_a_chinese_name_is_asked_in_english(fake_server, tmp_path):
    await compacted(fake_server, tmp_path, EN_TURNS, summary_model=LOCAL_MODEL_NAME)
    [summary] = summary_bodies(fake_server)
    content = summary["messages"][0]["content"]
    assert content.startswith("User: " + EN_TURNS[0])
    assert content.endswith("\n\n" + PLAIN_SMALL_INSTRUCTIONS["en"])


async def test_chunks_and_their_merge_stay_plain_and_the_summary_fits(make_fake_server):
    fake = make_fake_server(limit=8192)
    fake.ignore_max_tokens = True  # the summary must still come back within its cap
    fake.reply_fn = lambda body: "目标：升级订单库。事实：" + summary_material(body)[:400]
    counter = TokenCounter("gpt-4o-mini")
    provider = OpenAIProvider(fake.base_url, "", timeout=10, connect_timeout=2)
    summarizer = Summarizer(provider, model=LOCAL_MODEL_NAME, max_tokens=80, window=700,
                            counter=counter, style="plain")
    step = "第{}步：检查 /opt/order/conf/db.yaml 里的连接池设置，记录结果。"
    turns = [Message(role="user" if i % 2 == 0 else "assistant", content=step.format(i) * 6)
             for i in range(12)]
    try:
        text = await summarizer.summarize("之前的摘要：王磊负责升级。", turns)
    finally:
        await provider.aclose()
    bodies = [r.body for r in fake.chat_requests]
    assert len(bodies) >= 3  # at least two chunks, then their merge
    for body in bodies:
        [message] = body["messages"]
        assert message["content"].endswith("\n\n" + PLAIN_SMALL_INSTRUCTIONS["zh"])
    merge = summary_material(bodies[-1])
    assert merge.startswith(PLAIN_WORDS["zh"]["merge"])
    assert f"{PLAIN_WORDS['zh']['previous']}\n之前的摘要：王磊负责升级。" in merge
    assert text.startswith("目标：") and counter.text(text) <= 80


def test_the_language_is_the_users_and_code_does_not_count():
    zh = "读的时候报错：\n```\nValueError: Excel file format cannot be determined\n```\n怎么办？"
    assert language_of([zh]) == "zh"
    mixed = "我们用 Kubernetes 的 Deployment 做 rolling update，replicas 设为 3"
    assert language_of([mixed]) == "zh"
    assert language_of(["Ping 王磊 about the migration on Friday, please."]) == "en"
    assert language_of(["`pip install x`", ""]) == "en"
    messages = [{"role": "system", "content": "你是一个助手。" * 20},
                {"role": "user", "content": "Deploy it on Friday, please."},
                {"role": "assistant", "content": "好的，周五部署。"}]
    assert conversation_language(messages) == "en"  # the user's words, not the others'
    tools_only = [Message(role="tool", content="ok", name="git_log")]
    assert conversation_language(tools_only, "王磊决定周三升级数据库。") == "zh"
