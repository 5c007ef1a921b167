"""Quitting the app ends what its tool servers started (issue 25, item 13): a real stdio server
that leaves a child running in its process group, and Ctrl+Q as the user presses it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

from jarvis_tui.core.settings.mcp import McpServerConfig
from tests.faults.crashes import running_in_group
from tests.mcp_servers import ROOT, faulty_args
from tests.ui.app_helpers import SIZE, make_app, notices, wait_for


async def test_ctrl_q_ends_the_children_a_tool_server_started(fake_server, tmp_path):
    pidfile = tmp_path / "server.pid"
    server = " ".join([sys.executable, *faulty_args()])
    kids = McpServerConfig("kids", "stdio", command="/bin/sh", cwd=str(ROOT),
                           args=("-c", f"sleep 300 & echo $$ > {pidfile}; exec {server}"))
    app = make_app(fake_server, tmp_path, mcp=(kids,))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("Tools:" in n for n in notices(app)),
                       "the server ready", 30)
        group = int(pidfile.read_text())
        assert any(name.endswith(" sleep") for name in running_in_group(group))
        await pilot.press("ctrl+q")
    try:
        deadline = time.monotonic() + 3
        while (left := running_in_group(group)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == [], f"outlived the app: {left}"
    finally:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
