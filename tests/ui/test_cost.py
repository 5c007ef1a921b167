"""What requests cost, on screen: the gauge's cost lines after real rounds against the fake server,
/cost's totals, the summary panel's last compaction, from the store after a restart too."""

from __future__ import annotations

from rich.cells import cell_len

from jarvis_tui.core import costs
from jarvis_tui.core import events as ev
from jarvis_tui.core.costs import Price
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store
from jarvis_tui.ui import posted
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from jarvis_tui.ui.widgets.token_gauge import TokenGauge
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    notices,
    send_and_wait,
    type_and_send,
    wait_for,
)

PRICE = Price(input=2.5, output=10.0, cached_input=1.25)


def cost_text(app) -> str:
    """The gauge's cost lines as written (on screen they wrap to the sidebar), which must fit."""
    gauge = app.chat.query_one(TokenGauge)
    assert all(cell_len(line) <= gauge.size.width for line in gauge.cost_lines())
    return "\n".join(gauge.cost_texts())


async def cost_notice(pilot) -> str:
    app = pilot.app
    before = len(notices(app))
    await type_and_send(pilot, "/cost")
    await wait_for(pilot, lambda: len(notices(app)) > before, "the /cost notice")
    return notices(app)[-1]


async def test_a_round_shows_its_cost_and_cost_prints_the_totals(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, prices={"fake-model": PRICE})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.chat.query_one(TokenGauge).cost_lines() == []  # nothing asked yet
        await send_and_wait(pilot, "How much does a question cost?")
        await send_and_wait(pilot, "And a second, somewhat longer question about the bill")
        first, second = fake_server.chat_requests
        # The fake keeps a prompt cache as OpenAI does: the second request reuses the first.
        assert second.cached_tokens > 0
        prompt = first.prompt_tokens + second.prompt_tokens
        completion = first.completion_tokens + second.completion_tokens
        cached = first.cached_tokens + second.cached_tokens
        last_money = costs.money(costs.cost(PRICE, second.prompt_tokens,
                                            second.completion_tokens, second.cached_tokens))
        total_money = costs.money(costs.cost(PRICE, prompt, completion, cached))
        last_share = costs.share(second.cached_tokens / second.prompt_tokens)
        assert cost_text(app).split("\n") == [
            f"Last turn: prompt {second.prompt_tokens:,} ({second.cached_tokens:,} cached, "
            f"{last_share}) · out {second.completion_tokens:,} · {last_money}",
            f"Session: 2 requests · prompt {prompt:,} ({cached:,} cached, "
            f"{costs.share(cached / prompt)}) · out {completion:,} · {total_money}",
        ]
        report = await cost_notice(pilot)
        assert report.split("\n") == [
            f"💰 Session #{app.chat.cid}: 2 chat and 0 summary requests",
            f"Prompt: {prompt:,} tokens",
            f"From the cache: {cached:,} tokens, {costs.share(cached / prompt)} of the prompt",
            f"Completion: {completion:,} tokens",
            f"Cost: {total_money}",
        ]


async def test_a_server_that_says_nothing_of_its_cache_is_not_shown_as_zero(
        make_fake_server, tmp_path):
    fake = make_fake_server(flavor="vllm")  # vLLM's usage has no cached count
    app = make_app(fake, tmp_path, prices={"fake-model": PRICE})
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "one")
        await send_and_wait(pilot, "two")
        first, second = fake.chat_requests
        prompt = first.prompt_tokens + second.prompt_tokens
        completion = first.completion_tokens + second.completion_tokens
        assert cost_text(app).split("\n") == [
            f"Last turn: prompt {second.prompt_tokens:,} · out {second.completion_tokens:,} · "
            "cache: not reported · " + costs.money(costs.cost(PRICE, second.prompt_tokens,
                                                              second.completion_tokens)),
            f"Session: 2 requests · prompt {prompt:,} · out {completion:,} · cache: not "
            "reported · " + costs.money(costs.cost(PRICE, prompt, completion)),
        ]
        report = (await cost_notice(pilot)).split("\n")
        assert report[2] == "From the cache: not reported by the server"


def seeded(tmp_path, *, cached: int = 1_024, prompt: int = 1_600) -> tuple[Store, int]:
    """A session from an earlier run whose server reported its cache, compacted once."""
    store = Store(tmp_path / "sessions.db")
    conv = store.create_conversation(model="fake-model")
    question = store.add_message(conv.id, Message("user", "earlier question"))
    reply = store.add_message(conv.id, Message("assistant", "earlier answer"))
    store.add_usage(conv.id, kind="chat", model="fake-model", prompt_tokens=prompt,
                    completion_tokens=40, cached_tokens=cached, message_id=reply.id)
    summary = store.add_summary(conv.id, "Earlier: a question.", [question, reply],
                                kind="auto", model="fake-model")
    for freed in (None, 1_500):
        store.add_usage(conv.id, kind="summary", model="fake-model", prompt_tokens=900,
                        completion_tokens=60, summary_id=summary.id, freed_tokens=freed)
    return store, conv.id


async def test_after_a_restart_the_stored_counts_are_shown_with_their_cache_share(
        fake_server, tmp_path):
    store, cid = seeded(tmp_path)
    app = make_app(fake_server, tmp_path, store=store, prices={"fake-model": PRICE})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.chat.cid == cid
        text = cost_text(app)
        assert "Last turn: prompt 1,600 (1,024 cached, 64%) · out 40" in text
        assert "Session: 3 requests · prompt 3,400 (1,024 cached, 64%) · out 160" in text
        # Only the first request said what it read from the cache: the share is of its prompt.
        assert "cache: reported by 1 of 3" in text
        panel = app.chat.query_one(SummaryPanel)
        assert panel.cost_text == (
            "Last compaction: 2 requests · prompt 1,800 · out 120 · freed 1,500 tokens · "
            + costs.money(costs.cost(PRICE, 1_800, 120)))

        await send_and_wait(pilot, "a new question")
        answered = fake_server.chat_requests[-1]
        assert cost_text(app).startswith(
            f"Last turn: prompt {answered.prompt_tokens:,} ({answered.cached_tokens:,} cached,")
        report = await cost_notice(pilot)
        lines = report.split("\n")
        cached = 1_024 + answered.cached_tokens
        share = costs.share(cached / (1_600 + answered.prompt_tokens))
        assert lines[0] == f"💰 Session #{cid}: 2 chat and 2 summary requests"
        assert lines[1] == f"Prompt: {3_400 + answered.prompt_tokens:,} tokens"
        # The summary requests' server said nothing of its cache: the share is of the others.
        assert lines[2] == (f"From the cache: {cached:,} tokens, {share} of the prompt tokens of "
                            "the 2 of 4 requests whose server said")
        assert "Compactions freed: 1,500 tokens" in lines
        assert lines[-1].startswith("Cost: $0.0")


async def test_a_finished_compaction_shows_what_it_cost_at_once(fake_server, tmp_path):
    store, cid = seeded(tmp_path)
    app = make_app(fake_server, tmp_path, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        panel = app.chat.query_one(SummaryPanel)
        assert panel.cost_text.startswith("Last compaction: 2 requests · prompt 1,800")
        # As the engine reports a compaction: its counts before (or without) the store's.
        finished = ev.CompactionFinished(app.chat.session.summary.id, 2, 3_000, 1_200,
                                         "manual", cost_prompt_tokens=2_500,
                                         cost_completion_tokens=180, calls=1)
        app.chat.post_message(posted.CompactionFinished(cid, finished))
        await wait_for(pilot, lambda: "2,500" in panel.cost_text, "the live compaction cost")
        # No price for the model: tokens only, no money.
        assert panel.cost_text == ("Last compaction: 1 request · prompt 2,500 · out 180 · "
                                   "freed 1,800 tokens")


async def test_no_price_is_said_and_never_guessed(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path, prices={"another-model": PRICE})
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hello")
        assert "$" not in cost_text(app)
        report = await cost_notice(pilot)
        assert report.split("\n")[-1] == ('Cost: no price set for fake-model; add a '
                                          '[prices."MODEL"] table to the config file (README, '
                                          "Configuration)")


async def test_a_server_that_counts_nothing_is_said_to(fake_server, tmp_path):
    fake_server.stream_usage = False  # no usage at all in the stream
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hello")
        assert cost_text(app) == "Last turn: the server reported no token counts"
        assert await cost_notice(pilot) == (f"💰 Session #{app.chat.cid}: no request with "
                                            "token counts yet.")


async def test_chinese_cost_lines_and_report(fake_server, tmp_path):
    store, cid = seeded(tmp_path)
    app = make_app(fake_server, tmp_path, store=store, language="zh",
                   prices={"fake-model": Price(input=20, output=80, currency="¥")})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = cost_text(app)
        assert "上一轮：提示 1,600（缓存 1,024，64%） · 输出 40" in text
        assert "本会话：3 次请求 · 提示 3,400（缓存 1,024，64%） · 输出 160" in text
        assert "缓存：3 次中 1 次有报告" in text and "¥0." in text
        assert app.chat.query_one(SummaryPanel).cost_text.startswith(
            "上次压缩：2 次请求 · 提示 1,800 · 输出 120 · 腾出 1,500 token · ¥0.")
        report = (await cost_notice(pilot)).split("\n")
        assert report[0] == f"💰 会话 #{cid}：1 次对话请求，2 次摘要请求"
        assert report[2] == "来自缓存：1,024 token，占 3 次请求中有报告的 1 次的提示 token 的 64%"
        assert report[-1].startswith("费用：¥0.")


async def test_the_palette_offers_the_session_cost(fake_server, tmp_path):
    app = make_app(fake_server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "hello")
        found = [c for c in app.get_system_commands(app.chat) if c.title == "Session cost"]
        assert len(found) == 1
        before = len(notices(app))
        await found[0].callback()
        await pilot.pause()
        assert notices(app)[before:][0].startswith(f"💰 Session #{app.chat.cid}: 1 chat")
