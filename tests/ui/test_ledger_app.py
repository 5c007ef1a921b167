"""In the app: the details a lossy summary dropped show in the summary panel below it, and F2
opens them with the summary for editing."""

from __future__ import annotations

from textual.widgets import Static, TextArea

from jarvis_tui.core.details.ledger import HEADER
from jarvis_tui.ui.screens.summary_editor import SummaryEditor
from jarvis_tui.ui.widgets.summary_panel import SummaryPanel
from tests.core.details.test_ledger import PLANTED, replies
from tests.ui.app_helpers import SIZE, make_app, talk_then_compact


async def test_the_panel_and_the_editor_show_the_ledger(fake_server, tmp_path):
    replies(fake_server)
    app = make_app(fake_server, tmp_path, keep_recent_turns=1)
    async with app.run_test(size=SIZE) as pilot:
        await talk_then_compact(pilot, [text for text, _ in PLANTED] + ["Unrelated: gardening"])
        await pilot.pause()
        panel = str(app.chat.query_one(SummaryPanel).query_one("#summary-text", Static).content)
        assert panel.startswith("Summary: ") and HEADER in panel and "8443" in panel
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, SummaryEditor)
        text = app.screen.query_one("#editor", TextArea).text
        assert HEADER in text and "/etc/collector.yaml" in text
