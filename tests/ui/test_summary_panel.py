"""The summary panel shows the current summary as plain text, where it came from, and progress."""

from __future__ import annotations

import time
from datetime import datetime

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from jarvis_tui.core import costs
from jarvis_tui.core.costs import CompactionCost, Price
from jarvis_tui.core.store.records import Summary
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel

CREATED = 1_700_000_000.0
EMPTY_EN = ("No summary yet: older turns are summarised when the conversation reaches the "
            "compaction threshold, or with /compact.")


class Host(App[None]):
    def __init__(self, language: str = "en"):
        super().__init__()
        self.language = language

    def compose(self) -> ComposeResult:
        panel = SummaryPanel()
        panel.styles.width = 34
        yield panel


def make_summary(content: str = "Goals: ship the gauge.", *, covered: int = 24,
                 kind: str = "auto", focus: str | None = None) -> Summary:
    return Summary(id=1, conversation_id=1, content=content, first_message_id=1,
                   last_message_id=covered, covered_count=covered, kind=kind, focus=focus,
                   model="m", created_at=CREATED, replaces_id=None)


def text_of(app: App, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def shown(app: App, selector: str) -> bool:
    return app.query_one(selector).display


async def test_empty_state():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        panel = app.query_one(SummaryPanel)
        assert panel.summary is None
        assert str(app.query_one(CollapsibleTitle).label) == "Summary"
        assert text_of(app, "#summary-text") == EMPTY_EN
        assert not shown(app, "#summary-meta")
        assert not shown(app, "#summary-hint")
        assert not shown(app, "#summary-progress")


async def test_filled_state_shows_text_count_time_and_origin():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary())
        await pilot.pause()
        when = datetime.fromtimestamp(CREATED).strftime("%Y-%m-%d %H:%M")
        assert text_of(app, "#summary-text") == "Goals: ship the gauge."
        assert text_of(app, "#summary-meta") == f"covers 24 messages\n{when}\nautomatic"
        assert shown(app, "#summary-meta") and shown(app, "#summary-hint")
        assert text_of(app, "#summary-hint") == "F2 view / edit"
        panel.show_summary(make_summary(covered=1, kind="manual", focus="the [red]API[/]"))
        await pilot.pause()
        assert text_of(app, "#summary-meta").split("\n") == [
            "covers 1 message", when, "/compact", "focus: the [red]API[/]"]
        panel.show_summary(make_summary(kind="edited"))
        await pilot.pause()
        assert text_of(app, "#summary-meta").split("\n")[2] == "edited by you"
        panel.show_summary(None)
        await pilot.pause()
        assert text_of(app, "#summary-text") == EMPTY_EN
        assert not shown(app, "#summary-meta")


async def test_markup_looking_summary_is_shown_literally():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary("[bold]x[/] [/]"))
        await pilot.pause()
        assert text_of(app, "#summary-text") == "[bold]x[/] [/]"
        # And it reaches the screen as written.
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any("[bold]x[/] [/]" in line for line in lines)


async def test_long_summary_scrolls_inside_twelve_lines():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary("\n".join(f"fact {i}" for i in range(40))))
        await pilot.pause()
        scroll = app.query_one("#summary-scroll", VerticalScroll)
        assert scroll.size.height == 12
        assert scroll.max_scroll_y == 40 - 12


async def test_compacting_progress():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary())
        panel.set_compacting(True, 12)
        await pilot.pause()
        assert panel.compacting
        assert shown(app, "#summary-progress")
        assert text_of(app, "#summary-progress").endswith(" Compacting 12 messages…")
        assert text_of(app, "#summary-text") == "Goals: ship the gauge."  # old one stays shown
        panel.set_compacting(False)
        await pilot.pause()
        assert not panel.compacting
        assert not shown(app, "#summary-progress")


async def test_collapse_toggles_by_click_and_key():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        collapsible = app.query_one(Collapsible)
        assert not collapsible.collapsed
        assert shown(app, Collapsible.Contents)
        await pilot.click(CollapsibleTitle)
        await pilot.pause()
        assert collapsible.collapsed
        assert not shown(app, Collapsible.Contents)
        app.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not collapsible.collapsed
        assert shown(app, Collapsible.Contents)


async def test_chinese_strings():
    app = Host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        await pilot.pause()
        assert str(app.query_one(CollapsibleTitle).label) == "摘要"
        assert text_of(app, "#summary-text").startswith("还没有摘要")
        panel.show_summary(make_summary("目标：完成预算条。", kind="manual", focus="接口"))
        panel.set_compacting(True, 3)
        await pilot.pause()
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(CREATED))
        assert text_of(app, "#summary-text") == "目标：完成预算条。"
        assert text_of(app, "#summary-meta").split("\n") == [
            "涵盖 24 条消息", when, "/compact", "重点：接口"]
        assert text_of(app, "#summary-hint") == "F2 查看 / 编辑"
        assert text_of(app, "#summary-progress").endswith("正在压缩 3 条消息…")


async def test_what_the_last_compaction_cost_is_shown_under_the_summary():
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary())
        await pilot.pause()
        assert not shown(app, "#summary-cost")  # no compaction with counts yet
        spent = CompactionCost(requests=3, prompt_tokens=12_345, completion_tokens=456,
                               cached_tokens=None, cache_write_tokens=None, freed_tokens=9_000,
                               model="mini")
        panel.show_compaction(spent, Price(input=0.15, output=0.6))
        await pilot.pause()
        money = costs.money(costs.cost(Price(0.15, 0.6), 12_345, 456))
        assert text_of(app, "#summary-cost") == (
            f"Last compaction: 3 requests · prompt 12,345 · out 456 · freed 9,000 tokens · "
            f"{money}")
        assert shown(app, "#summary-cost")
        panel.show_compaction(None)
        await pilot.pause()
        assert not shown(app, "#summary-cost")


async def test_compaction_cost_in_chinese_without_a_price():
    app = Host(language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary())
        panel.show_compaction(CompactionCost(1, 800, 90, None, None, None, "m"))
        await pilot.pause()
        assert text_of(app, "#summary-cost") == "上次压缩：1 次请求 · 提示 800 · 输出 90"
