"""The server's own count of the last request, as the base of the next estimate.

One calibration factor still misses by whatever the newest messages tokenize differently from
the average (Chinese after English, code after prose). But the server counted every token of
the last request and, when it says, of its reply. While those messages are sent again exactly
as they were (no compaction, eviction, truncation or summary edit since), the next request is
that count plus estimates for what came after: the gauge estimates only what is new.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jarvis_tui.core.messages import Message
from jarvis_tui.core.window.tokens import TokenCounter


@dataclass(frozen=True)
class Anchor:
    system: str  # the system message as sent ("" when there was none)
    ids: tuple[int | None, ...]  # the stored messages sent, in order
    prompt_tokens: int  # the server's count of that request
    reply_id: int | None = None  # the reply to it, and the server's count of its text
    reply_tokens: int = 0

    def total(self, system: str, history: Sequence[Message], counter: TokenCounter,
              framing: float = 0.0) -> int | None:
        """Tokens of a request of `system` and `history`, or None when it no longer starts
        with what the server counted. `framing`: tokens the server's chat template adds to
        each message beyond our estimate of it (learned by `framing_seen`)."""
        n = len(self.ids)
        if system != self.system or len(history) < n \
                or tuple(m.id for m in history[:n]) != self.ids:
            return None
        total = float(self.prompt_tokens)
        for msg in history[n:]:
            if self.reply_tokens and msg.id == self.reply_id:
                # The text as the server counted it; the framing around it as estimated.
                total += self.reply_tokens + counter.message(msg) - counter.text(msg.content)
            else:
                total += counter.message(msg)
            total += framing
        return max(self.prompt_tokens, round(total))

    def framing_seen(self, system: str, sent: Sequence[Message], counter: TokenCounter,
                     prompt_tokens: int) -> float | None:
        """What the server counted per added message beyond our estimate, from the next
        request's count; None when that request did not start with this one."""
        added = len(sent) - len(self.ids)
        predicted = self.total(system, sent, counter)
        if predicted is None or added <= 0:
            return None
        return (prompt_tokens - predicted) / added
