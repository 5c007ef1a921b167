"""The prompt cache the fakes keep, as the real servers do, counted in the fake's own tokens.

A prompt is stored packed (4 bytes a token) so that comparing two of them is a C memcmp: the
shared prefix of two 100k-token prompts is found by halving in a handful of comparisons, not a
Python loop over every token. Not modelled: OpenAI's 1024-token minimum and 128-token steps,
DeepSeek's 64-token units, Anthropic's per-model minimum, 20-block lookback and expiry. A test
wants to see the prefix it sent twice, not those thresholds.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Sequence

TOKEN_BYTES = array("i").itemsize


def packed(tokens: Sequence[int]) -> bytes:
    return array("i", tokens).tobytes()


def shared_prefix(a: bytes, b: bytes) -> int:
    """How many tokens two packed prompts share from their start."""
    low, high = 0, min(len(a), len(b)) // TOKEN_BYTES
    while low < high:
        mid = (low + high + 1) // 2
        end = mid * TOKEN_BYTES
        if a[:end] == b[:end]:
            low = mid
        else:
            high = mid - 1
    return low


class PromptCache:
    """The last `slots` prompts (or prefixes) stored; a handler thread each reads and writes."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._entries: list[bytes] = []
        self._lock = threading.Lock()

    def common_prefix(self, tokens: Sequence[int]) -> int:
        """The longest prefix `tokens` shares with any stored prompt: a server that caches
        every prefix it computed (OpenAI, DeepSeek) or keeps one slot's KV cache (llama.cpp)."""
        key = packed(tokens)
        with self._lock:
            return max((shared_prefix(key, entry) for entry in self._entries), default=0)

    def longest_entry(self, tokens: Sequence[int], upto: int) -> int:
        """The longest stored prefix that `tokens` starts with, of at most `upto` tokens: a
        server that reads back only what an earlier request marked (Anthropic's breakpoints)."""
        key = packed(tokens)
        with self._lock:
            return max((len(entry) // TOKEN_BYTES for entry in self._entries
                        if len(entry) <= upto * TOKEN_BYTES and key.startswith(entry)),
                       default=0)

    def store(self, tokens: Sequence[int]) -> None:
        entry = packed(tokens)
        with self._lock:
            if entry in self._entries:
                self._entries.remove(entry)
            self._entries.append(entry)
            del self._entries[:-self.slots]
