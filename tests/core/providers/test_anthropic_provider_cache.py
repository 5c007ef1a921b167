"""Anthropic's prompt cache: the breakpoints AnthropicProvider marks, checked in the body the
fake received, and what the fake read back and wrote, as the provider reports it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import httpx
import pytest

from jarvis_tui.core.providers.anthropic import AnthropicProvider
from jarvis_tui.core.providers.base import ChatUsage
from tests.fake_anthropic import MAX_BREAKPOINTS, FakeAnthropic, error_body, prompt_of
from tests.provider_helpers import shared, stream_events, text_of

MODEL = "claude-fake"
collect = partial(stream_events, model=MODEL)
SYSTEM = {"role": "system", "content": "You are Jarvis. Answer in one line."}


def turn(role: str, text: str) -> dict:
    return {"role": role, "content": text}


def marked(body: dict) -> list[tuple[str, str]]:
    """(where, text) of every block that carries a breakpoint, in the order of the prompt."""
    system = body.get("system")
    found = [("system", b["text"]) for b in system if "cache_control" in b] \
        if isinstance(system, list) else []
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [(f"messages.{i}", b["text"]) for b in content if "cache_control" in b]
    return found


def usage_of(events: list) -> ChatUsage:
    return next(e for e in events if isinstance(e, ChatUsage))


@pytest.mark.parametrize("wire, where", [
    # The newest turn and the one before the newest user turn, behind the system block.
    ([SYSTEM, turn("user", "u1"), turn("assistant", "a1"), turn("user", "u2"),
      turn("assistant", "a2"), turn("user", "u3")],
     ["system", "messages.3", "messages.4"]),
    # A final assistant turn (a prefill) is the newest; the stable one is before the user turn.
    ([SYSTEM, turn("user", "u1"), turn("assistant", "a1"), turn("user", "u2"),
      turn("assistant", "a2")],
     ["system", "messages.1", "messages.3"]),
    # One turn, no system prompt: the one breakpoint there is room for.
    ([turn("user", "u1")], ["messages.0"]),
    # After compaction the kept turns may start with the assistant: behind the lead-in.
    ([SYSTEM, turn("assistant", "a1"), turn("user", "u1")],
     ["system", "messages.1", "messages.2"]),
])
async def test_breakpoints_go_where_a_later_request_reads_them_back(
        make_fake_anthropic: Callable[..., FakeAnthropic], wire: list[dict], where: list[str]):
    fake = make_fake_anthropic()
    async with AnthropicProvider(fake.base_url) as provider:
        await collect(provider, wire)
        await provider.complete(wire, model=MODEL, max_tokens=20)
    for rec in fake.message_requests:
        assert rec.status == 200  # the fake refuses what the API refuses, breakpoints included
        found = marked(rec.body)
        newest = f"messages.{len(rec.body['messages']) - 1}"
        # complete() is a summary's: nothing later starts with all of it, so its newest turn is
        # not written to the cache (a quarter dearer, never read back).
        expected = where if rec.body["stream"] else [w for w in where if w != newest]
        assert [w for w, _ in found] == expected
        assert len(found) <= MAX_BREAKPOINTS and all(text for _, text in found)
        # Unmarked turns are sent as before, plain strings.
        plain = [m for i, m in enumerate(rec.body["messages"])
                 if f"messages.{i}" not in expected]
        assert all(isinstance(m["content"], str) for m in plain)


async def test_the_fake_refuses_breakpoints_the_api_refuses(
        make_fake_anthropic: Callable[..., FakeAnthropic]):
    fake = make_fake_anthropic()
    mark = {"type": "ephemeral"}
    five = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": [{"type": "text", "text": f"turn {i}", "cache_control": mark}]}
            for i in range(5)]
    empty = [{"role": "user", "content": [{"type": "text", "text": "a"},
                                          {"type": "text", "text": "", "cache_control": mark}]}]
    head = {"anthropic-version": "2023-06-01"}
    async with httpx.AsyncClient() as client:
        answers = [await client.post(fake.base_url + "/v1/messages", headers=head, json={
            "model": MODEL, "max_tokens": 10, "messages": messages}) for messages in (five, empty)]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[0].json() == error_body(
        "invalid_request_error", "A maximum of 4 blocks with cache_control may be provided. "
        "Found 5.")
    assert answers[1].json() == error_body(
        "invalid_request_error",
        "messages.0.content.1.text: cache_control cannot be set for empty text blocks")


@pytest.mark.parametrize("repeat_usage", [False, True])
async def test_a_growing_conversation_reads_back_what_the_last_request_wrote(
        make_fake_anthropic: Callable[..., FakeAnthropic], repeat_usage: bool):
    """message_start has the counts; newer API versions repeat them in message_delta."""
    fake = make_fake_anthropic()
    fake.repeat_usage = repeat_usage
    wire = [SYSTEM, turn("user", "Where does the collector keep its deploy log?")]
    async with AnthropicProvider(fake.base_url) as provider:
        first = await collect(provider, wire)
        wire += [turn("assistant", text_of(first)), turn("user", "And its port?")]
        second = await collect(provider, wire)
        wire += [turn("assistant", "8443."), turn("user", "Thanks.")]
        done = await provider.complete(wire, model=MODEL, max_tokens=20)
    one, two, three = fake.message_requests
    assert usage_of(first) == ChatUsage(one.prompt_tokens, one.completion_tokens, 0,
                                        one.prompt_tokens)
    # The first prompt ended on its newest turn's breakpoint: all of it is read back...
    read = shared(prompt_of(one.body)[0], prompt_of(two.body)[0])
    assert read == one.prompt_tokens
    # ...and what the new turns add, up to the new newest breakpoint, is written.
    assert usage_of(second) == ChatUsage(two.prompt_tokens, two.completion_tokens, read,
                                         two.prompt_tokens - read)
    # The one-off request reads all of that back and writes only up to its stable turn, not
    # its newest ("Thanks."), which no later request would read.
    assert (done.prompt_tokens, done.cached_tokens) == (three.prompt_tokens, two.prompt_tokens)
    assert 0 < done.cache_write_tokens < three.prompt_tokens - two.prompt_tokens


async def test_a_retried_user_turn_is_read_back_up_to_the_stable_breakpoint(
        make_fake_anthropic: Callable[..., FakeAnthropic]):
    """Sent again with another newest user turn (cut down to fit, or edited), the request can
    only read back up to a breakpoint it shares with the first, not the longest shared prefix:
    the one on the turn before the newest user turn is what makes that read possible."""
    fake = make_fake_anthropic()
    history = [SYSTEM, turn("user", "Where is the deploy log?"), turn("assistant", "In /var.")]
    async with AnthropicProvider(fake.base_url) as provider:
        await collect(provider, [*history, turn("user", "And the port of the collector?")])
        again = await collect(provider, [*history, turn("user", "And the port of the agent?")])
    one, two = fake.message_requests
    tokens_one, marks_one = prompt_of(one.body)
    stable = marks_one[1]  # the end of the assistant turn
    assert marked(one.body)[1] == ("messages.1", "In /var.")
    assert usage_of(again).cached_tokens == stable
    assert usage_of(again).cache_write_tokens == two.prompt_tokens - stable
    assert shared(tokens_one, prompt_of(two.body)[0]) > stable  # more was shared, unmarked


async def test_a_changed_system_prompt_reads_nothing_back(
        make_fake_anthropic: Callable[..., FakeAnthropic]):
    fake = make_fake_anthropic()
    question = turn("user", "Where is the deploy log?")
    async with AnthropicProvider(fake.base_url) as provider:
        await collect(provider, [SYSTEM, question])
        later = await collect(provider, [turn("system", "Summary: the user asked before."),
                                         question])
    rec = fake.message_requests[-1]
    assert usage_of(later) == ChatUsage(rec.prompt_tokens, rec.completion_tokens, 0,
                                        rec.prompt_tokens)
