"""Layer 1: fit a request into the token budget, newest first, groups kept whole.

Replaces the "last N messages" rule: one huge tool output or pasted file takes the room of many
short turns, and a run of short turns can reach far back. The stored messages are never changed;
a message too big for the whole budget is cut in the middle in the request only.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, islice
from operator import attrgetter
from typing import Any, Protocol

from jarvis_tui.core.calls.call_ids import with_unique_call_ids
from jarvis_tui.core.messages import Message, group_of, group_spans, sendable
from jarvis_tui.core.window.system_message import SystemCount, SystemMessage, count_system
from jarvis_tui.core.window.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, TokenCounter

OMITTED_MARKER = "\n[... {n} tokens omitted ...]\n"
NEW_MESSAGE_HEADER = "(End of the recalled turns. The user's new message:)"


def with_recalled(block: str, text: str) -> str:
    """The newest user message as sent with the turns recall brought back: beside the message
    they are for, not in the system message, which then stays the same from turn to turn (the
    provider's prompt cache holds everything before the new turn)."""
    return f"{block}\n\n{NEW_MESSAGE_HEADER}\n{text}" if block else text


@dataclass
class FittedWindow:
    wire: list[dict[str, Any]]  # the request's messages, system message first
    sent: list[Message]  # stored messages included, oldest first
    history_tokens: int  # calibrated tokens of the sent history
    dropped: int  # uncovered messages left out
    truncated: int  # messages cut in the middle for this request
    estimated_raw: int  # uncalibrated estimate of the whole request, for calibration
    truncations: dict[int, str] = field(default_factory=dict)  # id(msg) -> text sent instead
    # Stored message id -> the text sent instead of its content (cut to fit, or carrying
    # recalled turns): the next request sends it the same way, so it starts with this one.
    sent_as: dict[int, str] = field(default_factory=dict)
    # The system message sent, counted by the fit's counter: what the gauge, the inspector
    # and a compaction's prefix read of it.
    system: SystemCount | None = None


class Counts(Protocol):
    """What cutting a text needs of a counter: its count of a text."""

    def text(self, text: str) -> int: ...


def truncate_middle(text: str, max_tokens: int, counter: Counts,
                    marker: str = OMITTED_MARKER) -> tuple[str, int]:
    """`text` cut in the middle to about `max_tokens`, and how many tokens were left out.

    Keeps the head (what was asked, the file's start) and the tail (the conclusion, the last
    error in a log), which is where the meaning of long pastes usually sits.
    """
    total = counter.text(text)
    if total <= max_tokens:
        return text, 0
    keep_ratio = max(max_tokens - 16, 0) / total
    keep = int(len(text) * keep_ratio)
    for _ in range(8):
        head = keep // 2
        tail = keep - head
        kept = text[:head] + text[len(text) - tail:] if tail else text[:head]
        omitted = max(total - counter.text(kept), 1)
        candidate = text[:head] + marker.format(n=omitted) + (
            text[len(text) - tail:] if tail else "")
        if counter.text(candidate) <= max_tokens or keep == 0:
            return candidate, omitted
        keep = int(keep * 0.9)
    return marker.format(n=total).strip(), total


class _Sizes:
    """Tokens of a message as it will be sent: its content, or the text it was sent as."""

    def __init__(self, counter: TokenCounter, overrides: Mapping[int, str]) -> None:
        self.counter, self.overrides = counter, overrides

    def text(self, msg: Message) -> str:
        return self.overrides.get(msg.id, msg.content) if msg.id is not None else msg.content

    def message(self, msg: Message) -> int:
        if msg.id is None or msg.id not in self.overrides:
            return self.counter.message(msg)
        return self.counter.text(self.overrides[msg.id]) + MESSAGE_OVERHEAD

    def group(self, group: list[Message]) -> int:
        return sum(self.message(m) for m in group)


def _fit_mandatory(group: list[Message], room: int, sizing: _Sizes,
                   truncations: dict[int, str]) -> int:
    """Shrink the largest messages of `group` until it fits in `room`; return its tokens."""
    counter = sizing.counter
    sizes = {id(m): sizing.message(m) for m in group}
    total = sum(sizes.values())
    for msg in sorted(group, key=lambda m: sizes[id(m)], reverse=True):
        if total <= room:
            break
        others = total - sizes[id(msg)]
        target = max(room - others - MESSAGE_OVERHEAD, 32)
        text, omitted = truncate_middle(sizing.text(msg), target, counter)
        if omitted:
            truncations[id(msg)] = text
            new_size = counter.text(text) + MESSAGE_OVERHEAD
            total += new_size - sizes[id(msg)]
            sizes[id(msg)] = new_size
    return total


def fit_window(history: list[Message], *, budget: int, counter: TokenCounter,
               system: SystemMessage | SystemCount,
               pinned: Sequence[int] | None = None,
               sent_as: Mapping[int, str] | None = None) -> FittedWindow:
    """Choose what of `history` (the messages no summary covers) goes into the request.

    `budget` is the room for summary + history. The groups from the newest user message on are
    always sent (cut if they must be); pinned groups come next; then older groups, newest first,
    until one does not fit. Only the groups visited are counted, and `pinned` (the positions
    of the pinned messages, ascending, when the caller keeps them) spares the one scan of the
    older history for pinned flags: the cost follows the window, not the length of the history.
    `sent_as` (message id -> text) is how earlier requests sent a message that was cut or
    carried recalled turns: it is sent, and counted, that way again. `system`: the system
    message (counted already, when the caller counted it with this counter).
    """
    sizing = _Sizes(counter, sent_as or {})
    counted = (system.by(counter) if isinstance(system, SystemCount)
               else count_system(system, counter))
    room = budget - counted.summary
    truncations: dict[int, str] = {}
    # One walk, newest first: the older groups continue where the current turn stopped.
    spans = group_spans(history)
    chosen, used = _current_turn(history, spans, room, sizing, truncations)
    oldest = chosen[-1][0] if chosen else len(history)
    if pinned is None:  # a C-level scan for pinned flags (compress + attrgetter)
        flags = map(attrgetter("pinned"), islice(history, oldest))
        pinned = list(compress(range(oldest), flags))
    pinned_groups = {group_of(history, i) for i in pinned[:bisect_left(pinned, oldest)]}
    # Pinned groups first, then the older ones newest first, until one does not fit.
    used = _take(history, sorted(pinned_groups, reverse=True), chosen, used, room, sizing,
                 stop=False)
    used = _take(history, (s for s in spans if s not in pinned_groups), chosen, used, room,
                 sizing, stop=True)
    sent = [m for _, group in sorted(chosen, key=lambda c: c[0]) for m in group]
    return _fitted(history, sent, counted, sizing, truncations, used)


def _current_turn(history: list[Message], spans: Iterator[tuple[int, int]], room: int,
                  sizing: _Sizes, truncations: dict[int, str],
                  ) -> tuple[list[tuple[int, list[Message]]], int]:
    """The groups from the newest user message on, newest first as (position, messages), and
    their tokens: always sent, cut if they must be."""
    chosen: list[tuple[int, list[Message]]] = []
    for a, b in spans:
        group = sendable(history[a:b])
        if group:
            chosen.append((a, group))
            if history[a].role == "user":
                break
    mandatory = [m for _, group in reversed(chosen) for m in group]
    used = _fit_mandatory(mandatory, max(room, 64), sizing, truncations) if mandatory else 0
    return chosen, used


def _take(history: list[Message], spans: Iterable[tuple[int, int]],
          chosen: list[tuple[int, list[Message]]], used: int, room: int,
          sizing: _Sizes, *, stop: bool) -> int:
    """Add to `chosen` each group of `spans` that fits in what `room` leaves after `used`;
    `stop`: at the first that does not (older groups must not jump a gap). The tokens used."""
    for a, b in spans:
        group = sendable(history[a:b])
        if not group:
            continue
        size = sizing.group(group)
        if used + size > room:
            if stop:
                break
            continue
        chosen.append((a, group))
        used += size
    return used


def _fitted(history: list[Message], sent: list[Message], system: SystemCount, sizing: _Sizes,
            truncations: dict[int, str], used: int) -> FittedWindow:
    """The request's wire for `sent`, each message as it was cut or sent before, and the
    uncalibrated estimate calibration compares with the server's count."""
    sys_text, counter = system.message.text, system.counter
    wire = [{"role": "system", "content": sys_text}] if sys_text else []
    raw = REQUEST_OVERHEAD + (counter.raw_text(sys_text) + MESSAGE_OVERHEAD if sys_text else 0)
    sent_texts: dict[int, str] = {}
    for msg in sent:
        text = truncations.get(id(msg))
        if text is None and msg.id is not None:
            text = sizing.overrides.get(msg.id)
        if text is not None and msg.id is not None:
            sent_texts[msg.id] = text
        wire.append(msg.to_wire(text))
        raw += (counter.raw_text(text) + MESSAGE_OVERHEAD if text is not None
                else counter.raw_message(msg))
    return FittedWindow(
        wire=with_unique_call_ids(wire),
        sent=sent,
        history_tokens=used,
        dropped=len(history) - len(sent),
        truncated=len(truncations),
        estimated_raw=raw,
        truncations=truncations,
        sent_as=sent_texts,
        system=system,
    )
