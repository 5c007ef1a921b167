"""Context window, reserves and threshold turned into the numbers the engine and the gauge use."""

from __future__ import annotations

from dataclasses import dataclass

# Known context windows, used when the setting is 0 (auto) and the server did not tell us.
# Matched by prefix of the model name, longest prefix first.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "gemini": 1_048_576,
    "deepseek": 65_536,
    "qwen": 32_768,
    "llama3": 8_192,
    "llama-3": 8_192,
    "mistral": 32_768,
    "gemma": 8_192,
}
DEFAULT_WINDOW = 8_192
MIN_BUDGET = 256


def resolve_context_window(configured: int, model: str) -> tuple[int, str]:
    """The window to use and where it came from: "configured", "known model" or "default"."""
    if configured > 0:
        return configured, "configured"
    name = model.lower().rsplit("/", 1)[-1]
    for prefix in sorted(KNOWN_WINDOWS, key=len, reverse=True):
        if name.startswith(prefix):
            return KNOWN_WINDOWS[prefix], "known model"
    return DEFAULT_WINDOW, "default"


@dataclass(frozen=True)
class Budget:
    context_window: int
    response_reserve: int
    system_reserve: int
    compact_threshold: float

    @property
    def tokens(self) -> int:
        """What the conversation (summary + history + the new message) may use."""
        return self.context_window - self.response_reserve - self.system_reserve

    @property
    def threshold_tokens(self) -> int:
        return int(self.tokens * self.compact_threshold)

    def problems(self) -> list[str]:
        out = []
        if self.response_reserve < 0 or self.system_reserve < 0:
            out.append("reserves cannot be negative")
        if self.tokens < MIN_BUDGET:
            out.append(
                f"context window {self.context_window} minus response reserve "
                f"{self.response_reserve} minus system reserve {self.system_reserve} leaves "
                f"{self.tokens} tokens; at least {MIN_BUDGET} are needed"
            )
        if not 0.1 <= self.compact_threshold <= 1.0:
            out.append(f"compact threshold {self.compact_threshold} must be between 0.1 and 1.0")
        return out

    def usage(self, *, system: int, summary: int, history: int, pending: int,
              source: str, window_source: str = "configured", recalled: int = 0,
              tools: int = 0, memory: int = 0, attached: int = 0) -> BudgetUsage:
        return BudgetUsage(
            context_window=self.context_window,
            response_reserve=self.response_reserve,
            system_reserve=self.system_reserve,
            budget=self.tokens,
            threshold=self.threshold_tokens,
            system=system,
            summary=summary,
            history=history,
            pending=pending,
            source=source,
            window_source=window_source,
            recalled=recalled,
            tools=tools,
            memory=memory,
            attached=attached,
        )


@dataclass(frozen=True)
class BudgetUsage:
    """One snapshot of the budget: what the gauge draws and what events carry."""

    context_window: int
    response_reserve: int
    system_reserve: int
    budget: int
    threshold: int
    # The system prompt's and tool definitions' tokens, memory apart; only what exceeds
    # system_reserve counts as used.
    system: int
    summary: int
    history: int
    pending: int  # the message being typed or sent
    source: str  # "estimated", "calibrated" or "exact"
    # Where the context window came from: "configured", "detected from the server", "learned
    # from the server", "known model" or "default" (a guess: the gauge says the limit is unknown).
    window_source: str = "configured"
    recalled: int = 0  # earlier turns recall puts back for the message being typed or sent
    # Of `history`, what tool calls and their results take (as they are sent: cut or stubbed):
    # the gauge draws it as its own segment, inside the history's share, not on top of it.
    tools: int = 0
    # The user's memory entries in the system message, after the configured prompt. Counted
    # whole, like the summary, not inside the system reserve: the reserve is what the configured
    # prompt and the tool definitions are given, and memory has a budget of its own
    # (memory_budget). Inside the reserve it would look free up to whatever the prompt leaves
    # of it, and a longer prompt would then push memory's tokens into "system" on the gauge.
    memory: int = 0
    # Of `pending`, what the files waiting to go with it add: the gauge draws them apart.
    attached: int = 0

    @property
    def system_overflow(self) -> int:
        return max(0, self.system - self.system_reserve)

    @property
    def used(self) -> int:
        return (self.memory + self.summary + self.recalled + self.history + self.pending
                + self.system_overflow)

    @property
    def fraction(self) -> float:
        return self.used / self.budget if self.budget > 0 else 1.0

    @property
    def over_threshold(self) -> bool:
        return self.used > self.threshold
