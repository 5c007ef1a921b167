"""The numbers a request is held to, worked out from the settings and the window alone: the
budget, the summary's length cap and the details ledger's room.

Apart from the engine because they need nothing else: plain functions of their inputs, which
the engine calls with its live settings and window (both change between requests), and which a
bench can call without building an engine.
"""

from __future__ import annotations

from jarvis_tui.core.budget import MIN_BUDGET, Budget
from jarvis_tui.core.settings.config import Settings

DETAILS_FLOOR = 512  # the ledger's room on a small window: twenty facts said in a line each
DETAILS_FLOOR_SHARE = 0.2  # but never more of a small budget than this


def budget_for(settings: Settings, window: int) -> Budget:
    """The budget; when a learned limit is small, the reserves shrink so some room is left."""
    response, system = settings.response_reserve, settings.system_reserve
    if window - response - system < MIN_BUDGET:
        response = min(response, window // 4)
        system = min(system, window // 8)
    return Budget(window, response, system, settings.compact_threshold)


def summary_cap(settings: Settings, budget: Budget) -> int:
    """The summary's length cap: the setting, but never a third of a small budget or more."""
    return min(settings.summary_max_tokens, max(budget.tokens // 3, 64))


def details_room(settings: Settings, budget: Budget) -> int:
    """The ledger's room: a share of the budget, so that a long working session at a large
    window keeps every detail the user said, with a floor for small windows (but never more
    than a quarter of the budget), within the setting's cap."""
    tokens = budget.tokens
    if settings.details_share <= 0 or settings.details_max_tokens <= 0:
        return 0
    room = max(min(DETAILS_FLOOR, int(tokens * DETAILS_FLOOR_SHARE)),
               int(tokens * settings.details_share))
    return min(room, settings.details_max_tokens, tokens // 4)
