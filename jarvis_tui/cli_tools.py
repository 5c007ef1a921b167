"""`ask` with tools: the configured MCP servers, started for this one message, and the calls
allowed without asking (it has no one to ask: every other call is refused, and the model is
told so)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence

from jarvis_tui.cli_errors import CliError
from jarvis_tui.core.session import ChatSession
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.settings.mcp import from_servers_files
from jarvis_tui.core.tools.rules import AmbiguousName, allow_flag, resolve
from jarvis_tui.core.tools.specs import ToolBox
from jarvis_tui.texts.notices import pick_language, tools_warnings


@contextlib.asynccontextmanager
async def ask_tools(settings: Settings, session: ChatSession, allow: Sequence[str],
                    say: Callable[[str], None], *, enabled: bool = True
                    ) -> AsyncIterator[ToolBox | None]:
    """The servers of the config started (each failure one line on stderr), handed to
    `session` with `allow`; stopped when the block ends, however it ends."""
    servers = [s for s in settings.mcp if s.enabled]
    if not enabled or not servers:
        for name in allow:
            say(f"jarvis-tui: --allow-tool {name}: no tool server is configured "
                "([mcp.servers.NAME] in the config, or mcp_servers_file)")
        yield None
        return
    # The SDK is imported only when a server is configured: it takes seconds to load.
    from jarvis_tui.core.tools.mcp_client import McpHub

    hub = McpHub.from_settings(settings)
    try:
        say(f"⚙ Starting {len(servers)} tool server(s)…")
        for source, names in from_servers_files(servers).items():
            say(f"⚙ from {source} (mcp_servers_file): {', '.join(names)}")
        for status in await hub.start():
            if status.state == "failed":
                say(f"✗ tool server {status.name} failed: {status.error}")
            for tool, why in status.left_out:
                say(f"⚠ tool server {status.name}: tool {tool} left out, the server describes "
                    f"it wrongly ({why}); its other tools are offered")
        specs = hub.specs()
        try:
            resolved = resolve(allow, specs)
        except AmbiguousName as err:
            raise CliError(str(err)) from None
        for name in resolved.unknown:
            known = ", ".join(sorted(allow_flag(s) for s in specs)) or "none"
            say(f"jarvis-tui: --allow-tool {name}: no running server offers a tool of "
                f"that name (tools: {known})")
        # No one to ask: every call not allowed is refused (approve None).
        session.set_tools(hub, None, resolved.rules)
        offered = session.tools_offered()
        for line in tools_warnings(offered.model, offered.tools, offered.tokens, offered.budget,
                                   pick_language(settings.language)):
            say(line)
        yield hub
    finally:
        await hub.aclose()
