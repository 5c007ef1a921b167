"""The token gauge draws what BudgetUsage says: numbers, segments, threshold marker, level."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.content import Content

from jarvis_tui.core import costs
from jarvis_tui.core import events as ev
from jarvis_tui.core.budget import Budget, BudgetUsage
from jarvis_tui.core.costs import Price, Tally
from jarvis_tui.ui.widgets.token_gauge import (
    FREE_GLYPH,
    LEVEL_STYLES,
    MARKER,
    TokenGauge,
    wrap_cells,
)

# 12,000 window - 1,500 - 500 = 10,000 budget; threshold 70% = 7,000.
BUDGET = Budget(12_000, 1_500, 500, 0.7)
LEVEL_CLASSES = {"-ok", "-near", "-over", "-empty"}


class Host(App[None]):
    def __init__(self, width: int = 34, language: str = "en"):
        super().__init__()
        self.language = language
        self.gauge_width = width

    def compose(self) -> ComposeResult:
        gauge = TokenGauge()
        gauge.styles.width = self.gauge_width
        yield gauge


def usage(*, summary: int = 0, history: int = 0, pending: int = 0, system: int = 0,
          source: str = "estimated", budget: Budget = BUDGET) -> BudgetUsage:
    return budget.usage(system=system, summary=summary, history=history, pending=pending,
                        source=source)


def lines(gauge: TokenGauge) -> list[str]:
    return gauge.render().plain.split("\n")


def bar_of(gauge: TokenGauge) -> tuple[int, str]:
    """(marker column, bar line): the bar is the line right under the threshold marker."""
    text = lines(gauge)
    i = next(n for n, line in enumerate(text) if line.strip() == MARKER)
    return text[i].index(MARKER), text[i + 1]


def row(gauge: TokenGauge, label: str) -> str:
    return next(line for line in lines(gauge) if label in line)


async def test_empty_state_is_neutral():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        await pilot.pause()
        text = lines(gauge)
        assert text[0] == "Token budget"
        assert "Nothing counted yet." in text
        assert text[-1] == FREE_GLYPH * 32  # 34 wide minus 1 cell of padding on each side
        assert gauge.used == 0
        assert gauge.classes & LEVEL_CLASSES == {"-empty"}


async def test_thirty_percent_numbers_legend_and_reserves():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(summary=1_000, history=2_000))
        await pilot.pause()
        text = lines(gauge)
        assert text[1].startswith("3,000 / 10,000 tokens") and text[1].endswith(" 30%")
        assert len(text[1]) == 32
        assert row(gauge, "summary").split() == ["▓", "summary", "1,000"]
        assert row(gauge, "history").split() == ["█", "history", "2,000"]
        assert row(gauge, "reply").split() == ["▒", "reply", "0"]
        assert row(gauge, "typing").split() == ["▒", "typing", "0"]
        assert row(gauge, "free").split() == [FREE_GLYPH, "free", "7,000"]
        assert row(gauge, "context window").endswith(" 12,000")
        assert row(gauge, "response reserve").endswith(" 1,500")
        assert row(gauge, "system reserve").endswith(" 500")
        assert "compacts at 70% (7,000 tokens)" in text
        assert not any("system over reserve" in line for line in text)
        assert not any("Over budget" in line for line in text)
        _, bar = bar_of(gauge)
        # 32 cells over 10,000 tokens: summary ends at 3.2 -> 3, history at 9.6 -> 10.
        assert bar == "▓" * 3 + "█" * 7 + FREE_GLYPH * 22
        assert gauge.used == 3_000
        assert gauge.level == "ok"
        assert gauge.classes & LEVEL_CLASSES == {"-ok"}


async def test_near_threshold_with_reply_and_typing():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(summary=1_000, history=4_200, pending=300), reply_tokens=500)
        await pilot.pause()
        assert gauge.used == 6_000  # reply counts as used
        assert lines(gauge)[1].startswith("6,000 / 10,000 tokens")
        assert lines(gauge)[1].endswith(" 60%")
        assert row(gauge, "reply").split() == ["▒", "reply", "500"]
        assert row(gauge, "typing").split() == ["▒", "typing", "300"]
        assert row(gauge, "free").split() == [FREE_GLYPH, "free", "4,000"]
        _, bar = bar_of(gauge)
        # Edges at 3.2, 16.64, 17.92, 19.2 tokens*32/10,000 -> 3, 17, 18, 19.
        assert bar == "▓" * 3 + "█" * 14 + "▒" * 2 + FREE_GLYPH * 13
        assert gauge.level == "near"
        assert gauge.classes & LEVEL_CLASSES == {"-near"}


async def test_level_boundaries_and_classes_follow_updates():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        # 85% of the 7,000 threshold is 5,950.
        for used, level in [(5_949, "ok"), (5_950, "near"), (7_000, "near"), (7_001, "over"),
                            (1_000, "ok")]:
            gauge.update_usage(usage(history=used))
            await pilot.pause()
            assert gauge.level == level, used
            assert gauge.classes & LEVEL_CLASSES == {f"-{level}"}, used
            # The history segment and the marker take the level's colour.
            bar_line = gauge.render().split("\n")[3]
            assert any(span.style == LEVEL_STYLES[level] for span in bar_line.spans)
        # A streaming reply alone can push the level over the threshold.
        gauge.update_usage(usage(history=6_900), reply_tokens=101)
        await pilot.pause()
        assert gauge.level == "over"


async def test_over_budget_fills_the_bar_and_says_so():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(summary=2_000, history=9_000, pending=1_000))
        await pilot.pause()
        text = lines(gauge)
        assert text[1].startswith("12,000 / 10,000 tokens") and text[1].endswith(" 120%")
        _, bar = bar_of(gauge)
        assert len(bar) == 32 and FREE_GLYPH not in bar
        assert row(gauge, "free").split() == [FREE_GLYPH, "free", "0"]
        assert "Over budget by 2,000 tokens" in gauge.render().plain
        assert gauge.level == "over"
        assert gauge.classes & LEVEL_CLASSES == {"-over"}


async def test_system_prompt_over_its_reserve_is_its_own_segment():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(system=1_500, history=1_000))  # reserve is 500
        await pilot.pause()
        assert gauge.used == 2_000
        assert row(gauge, "system over reserve").split()[-1] == "1,000"
        _, bar = bar_of(gauge)
        assert bar.startswith("█" * 6 + FREE_GLYPH)  # 2,000 of 10,000 over 32 cells


async def test_threshold_marker_is_proportional_within_the_bar():
    for width, fraction in [(34, 0.7), (34, 0.5), (34, 1.0), (52, 0.7), (52, 0.25)]:
        app = Host(width=width)
        async with app.run_test(size=(100, 40)) as pilot:
            gauge = app.query_one(TokenGauge)
            budget = Budget(12_000, 1_500, 500, fraction)
            gauge.update_usage(usage(history=1_000, budget=budget))
            await pilot.pause()
            col, bar = bar_of(gauge)
            assert len(bar) == width - 2
            expected = min(len(bar) - 1, budget.threshold_tokens * len(bar) // budget.tokens)
            assert col == expected, (width, fraction)
            assert abs(col / len(bar) - fraction) <= 1 / len(bar)
            assert f"compacts at {round(fraction * 100)}%" in gauge.render().plain


async def test_source_labels():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        for source, label in [("estimated", "≈ estimated"),
                              ("calibrated", "calibrated from the server"),
                              ("exact", "exact (tokenizer)")]:
            gauge.update_usage(usage(history=10, source=source))
            await pilot.pause()
            assert lines(gauge)[-1] == label


async def test_compacting_progress_line():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(history=8_000))
        gauge.set_compacting(True, 1_234)
        await pilot.pause()
        assert gauge.compacting
        assert lines(gauge)[-1].endswith(" Compacting 1,234 messages…")
        gauge.set_compacting(False)
        await pilot.pause()
        assert not gauge.compacting
        assert "Compacting" not in gauge.render().plain
        gauge.set_compacting(True)
        await pilot.pause()
        assert lines(gauge)[-1].endswith(" Compacting…")


async def test_chinese_strings_keep_columns_aligned():
    app = Host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        assert "尚未计数。" in gauge.render().plain
        gauge.update_usage(usage(summary=1_000, history=2_000, source="calibrated"))
        gauge.set_compacting(True, 5)
        await pilot.pause()
        text = lines(gauge)
        assert text[0] == "Token 预算"
        assert text[1].startswith("3,000 / 10,000 token")
        for label, value in [("摘要", "1,000"), ("历史", "2,000"), ("剩余", "7,000"),
                             ("上下文窗口", "12,000"), ("回复预留", "1,500"), ("系统预留", "500")]:
            line = row(gauge, label)
            assert line.endswith(" " + value)
            assert Content(line).cell_length == 32, line  # CJK labels are two cells wide
        assert "达到 70% 时压缩（7,000 token）" in text
        assert "已根据服务器校准" in text
        assert text[-1].endswith("正在压缩 5 条消息…")
        gauge.update_usage(usage(history=11_000, source="exact"))
        await pilot.pause()
        assert "超出预算 1,000 token" in gauge.render().plain
        assert "精确（分词器）" in lines(gauge)


async def test_where_the_window_came_from_and_an_unknown_limit():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        for window_source, needle in (("configured", "window: as configured"),
                                      ("detected from the server", "reported by the server"),
                                      ("learned from the server", "learned from an error"),
                                      ("default", "⚠ limit unknown: 12,000 assumed")):
            gauge.update_usage(BUDGET.usage(system=0, summary=0, history=10, pending=0,
                                            source="estimated", window_source=window_source))
            await pilot.pause()
            assert any(needle in line for line in lines(gauge)), window_source


async def test_recalled_turns_are_a_segment_of_their_own_only_when_there_are_some():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        for recalled in (0, 1_500):
            gauge.update_usage(BUDGET.usage(system=0, summary=1_000, history=2_000, pending=100,
                                            source="estimated", recalled=recalled))
            await pilot.pause()
            rows = [line for line in lines(gauge) if "recalled" in line]
            assert gauge.used == 1_000 + recalled + 2_000 + 100
            if not recalled:
                assert rows == []
                continue
            assert rows[0].split()[-1] == "1,500"
            _, bar = bar_of(gauge)
            assert "▓" * 8 in bar  # summary and recalled: 2,500 of 10,000 in 32 cells


# -- the cost lines ---------------------------------------------------------------------------


def test_wrap_cells_breaks_at_separators_then_spaces_then_anywhere():
    assert wrap_cells("a · bb · ccc", 20) == ["a · bb · ccc"]
    assert wrap_cells("Session: 3 requests · prompt 3,400 · out 160", 20) == [
        "Session: 3 requests", "prompt 3,400", "out 160"]
    assert wrap_cells("本会话：3 次请求 · 提示 3,400", 10) == ["本会话：3", "次请求", "提示 3,400"]
    assert wrap_cells("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap_cells("", 10) == [""]


async def test_cost_lines_show_the_cache_share_money_and_fit_the_width():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(history=2_000))
        last = ev.Usage(12_345, 678, 12_000, cached_tokens=10_000, cache_write_tokens=1_000)
        session = Tally(chat_requests=4, summary_requests=1, prompt_tokens=1_234_567,
                        completion_tokens=9_876, cached_tokens=900_000,
                        reported_requests=5, reported_prompt_tokens=1_234_567,
                        money={"$": 1.5})
        gauge.update_cost(last, session, Price(input=3, output=15, cached_input=0.3,
                                               cache_write=3.75))
        await pilot.pause()
        money = costs.money(costs.cost(Price(3, 15, 0.3, 3.75), 12_345, 678, 10_000, 1_000))
        assert gauge.cost_texts() == [
            f"Last turn: prompt 12,345 (10,000 cached, 81%) · out 678 · {money}",
            "Session: 5 requests · prompt 1,234,567 (900,000 cached, 73%) · out 9,876 · $1.50",
        ]
        drawn = lines(gauge)
        wrapped = gauge.cost_lines()
        assert drawn[-len(wrapped):] == wrapped  # the last lines of the gauge
        assert all(cell_len(line) <= 32 for line in wrapped)


async def test_cost_lines_are_honest_about_what_was_not_said():
    app = Host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        gauge = app.query_one(TokenGauge)
        gauge.update_usage(usage(history=2_000))
        gauge.update_cost(None, None, answered=True)
        await pilot.pause()
        assert gauge.cost_texts() == ["上一轮：服务器未报告 token 数"]
        some = Tally(chat_requests=3, prompt_tokens=3_000, completion_tokens=30,
                     cached_tokens=500, reported_requests=1, reported_prompt_tokens=1_000,
                     money={"$": 0.002}, unpriced=("mini",))
        gauge.update_cost(ev.Usage(1_000, 10, 990), some)
        await pilot.pause()
        assert gauge.cost_texts() == [
            "上一轮：提示 1,000 · 输出 10 · 缓存：服务器未报告",
            "本会话：3 次请求 · 提示 3,000（缓存 500，50%） · 输出 30 · 缓存：3 次中 1 次有报告 · "
            "$0.0020 （部分模型未设价格）",
        ]
        assert all(cell_len(line) <= 32 for line in gauge.cost_lines())
