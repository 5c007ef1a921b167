"""The full-screen app starts, shows the settings in use, and quits on q."""

from __future__ import annotations

from textual.widgets import Static

from jarvis_tui.core.config import Settings
from jarvis_tui.ui.app import JarvisApp


async def test_app_shows_settings_and_quits():
    app = JarvisApp(Settings(model="qwen2.5-7b", context_window=4096, response_reserve=512,
                             system_reserve=256))
    async with app.run_test() as pilot:
        text = str(app.query_one("#settings", Static).render())
        assert "qwen2.5-7b" in text
        assert "4096 tokens (configured)" in text
        assert "budget       3328 tokens" in text
        await pilot.press("q")
    assert app.return_code == 0
