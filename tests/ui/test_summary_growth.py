"""The summary panel shows the summary's and the ledger's tokens against their budgets and what
the newest compaction added, from the stored summaries, in English and Chinese."""

from __future__ import annotations

from textual.widgets import Static

from jarvis_tui.core.compaction.size import SummarySize
from jarvis_tui.core.details.ledger import section, split
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from tests.core.details.test_ledger import PLANTED, replies
from tests.ui.app_helpers import (
    SIZE,
    make_app,
    send_and_wait,
    talk_then_compact,
    wait_for,
)
from tests.ui.test_summary_panel import Host, make_summary


def size_line(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.chat.query_one(SummaryPanel).query_one("#summary-size", Static).content)


async def test_the_panel_shows_sizes_against_budgets_and_the_growth(fake_server, tmp_path):
    replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [PLANTED[0][0], "Unrelated: gardening"])
        engine = app.chat.session._engine
        await send_and_wait(pilot, PLANTED[1][0])
        await send_and_wait(pilot, PLANTED[2][0])
        await send_and_wait(pilot, "Unrelated: more gardening")
        await talk_then_compact(pilot, [])
        store = engine.store
        await wait_for(pilot, lambda: len(store.summaries(engine.conversation.id)) == 2
                       and app.chat.compaction_work.running is False, "the second summary")
        await pilot.pause()
        first, second = store.summaries(engine.conversation.id)

        def sizes(content: str) -> tuple[int, int]:
            body, kept = split(content)
            return engine.counter.text(body), engine.counter.text(section(kept))

        body, details = sizes(second.content)
        growth = sum(sizes(second.content)) - sum(sizes(first.content))
        assert growth > 0  # the second compaction's details joined the ledger
        assert size_line(app) == (
            f"summary {body:,}/{engine.summary_max_tokens:,} · "
            f"details {details:,}/{engine.details_max_tokens:,}\n"
            f"compaction 2: +{growth:,} tokens")


async def test_an_edit_is_not_a_compaction_and_chinese_reads_it_too():
    app = Host("zh")
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(SummaryPanel)
        panel.show_summary(make_summary(), SummarySize(1412, 2048, 180, 256, 5, -38))
        await pilot.pause()
        text = str(app.query_one("#summary-size", Static).render())
        assert text == "摘要 1,412/2,048 · 细节 180/256\n第 5 次压缩：-38 token"
        panel.show_summary(make_summary(kind="edited"), SummarySize(40, 512, 0, 256, 0, None))
        await pilot.pause()
        assert str(app.query_one("#summary-size", Static).render()) == "摘要 40/512 · 细节 0/256"
        panel.show_summary(None, SummarySize(40, 512, 0, 256, 0, None))
        await pilot.pause()
        assert not app.query_one("#summary-size").display
