"""What requests cost: token counts priced per model, summed per session, and written for people.

Prices come only from the user's config (`[prices."MODEL"]`, money per million tokens): there is
no built-in price list, because a list shipped here would be wrong the day a vendor changes it.
Numbers are written with plain ASCII grouping (1,234,567) whatever the locale or the language.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

PER = 1_000_000  # prices are per million tokens
DEFAULT_CURRENCY = "$"


@dataclass(frozen=True)
class Price:
    """One model's prices, in money per million tokens."""

    input: float
    output: float
    cached_input: float | None = None  # None: cached tokens cost as much as the others
    cache_write: float | None = None  # None: tokens written to the cache cost `input`
    currency: str = DEFAULT_CURRENCY


def cost(price: Price, prompt_tokens: int, completion_tokens: int,
         cached_tokens: int | None = None, cache_write_tokens: int | None = None) -> float:
    """The money one request (or a sum of them) cost. `prompt_tokens` is the whole prompt, the
    cached and written parts included; None for those means the server did not say, so they are
    priced as plain input, which is what a server that does not report caching bills."""
    cached = max(0, cached_tokens or 0)
    written = max(0, cache_write_tokens or 0)
    # A server whose parts add up to more than the whole is believed about the parts.
    plain = max(0, prompt_tokens - cached - written)
    cached_price = price.input if price.cached_input is None else price.cached_input
    write_price = price.input if price.cache_write is None else price.cache_write
    return (plain * price.input + cached * cached_price + written * write_price
            + max(0, completion_tokens) * price.output) / PER


class Counts(Protocol):
    """One request's counts: the engine's Usage event, or a stored usage row."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int | None: ...
    @property
    def cache_write_tokens(self) -> int | None: ...


class Summed(Protocol):
    """A sum of stored usage rows of one kind and model (the store's UsageTotal)."""

    kind: str
    model: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None
    cache_write_tokens: int | None
    reported_requests: int
    reported_prompt_tokens: int
    freed_tokens: int | None


@dataclass(frozen=True)
class Tally:
    """A session's usage, every kind and model summed, and what the priced part of it cost."""

    chat_requests: int = 0
    summary_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None  # None: no request of the session reported it
    cache_write_tokens: int | None = None
    reported_requests: int = 0  # requests whose server said how much of the prompt was cached
    reported_prompt_tokens: int = 0  # ...and their prompt tokens, what the cached share is of
    freed_tokens: int | None = None  # what the session's compactions freed
    money: dict[str, float] = field(default_factory=dict)  # currency: amount, priced models
    unpriced: tuple[str, ...] = ()  # models used that have no price in the config

    @property
    def requests(self) -> int:
        return self.chat_requests + self.summary_requests

    @property
    def cached_share(self) -> float | None:
        """Of the prompt tokens of the requests that said, the share read from the cache."""
        if self.cached_tokens is None or self.reported_prompt_tokens <= 0:
            return None
        return min(1.0, self.cached_tokens / self.reported_prompt_tokens)


def _add(a: int | None, b: int | None) -> int | None:
    return a if b is None else b if a is None else a + b


def tally(totals: Iterable[Summed], prices: Mapping[str, Price]) -> Tally:
    """Sum the store's per-kind-and-model totals, pricing each model at its own price."""
    chat = summary = prompt = completion = reported = reported_prompt = 0
    cached = written = freed = None
    money: dict[str, float] = {}
    unpriced: list[str] = []
    for t in totals:
        if t.kind == "summary":
            summary += t.requests
        else:
            chat += t.requests
        prompt += t.prompt_tokens
        completion += t.completion_tokens
        cached = _add(cached, t.cached_tokens)
        written = _add(written, t.cache_write_tokens)
        freed = _add(freed, t.freed_tokens)
        reported += t.reported_requests
        reported_prompt += t.reported_prompt_tokens
        price = prices.get(t.model)
        if price is None:
            if t.model not in unpriced:
                unpriced.append(t.model)
            continue
        money[price.currency] = money.get(price.currency, 0.0) + cost(
            price, t.prompt_tokens, t.completion_tokens, t.cached_tokens, t.cache_write_tokens)
    return Tally(chat, summary, prompt, completion, cached, written, reported, reported_prompt,
                 freed, money, tuple(unpriced))


@dataclass(frozen=True)
class CompactionCost:
    """What one compaction's summary requests cost, and what it took off the request."""

    requests: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None
    cache_write_tokens: int | None
    freed_tokens: int | None
    model: str


class Row(Counts, Protocol):
    @property
    def model(self) -> str: ...
    @property
    def freed_tokens(self) -> int | None: ...


def compaction_cost(rows: Sequence[Row]) -> CompactionCost | None:
    """The stored summary requests of one compaction, summed; None when there are none."""
    if not rows:
        return None
    cached = written = freed = None
    for r in rows:
        cached = _add(cached, r.cached_tokens)
        written = _add(written, r.cache_write_tokens)
        freed = _add(freed, r.freed_tokens)
    return CompactionCost(len(rows), sum(r.prompt_tokens for r in rows),
                          sum(r.completion_tokens for r in rows), cached, written, freed,
                          rows[-1].model)


# -- writing numbers for people -------------------------------------------------------------------

def tokens(n: int) -> str:
    """1234567 -> "1,234,567": ASCII grouping in every language (never 123万)."""
    return f"{n:,}"


def share(part: float) -> str:
    """A share as a whole percentage; a little is "<1%" and nearly all "99%", never rounded
    to a 0% or 100% that is not true."""
    if part <= 0:
        return "0%"
    if part >= 1:
        return "100%"
    pct = part * 100
    if pct < 1:
        return "<1%"
    return f"{min(99, round(pct))}%"


def money(amount: float, currency: str = DEFAULT_CURRENCY) -> str:
    """$1,234.57 for sums of a cent or more; smaller ones keep two significant digits ($0.0042,
    $0.000012), so a cheap turn does not read as free."""
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if amount == 0:
        text = "0.00"
    elif amount < 0.01 and round(amount, -math.floor(math.log10(amount)) + 1) < 0.01:
        text = f"{amount:.{-math.floor(math.log10(amount)) + 1}f}"
    else:
        text = f"{amount:,.2f}"
    # A currency written as a code (EUR, CNY) reads better apart from the number.
    gap = " " if currency[-1:].isalpha() else ""
    return f"{sign}{currency}{gap}{text}"


def moneys(amounts: Mapping[str, float]) -> str:
    """Sums in more than one currency side by side ("$0.12 + ¥0.80"); they are never added."""
    return " + ".join(money(amount, currency) for currency, amount in amounts.items())
