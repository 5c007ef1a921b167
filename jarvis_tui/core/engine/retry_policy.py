"""How long to wait before asking again, how much smaller to ask after a refusal, and what one
round has tried so far (RoundRetries, which the engine's round keeps, apart from its events)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jarvis_tui.core.providers.errors import ContextOverflow, ReadTimedOut, RetryableError
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.window.fit import FittedWindow

MAX_OVERFLOW_RETRIES = 3
MAX_TIMEOUT_RETRIES = 1  # a server that sent nothing for request_timeout is asked once more
SHRINK_PER_OVERFLOW = 0.75  # each overflow retry sends a window this much smaller...
# ...or, when the refusal names a size above our estimate, counts that gap in and sends a window
# this much smaller, for what the gap's spreading gets wrong.
OVERFLOW_MARGIN = 0.9
OVERFLOW_CALIBRATION_STEP = 1.5  # one refusal raises the calibration factor at most this much


def backoff(settings: Settings, attempt: int, retry_after: float | None,
            jitter: Callable[[], float]) -> float:
    if retry_after is not None:
        return min(max(retry_after, 0.0), max(settings.retry_max_delay, 60.0))
    # "Equal jitter": half the exponential step fixed, half random, so clients spread out.
    step = min(settings.retry_max_delay, settings.retry_base_delay * 2 ** (attempt - 1))
    return step / 2 + step / 2 * jitter()


def overflow_gap(err: ContextOverflow, fitted: FittedWindow, factor: float, gap: float) -> float:
    """Tokens a character the server counted in the refused request beyond our estimate of it
    (calibrated by `factor`, `gap` a character already added), or 0 when it counted no more.

    The retry counts every character that much dearer, so the shrink follows the measured ratio
    where it was measured: a request underestimated 10x fits on the first retry, and one message
    we misjudge (100,000 newlines) is cut, not sent whole again because we think it small.
    Spread by characters, not tokens: what we underestimate is what we thought cheap for its
    length."""
    chars = sum(len(m.get("content") or "") for m in fitted.wire)
    ours = fitted.estimated_raw * factor + gap * chars
    counted = err.requested or 0
    return (counted - ours) / chars if chars and counted > ours else 0.0


@dataclass
class RoundRetries:
    """What a round has tried since its last answered step: the refusals and faults counted
    against their limits, and how much smaller (`shrink`) and dearer a character (`gap`, tokens
    the server counted beyond our estimate) the next attempt is fitted. A tool step that was
    answered starts it again (`reset`)."""

    overflows: int = 0
    retries: int = 0
    timeouts: int = 0
    shrink: float = 1.0
    gap: float = 0.0

    def reset(self) -> None:
        self.overflows = self.retries = self.timeouts = 0
        self.shrink, self.gap = 1.0, 0.0

    def overflowed(self) -> bool:
        """Count a refusal for size; True when that is one too many."""
        self.overflows += 1
        return self.overflows > MAX_OVERFLOW_RETRIES

    def narrow(self, err: ContextOverflow, fitted: FittedWindow, factor: float) -> None:
        """The next attempt after a refusal: dearer by the gap it showed, or else smaller."""
        more = overflow_gap(err, fitted, factor, self.gap)
        self.gap += more
        self.shrink *= OVERFLOW_MARGIN if more else SHRINK_PER_OVERFLOW

    def faulted(self, err: RetryableError, max_retries: int) -> bool:
        """Count a transient fault; True when it is past the retries allowed (a read that
        timed out is allowed fewer: the server may be stuck, not busy)."""
        self.retries += 1
        self.timeouts += isinstance(err, ReadTimedOut)
        return self.retries > max_retries or self.timeouts > MAX_TIMEOUT_RETRIES
