"""Pricing token counts, summing a session's requests, and writing numbers and money for people."""

from __future__ import annotations

import pytest

from jarvis_tui.core import costs
from jarvis_tui.core import events as ev
from jarvis_tui.core.costs import Price, Tally, compaction_cost, cost, tally
from jarvis_tui.core.store.records import UsageRow, UsageTotal

GPT = Price(input=2.5, output=10.0, cached_input=1.25)
CLAUDE = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75, currency="€")


def test_cost_prices_each_part_of_the_prompt_at_its_own_rate() -> None:
    # 10,000 prompt tokens of which 6,000 cached and 1,000 written: 3,000 plain.
    got = cost(CLAUDE, 10_000, 500, cached_tokens=6_000, cache_write_tokens=1_000)
    want = (3_000 * 3.0 + 6_000 * 0.3 + 1_000 * 3.75 + 500 * 15.0) / 1e6
    assert got == pytest.approx(want)
    assert got == pytest.approx(0.02205)


def test_unreported_cache_is_priced_as_plain_input() -> None:
    assert cost(GPT, 1_000_000, 0) == pytest.approx(2.5)
    assert cost(GPT, 1_000_000, 0, cached_tokens=None) == pytest.approx(2.5)
    assert cost(GPT, 1_000_000, 1_000_000, cached_tokens=1_000_000) == pytest.approx(11.25)


def test_missing_cache_prices_fall_back_to_input() -> None:
    plain = Price(input=1.0, output=2.0)
    assert cost(plain, 1_000, 1_000, cached_tokens=400, cache_write_tokens=100) == \
        pytest.approx(cost(plain, 1_000, 1_000))


def test_parts_larger_than_the_whole_are_not_negative() -> None:
    # A proxy that counts the cache outside prompt_tokens: the parts are believed.
    assert cost(GPT, 100, 0, cached_tokens=400) == pytest.approx(400 * 1.25 / 1e6)


def total(kind: str, model: str, requests: int, prompt: int, completion: int,
          cached: int | None = None, written: int | None = None, reported: int = 0,
          reported_prompt: int = 0, freed: int | None = None) -> UsageTotal:
    return UsageTotal(kind, model, requests, prompt, completion, cached, written, reported,
                      reported_prompt, freed)


def test_tally_sums_kinds_and_prices_each_model_at_its_own_price() -> None:
    t = tally([
        total("chat", "gpt-4o", 3, 30_000, 900, cached=20_000, reported=3,
              reported_prompt=30_000),
        total("summary", "gpt-4o-mini", 2, 8_000, 600, freed=5_000),
        total("chat", "claude", 1, 10_000, 100, cached=5_000, written=2_000, reported=1,
              reported_prompt=10_000),
    ], {"gpt-4o": GPT, "claude": CLAUDE})
    assert (t.chat_requests, t.summary_requests, t.requests) == (4, 2, 6)
    assert (t.prompt_tokens, t.completion_tokens) == (48_000, 1_600)
    assert (t.cached_tokens, t.cache_write_tokens, t.freed_tokens) == (25_000, 2_000, 5_000)
    # The share is of the prompts that said: 25,000 of 40,000, not of all 48,000.
    assert t.cached_share == pytest.approx(0.625)
    assert t.money["$"] == pytest.approx(cost(GPT, 30_000, 900, 20_000))
    assert t.money["€"] == pytest.approx(cost(CLAUDE, 10_000, 100, 5_000, 2_000))
    assert t.unpriced == ("gpt-4o-mini",)


def test_a_session_whose_server_never_said_has_no_cached_share() -> None:
    t = tally([total("chat", "local", 2, 5_000, 100)], {})
    assert t.cached_tokens is None and t.cached_share is None
    assert t.money == {} and t.unpriced == ("local",)
    assert Tally().requests == 0 and Tally().cached_share is None


def test_a_compaction_from_its_rows_and_from_its_event() -> None:
    rows = [UsageRow(i, 1, None, 7, "summary", "mini", 4_000, None, None, 300, freed, 0.0)
            for i, freed in ((1, None), (2, 2_500))]
    c = compaction_cost(rows)
    assert c is not None
    assert (c.requests, c.prompt_tokens, c.completion_tokens, c.freed_tokens, c.model) == (
        2, 8_000, 600, 2_500, "mini")
    assert c.cached_tokens is None
    assert compaction_cost([]) is None
    live = ev.compaction_cost_of(ev.CompactionFinished(7, 12, 3_000, 1_200, "threshold",
                                                    cost_prompt_tokens=5_000,
                                                    cost_completion_tokens=400, calls=2),
                              "mini")
    assert (live.requests, live.prompt_tokens, live.completion_tokens, live.freed_tokens) == (
        2, 5_000, 400, 1_800)


@pytest.mark.parametrize(("n", "text"), [
    (0, "0"), (999, "999"), (1_000, "1,000"), (1_234_567, "1,234,567"),
    (10_000_000_000, "10,000,000,000"),
])
def test_token_counts_use_ascii_grouping(n: int, text: str) -> None:
    assert costs.tokens(n) == text


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (0, "$", "$0.00"),
    (1234.567, "$", "$1,234.57"),
    (0.01, "$", "$0.01"),
    (0.123, "€", "€0.12"),
    (0.0042, "$", "$0.0042"),
    (0.00012345, "$", "$0.00012"),
    (0.000001, "$", "$0.0000010"),
    (0.009999, "$", "$0.01"),  # two significant digits would read 0.010: a cent it is
    (0.5, "CNY", "CNY 0.50"),  # a currency code stands apart from the number
    (0.0042, "¥", "¥0.0042"),
])
def test_money_shows_tiny_amounts_with_enough_digits(amount: float, currency: str,
                                                     text: str) -> None:
    assert costs.money(amount, currency) == text


def test_moneys_never_adds_currencies() -> None:
    assert costs.moneys({"$": 0.12, "€": 0.0042}) == "$0.12 + €0.0042"


@pytest.mark.parametrize(("part", "text"), [
    (0.0, "0%"), (0.004, "<1%"), (0.5, "50%"), (0.8149, "81%"), (0.996, "99%"), (1.0, "100%"),
])
def test_share_never_rounds_to_an_untrue_zero_or_hundred(part: float, text: str) -> None:
    assert costs.share(part) == text


def test_the_ask_usage_line_says_each_part_and_prices_each_model() -> None:
    from jarvis_tui.texts.notices import usage_line

    used = ev.Usage(12_000, 300, 11_500, cached_tokens=10_240, cache_write_tokens=512)
    compacted = costs.CompactionCost(2, 5_000, 400, None, None, 3_000, "mini")
    mini, sonnet = Price(input=0.15, output=0.6), Price(3.0, 15.0, 0.3, 3.75)
    money = costs.money(cost(sonnet, 12_000, 300, 10_240, 512) + cost(mini, 5_000, 400))
    assert usage_line(used, price=sonnet, compaction=compacted, compaction_price=mini) == (
        "usage: prompt 12,000 tokens (10,240 cached, 85%) (512 written to the cache) · "
        f"completion 300 · compaction: 2 requests, prompt 5,000 · completion 400 · {money}")
    # A compaction on an unpriced model: the money says it is not the whole of it.
    assert usage_line(used, "zh", price=GPT, compaction=compacted).endswith(
        "（有模型未设价格，未计入）")
    assert usage_line(None) == "usage: the server reported no token counts"
