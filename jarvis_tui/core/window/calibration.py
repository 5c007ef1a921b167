"""How our token counts relate to the server's: the calibration factor, the server's count of
the last request (the anchor the next estimate builds on), and the tokens its chat template adds
to each message (the framing).

The factor is kept per provider and model in the session's meta: the same model name can be
tokenised differently elsewhere.
"""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.base import ChatUsage
from jarvis_tui.core.settings.config import Settings
from jarvis_tui.core.store.session_meta import SessionMeta
from jarvis_tui.core.window.anchor import Anchor
from jarvis_tui.core.window.fit import FittedWindow
from jarvis_tui.core.window.tokens import TokenCounter

META_CALIBRATION = "calibration"
FRAMING_MAX = 64.0  # tokens a template may add per message; beyond that something else changed
# Raw tokens from which a request's ratio is its text's: in a shorter one, the framing that is
# the protocol's rather than the tokenizer's (the reply's priming, the system message's envelope,
# which Anthropic's top-level system field does not have) is too large a share of it.
DECISIVE_TOKENS = 512


class Calibration:
    def __init__(self, settings: Settings, meta: SessionMeta,
                 counter: TokenCounter | None = None) -> None:
        self.settings = settings
        self.meta = meta
        self.counter = counter or self._make_counter()
        self.anchor: Anchor | None = None  # the server's count of the last request
        self.framing: float | None = None  # template tokens per message beyond our estimate

    @property
    def _key(self) -> str:
        return f"{self.settings.provider}:{self.settings.model}"

    def _make_counter(self) -> TokenCounter:
        factors = self._factors()
        factor = factors.get(self._key, factors.get(self.settings.model, 1.0))
        return TokenCounter(self.settings.model, factor=float(factor),
                            protocol=self.settings.provider)

    def _factors(self) -> dict:
        factors = self.meta.get(META_CALIBRATION)
        return factors if isinstance(factors, dict) else {}

    def apply(self, settings: Settings) -> None:
        changed = (settings.model, settings.provider) != (self.settings.model,
                                                          self.settings.provider)
        self.settings = settings
        if changed:
            self.counter = self._make_counter()
            self.anchor = self.framing = None  # another model, another tokenizer and template

    def forget_anchor(self) -> None:
        """The requests before were not ours to count (another process's) or not the messages
        as stored."""
        self.anchor = None

    def calibrate(self, estimated_raw: int, reported: int) -> None:
        if estimated_raw <= 0 or reported <= 0:
            return
        # The factor scales text, and a short request's ratio is mostly its framing's: learned
        # whole, a 32-token first turn framed 7 tokens leaner on Anthropic's wire had every file
        # after it read 22% low. Weighed by size, framing d tokens off moves the factor by at
        # most d / DECISIVE_TOKENS; the server's count of the short request still anchors the
        # gauge.
        self.counter.observe(estimated_raw, reported,
                             weight=min(1.0, estimated_raw / DECISIVE_TOKENS))
        factors = self._factors()
        factors[self._key] = self.counter.factor
        self.meta.remember(META_CALIBRATION, factors)

    def history_tokens(self, system: str, history: list[Message]) -> int | None:
        """The server-anchored tokens of a request of `system` and `history`, or None when it
        no longer starts with what the server counted."""
        if self.anchor is None:
            return None
        return self.anchor.total(system, history, self.counter, self.framing or 0.0)

    def set_anchor(self, fitted: FittedWindow, counted: ChatUsage, reply: Message, *,
                   truncates: bool) -> None:
        """The server's count of this request becomes the base of the next estimate, when it
        counted the messages as stored (none cut to fit) and counts the whole prompt."""
        if fitted.truncated or truncates:
            self.anchor = None
            return
        first = fitted.wire[0] if fitted.wire else {}
        system = first.get("content") or "" if first.get("role") == "system" else ""
        seen = self.anchor.framing_seen(system, fitted.sent, self.counter,
                                        counted.prompt_tokens) if self.anchor else None
        if seen is not None:
            # Chat templates frame each message in a few tokens more or less than we count
            # (chatml on Gemma: about 16); learned like the calibration factor.
            seen = min(FRAMING_MAX, max(-FRAMING_MAX, seen))
            self.framing = seen if self.framing is None else (self.framing + seen) / 2
        self.anchor = Anchor(system=system, ids=tuple(m.id for m in fitted.sent),
                             prompt_tokens=counted.prompt_tokens, reply_id=reply.id,
                             reply_tokens=counted.completion_tokens)
