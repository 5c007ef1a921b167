"""Prefix-cache figures computed from the fake server's log of whole request bodies.

A request becomes the token sequence the fake charges for it (tests/fakeserver.count_prompt:
3 per message, its values in cl100k, 3 to prime the reply), so lengths match the server's own
count. The cache is one slot, as llama.cpp's: a request reuses its longest common prefix (LCP)
with the request just before it, and pays for the rest ("fresh" tokens).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from os.path import commonprefix

from bench.shared.cache_clients import request_kind
from jarvis_tui.core.compaction.summarizer import (
    MERGE_NOTE,
    REPAIR_INSTRUCTION,
    SUMMARY_SYSTEM_PROMPT,
)
from jarvis_tui.core.window.fit import NEW_MESSAGE_HEADER
from tests.fakeserver import ENCODING, RecordedRequest, count_tokens, openai_part_tokens

# Stand-ins for the template tokens around each message: negative, so no text token matches
# them, and the same before every message and before the reply, which is how chatml's
# "<|im_start|>" lets the next request's assistant message continue the priming.
FRAME = (-1, -2, -3)
NAME = (-4,)  # the fake's +1 for a message's name


@lru_cache(maxsize=4096)
def _encode(text: str) -> tuple[int, ...]:
    # Cached: each message comes back in request after request.
    return tuple(ENCODING.encode(text, disallowed_special=()))


def request_tokens(messages: list[dict], tools: list | None = None) -> tuple[int, ...]:
    # Tool definitions go ahead of the messages, as the server renders them (the built-in
    # search_history is offered once a summary exists).
    out: list[int] = list(_encode(json.dumps(tools, ensure_ascii=False))) if tools else []
    for message in messages:
        out += FRAME
        for key, value in message.items():
            if value is None:
                continue
            if isinstance(value, str):
                out += _encode(value)
            elif key == "content" and isinstance(value, list):
                for part in value:
                    if isinstance(part, dict) and part.get("type") == "image_url":
                        out += openai_part_tokens(part)  # the fake's ids for the image
                    elif isinstance(part, dict):
                        out += _encode(part.get("text", ""))
            else:
                out += _encode(json.dumps(value, ensure_ascii=False))
            if key == "name":
                out += NAME
    return tuple(out + list(FRAME))


def lcp(a: tuple[int, ...], b: tuple[int, ...] | None) -> int:
    return len(commonprefix([a, b])) if b else 0


@dataclass
class Stats:
    turns: int
    refused: int = 0  # requests the server refused (a 400: nothing evaluated, nothing cached)
    summaries: int = 0  # summary requests answered
    sent: int = 0  # prompt tokens of every request, refused ones too
    chat_tokens: int = 0
    chat_fresh: int = 0
    summary_fresh: int = 0
    small_prompt_fresh: int = 0  # ... of summary requests with their own small prompt
    small_prompt_requests: int = 0
    reuse_any: int = 0  # sum of each chat request's LCP with the request just before it
    reuse_chat: int = 0  # ... with the chat request before it
    # Each chat request's new message and the reply before it: fresh for any client, so the
    # most any client could reuse of this workload is the rest.
    new_content: int = 0
    broke: set[int] = field(default_factory=set)  # turns whose chat request broke the prefix
    unexplained: set[int] = field(default_factory=set)  # ... with no summary request between
    fresh: list[int] = field(default_factory=list)  # per turn, chat and summary requests
    # Each evaluated request's fresh tokens, in order, by what it was (request_label).
    evaluated: list[tuple[str, int]] = field(default_factory=list)
    # Per answered turn, the user's message as its last chat request sent it (a cut paste as
    # cut, without turns recall put in front) plus the reply: what even a perfect cache has
    # to evaluate once.
    new_turns: int = 0

    def pct(self, part: int) -> float:
        return 100.0 * part / self.chat_tokens if self.chat_tokens else 0.0

    def by_label(self) -> dict[str, int]:
        """Fresh tokens per request label; small-prompt requests whose parts a merge request
        then joined are the chunks of one summary."""
        totals: dict[str, int] = {}
        pending: list[int] = []  # fresh tokens of small-prompt requests since the last chat
        for label, fresh in self.evaluated:
            if label == "small prompt":
                pending.append(fresh)
                continue
            if label == "merge":
                totals["chunk"] = totals.get("chunk", 0) + sum(pending)
                pending.clear()
            elif label == "chat" and pending:
                totals["small prompt"] = totals.get("small prompt", 0) + sum(pending)
                pending.clear()
            totals[label] = totals.get(label, 0) + fresh
        if pending:
            totals["small prompt"] = totals.get("small prompt", 0) + sum(pending)
        return totals

    @property
    def evaluated_per_new(self) -> float:
        """Tokens evaluated anew over the new content: 1.0 is a cache that never re-reads."""
        return sum(f for _, f in self.evaluated) / self.new_turns if self.new_turns else 0.0


def request_label(body: dict) -> str:
    """"chat", "probe", or which summary request: at the end of the chat prefix ("prefix"),
    or with the small prompt: a merge of parts, a repair, or a transcript ("small prompt",
    which by_label tells from a chunk by the merge after it)."""
    kind = request_kind(body)
    if kind != "summary":
        return kind
    messages = body["messages"]
    if messages[0].get("content") != SUMMARY_SYSTEM_PROMPT:
        return "prefix"
    material = messages[-1].get("content") or ""
    if MERGE_NOTE in material.split("\n\n", 2)[:2]:  # a focus line may come first
        return "merge"
    return "repair" if material.startswith(REPAIR_INSTRUCTION) else "small prompt"


def turn_content(rec: RecordedRequest) -> int:
    """The user's message as `rec` (a turn's last answered chat request) sent it, and the
    reply to it, in tokens."""
    users = [m for m in rec.body["messages"] if m.get("role") == "user"]
    text = users[-1].get("content") if users else ""
    text = text if isinstance(text, str) else ""
    _, header, own = text.rpartition(NEW_MESSAGE_HEADER + "\n")
    return count_tokens(own if header else text) + rec.completion_tokens


def measure(requests: list[RecordedRequest], starts: list[int], turns: int) -> Stats:
    """`starts[t]`: how many requests had been logged when turn t began."""
    stats = Stats(turns, fresh=[0] * turns)
    previous = previous_chat = None
    summary_since = False
    last_answered: dict[int, RecordedRequest] = {}  # turn -> its last answered chat request
    for index, rec in enumerate(requests):
        if not rec.path.endswith("/chat/completions"):
            continue
        turn = bisect_right(starts, index) - 1
        stats.sent += rec.prompt_tokens
        if rec.status != 200:
            stats.refused += 1
            continue  # a refused request is not evaluated and leaves the cache as it was
        tokens = request_tokens(rec.body["messages"], rec.body.get("tools"))
        assert len(tokens) == rec.prompt_tokens, "the bench must count as the fake counts"
        fresh = len(tokens) - lcp(tokens, previous)
        stats.fresh[turn] += fresh
        stats.evaluated.append((request_label(rec.body), fresh))
        kind = request_kind(rec.body)
        if kind == "probe":
            pass  # evaluated, so it holds the cache slot, but it is neither chat nor summary
        elif kind == "summary":
            stats.summaries += 1
            stats.summary_fresh += fresh
            if rec.body["messages"][0].get("content") == SUMMARY_SYSTEM_PROMPT:
                stats.small_prompt_requests += 1
                stats.small_prompt_fresh += fresh
            summary_since = True
        else:
            stats.chat_tokens += len(tokens)
            stats.chat_fresh += fresh
            messages = rec.body["messages"]
            newest = 2 if len(messages) > 2 and messages[-2]["role"] == "assistant" else 1
            before = request_tokens(messages[:-newest], rec.body.get("tools"))
            stats.new_content += len(tokens) - len(before)
            stats.reuse_any += len(tokens) - fresh
            if previous_chat is not None:
                common = lcp(tokens, previous_chat)
                stats.reuse_chat += common
                if common < len(previous_chat):
                    stats.broke.add(turn)
                    if not summary_since:
                        stats.unexplained.add(turn)
            previous_chat, summary_since = tokens, False
            last_answered[turn] = rec
        previous = tokens
    stats.new_turns = sum(turn_content(rec) for rec in last_answered.values())
    return stats
