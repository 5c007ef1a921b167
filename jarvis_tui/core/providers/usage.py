"""Each server's own way of saying how much of the prompt came from its prompt cache, read into
ChatUsage, where prompt_tokens is always the whole prompt and cached_tokens the part of it read
from the cache (None: the server did not say, which is not the same as 0).

The shapes, as the servers' sources and docs have them:

- OpenAI: ``usage.prompt_tokens_details.cached_tokens``, present on every answer (0 below its
  1024-token minimum); streamed in the last chunk when ``stream_options.include_usage`` is set.
- DeepSeek: ``usage.prompt_cache_hit_tokens`` and ``prompt_cache_miss_tokens``, hit + miss being
  the whole prompt.
- llama.cpp's llama-server: ``timings.cache_n`` (tokens reused from the slot's KV cache) and
  ``timings.prompt_n`` (tokens evaluated) on the final chunk or answer, with or without usage;
  newer builds also put ``cache_n`` in ``usage.prompt_tokens_details.cached_tokens``. Its
  ``usage.prompt_tokens`` is the whole prompt, and so is cache_n + prompt_n.
- llama-cpp-python's server: usage has prompt, completion and total only; it reuses a cached
  prefix but never says how much, so nothing here applies and cached stays None.
"""

from __future__ import annotations

from collections.abc import Mapping

from jarvis_tui.core.providers.base import ChatUsage, Completion


def count(value: object) -> int | None:
    """A token count a server sent, or None: JSON's true is an int to Python, and a proxy's
    null, -1 (llama.cpp's "not measured") or "12" is not a count either."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def openai_usage(usage: object, timings: object = None) -> ChatUsage | None:
    """Usage from an OpenAI-compatible answer or chunk (its ``usage`` and llama.cpp's
    ``timings``), or None when neither says how long the prompt was."""
    raw = usage if isinstance(usage, Mapping) else {}
    times = timings if isinstance(timings, Mapping) else {}
    prompt, completion = count(raw.get("prompt_tokens")), count(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    hit = count(raw.get("prompt_cache_hit_tokens"))
    miss = count(raw.get("prompt_cache_miss_tokens"))
    if hit is not None:
        cached = hit
        if miss is not None:
            prompt = max(prompt or 0, hit + miss)
    reused, evaluated = count(times.get("cache_n")), count(times.get("prompt_n"))
    if reused is not None:
        cached = reused if cached is None else cached
        if evaluated is not None:
            # Whole even where usage is missing (no include_usage) or a build counted less.
            prompt = max(prompt or 0, reused + evaluated)
    if prompt is None:
        # prompt_n alone (builds before cache_n) counts only what was evaluated: not the prompt.
        return None
    if completion is None:
        completion = count(times.get("predicted_n")) or 0
    return ChatUsage(prompt, completion, _within(cached, prompt))


def anthropic_prompt(usage: object) -> tuple[int, int | None, int | None] | None:
    """(whole prompt, read from the cache, written to it) from an Anthropic usage object, or
    None without input_tokens. input_tokens is only the part after the last cache breakpoint
    the request read or wrote; the three together are the prompt."""
    if not isinstance(usage, Mapping):
        return None
    uncached = count(usage.get("input_tokens"))
    if uncached is None:
        return None
    read = count(usage.get("cache_read_input_tokens"))
    written = count(usage.get("cache_creation_input_tokens"))
    return uncached + (read or 0) + (written or 0), read, written


def ollama_usage(data: Mapping[str, object]) -> ChatUsage | None:
    """Usage from Ollama's final /api/chat object. prompt_eval_count is what the model saw after
    any silent truncation, cached prefix included (Ollama adds llama-server's cache_n to its
    prompt_n), which is what the engine compares with what it sent. Ollama itself reports
    nothing about its cache (its OpenAI and Anthropic layers say 0 whatever happened);
    prompt_eval_cached_count is read where a build sends it. Old Ollama left
    prompt_eval_count out when the whole prompt came from its cache: then nothing is known."""
    prompt = count(data.get("prompt_eval_count"))
    if prompt is None:
        return None
    cached = _within(count(data.get("prompt_eval_cached_count")), prompt)
    return ChatUsage(prompt, count(data.get("eval_count")) or 0, cached)


def completion(text: str, usage: ChatUsage | None, finish: str | None) -> Completion:
    """A one-shot answer carrying the same counts a stream of it would have."""
    if usage is None:
        return Completion(text, None, None, finish)
    return Completion(text, usage.prompt_tokens, usage.completion_tokens, finish,
                      usage.cached_tokens, usage.cache_write_tokens)


def _within(cached: int | None, prompt: int) -> int | None:
    # A part of the prompt can be no larger than the prompt, whatever a proxy adds up.
    return None if cached is None else min(cached, prompt)
