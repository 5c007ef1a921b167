"""Error classification against the bodies real servers send.

Each overflow body is the wording the server really uses (OpenAI, vLLM old and new, llama.cpp
server in its three eras, OpenRouter, Anthropic, Gemini), as found in their sources and in
bug reports quoting them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from jarvis_tui.core.providers.errors import (
    AuthError,
    ContextOverflow,
    NetworkError,
    ProviderError,
    RateLimited,
    RequestError,
    RetryableError,
    ServerError,
    ToolsRefused,
    classify,
    context_limit_from_text,
    parse_retry_after,
    provider_message,
)


def _j(obj: object) -> str:
    return json.dumps(obj)


# (name, status, body, limit, requested) -- requested is the prompt count when the text
# separates prompt from completion, else the total it names.
OVERFLOWS = [
    ("openai messages", 400, _j({"error": {
        "message": "This model's maximum context length is 4097 tokens. However, your messages "
                   "resulted in 4619 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}), 4097, 4619),
    ("openai completion", 400, _j({"error": {
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
                   "4130 tokens (3130 in the messages, 1000 in the completion). Please reduce "
                   "the length of the messages or completion.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}), 4096, 3130),
    ("openai configured limit", 400, _j({"error": {
        "message": "Input tokens exceed the configured limit of 272000 tokens. Your messages "
                   "resulted in 305127 tokens.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}), 272000, 305127),
    ("vllm old", 400, _j({
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
                   "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce "
                   "the length of the messages or completion.",
        "type": "BadRequestError", "param": None, "code": 400}), 4096, 4000),
    ("vllm input tokens", 400, _j({"error": {
        "message": "This model's maximum context length is 32768 tokens. However, your request "
                   "has 59360 input tokens. Please reduce the length of the input messages.",
        "type": "BadRequestError", "param": None, "code": 400}}), 32768, 59360),
    ("vllm max_tokens too large", 400, _j({"error": {
        "message": "'max_tokens' or 'max_completion_tokens' is too large: 16384. This model's "
                   "maximum context length is 65536 tokens and your request has 52189 input "
                   "tokens (16384 > 65536 - 52189). (parameter=max_tokens, value=16384)",
        "type": "BadRequestError", "param": None, "code": 400}}), 65536, 52189),
    ("vllm you passed", 400, _j({"error": {
        "message": "You passed 202753 input tokens and requested 0 output tokens. However, the "
                   "model's context length is only 202752 tokens, resulting in a maximum input "
                   "length of 202752 tokens.",
        "type": "BadRequestError", "param": None, "code": 400}}), 202752, 202753),
    ("llama.cpp new", 400, _j({"error": {
        "code": 400,
        "message": "request (4476 tokens) exceeds the available context size (4096 tokens), "
                   "try increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 4096}}),
     4096, 4476),
    ("llama.cpp typed", 400, _j({"error": {
        "code": 400, "message": "the request exceeds the available context size, try "
                                "increasing it",
        "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}),
     4096, 5000),
    ("llama.cpp context shift", 400, _j({"error": {
        "code": 400, "message": "the request exceeds the available context size. try "
                                "increasing the context size or enable context shift",
        "type": "invalid_request_error"}}), None, None),
    ("llama.cpp old 500", 500, _j({"error": {
        "code": 500, "message": "the request exceeds the available context size, try "
                                "increasing it",
        "type": "server_error"}}), None, None),
    ("llama.cpp batch 500", 500, _j({"error": {
        "code": 500, "message": "input is too large to process. increase the physical batch "
                                "size",
        "type": "server_error"}}), None, None),
    ("openrouter", 400, _j({"error": {
        "message": "This endpoint's maximum context length is 131072 tokens. However, you "
                   "requested about 138956 tokens (7884 of text input, 131072 in the output). "
                   "Please reduce the length of either one, or use the \"middle-out\" transform "
                   "to compress your prompt automatically.",
        "code": 400}}), 131072, 7884),
    ("openrouter passing anthropic", 400, _j({"error": {
        "message": "Provider returned error", "code": 400, "metadata": {
            "raw": _j({"message": "input length and `max_tokens` exceed context limit: 149674 "
                                  "+ 64000 > 204658, decrease input length or `max_tokens` "
                                  "and try again"}),
            "provider_name": "Amazon Bedrock"}}}), 204658, 149674),
    ("anthropic prompt", 400, _j({
        "type": "error", "error": {"type": "invalid_request_error",
                                   "message": "prompt is too long: 208310 tokens > 200000 "
                                              "maximum"}}), 200000, 208310),
    ("anthropic max_tokens", 400, _j({
        "type": "error", "error": {
            "type": "invalid_request_error",
            "message": "input length and `max_tokens` exceed context limit: 199759 + 8192 > "
                       "200000, decrease input length or `max_tokens` and try again"}}),
     200000, 199759),
    ("gemini", 400, _j({"error": {
        "code": 400, "message": "The input token count (1200293) exceeds the maximum number of "
                                "tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}),
     1048576, 1200293),
    ("gemini openai-compat list", 400, _j([{"error": {
        "code": 400, "message": "The input token count (134123) exceeds the maximum number of "
                                "tokens allowed (131072).",
        "errors": [{"message": "The input token count (134123) exceeds the maximum number of "
                               "tokens allowed (131072).", "domain": "global",
                    "reason": "badRequest"}],
        "status": "INVALID_ARGUMENT"}}]), 131072, 134123),
    # The LiteLLM proxy (1.108) passes its backend's refusal on inside its own exception's
    # words (here llama-cpp-python's), as it answered an unstreamed request over the window.
    ("litellm proxy", 400, _j({"error": {
        "message": "litellm.ContextWindowExceededError: litellm.BadRequestError: "
                   "ContextWindowExceededError: OpenAIException - This model's maximum context "
                   "length is 2048 tokens. However, you requested 3103 tokens (3039 in the "
                   "messages, 64 in the completion). Please reduce the length of the messages "
                   "or completion.\nmodel=local. context_window_fallbacks=None. fallbacks=None."
                   "\n\nSet 'context_window_fallback' - https://docs.litellm.ai/docs/routing"
                   "#fallbacks\n\nLiteLLM: model group 'local' failed with the error above. No "
                   "fallback was attempted.", "type": "invalid_request_error", "param": None,
        "code": "400"}}), 2048, 3039),
]

# (name, status, body, tool, index, schema): refusals of one tool's definition, in the real
# servers' words, and how each points at the tool.
TOOL_REFUSALS = [
    ("openai", 400, _j({"error": {
        "message": "Invalid schema for function 'get_me': In context=(), object schema missing "
                   "properties.", "type": "invalid_request_error",
        "param": "tools[13].function.parameters", "code": "invalid_function_parameters"}}),
     "get_me", 13, None),
    ("openai no param", 400, _j({"error": {
        "message": "Invalid schema for function 'odoo_model_inspector': In context=("
                   "'properties', 'method_name_filter'), schema must have a 'type' key.",
        "type": "invalid_request_error", "param": None, "code": None}}),
     "odoo_model_inspector", None, None),
    ("anthropic", 400, _j({"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "tools.17.custom.input_schema: JSON schema is invalid. It must match JSON "
                   "Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more "
                   "about tool use at https://docs.claude.com/en/docs/tool-use."},
        "request_id": "req_011Ce2ZWqbB1mTx8WWqB4D8k"}), None, 17, None),
    ("llama.cpp", 400, _j({"error": {
        "code": 400, "message": "JSON schema conversion failed:\nUnrecognized schema: "
                                "{\"description\":\"Arguments for the tool (JSON object)\"}",
        "type": "invalid_request_error"}}),
     None, None, {"description": "Arguments for the tool (JSON object)"}),
    ("llama.cpp before 400", 500, _j({"error": {
        "code": 500, "message": "JSON schema conversion failed:\nUnrecognized schema: "
                                "{\"required\":[\"prompt\"]}", "type": "server_error"}}),
     None, None, {"required": ["prompt"]}),
]


@pytest.mark.parametrize(("name", "status", "body", "tool", "index", "schema"), TOOL_REFUSALS,
                         ids=[r[0] for r in TOOL_REFUSALS])
def test_a_refused_tool_definition_is_told_apart_and_points_at_its_tool(
        name: str, status: int, body: str, tool: str | None, index: int | None,
        schema: object) -> None:
    err = classify(status, body)
    assert type(err) is ToolsRefused  # not retried as a 5xx, not a plain final refusal
    assert (err.tool, err.index, err.schema) == (tool, index, schema)
    assert "\n" not in err.message and f"({status})" in err.message


@pytest.mark.parametrize(("name", "status", "body", "limit", "requested"), OVERFLOWS,
                         ids=[o[0] for o in OVERFLOWS])
def test_overflow_bodies_are_recognised(name: str, status: int, body: str, limit: int | None,
                                        requested: int | None) -> None:
    err = classify(status, body)
    assert type(err) is ContextOverflow
    assert err.limit == limit
    assert err.requested == requested
    assert err.status == status
    assert err.body == body
    assert "\n" not in err.message
    assert f"({status})" in err.message


def test_totals_are_kept_apart_from_the_prompt_count() -> None:
    vllm = classify(400, OVERFLOWS[3][2])
    assert isinstance(vllm, ContextOverflow)
    assert (vllm.requested, vllm.total_requested) == (4000, 5000)
    anthropic = classify(400, OVERFLOWS[15][2])
    assert isinstance(anthropic, ContextOverflow)
    assert anthropic.total_requested == 199759 + 8192


def test_overflow_message_carries_the_providers_words() -> None:
    err = classify(400, OVERFLOWS[0][2])
    assert err.message.startswith("The request does not fit the model's context window (400): ")
    assert "maximum context length is 4097 tokens" in err.message


def test_overflow_inside_a_stream_has_no_status() -> None:
    err = classify(None, OVERFLOWS[7][2])
    assert isinstance(err, ContextOverflow)
    assert err.status is None and err.limit == 4096


def test_413_from_a_proxy_is_an_overflow() -> None:
    body = "<html><head><title>413 Request Entity Too Large</title></head><body></body></html>"
    err = classify(413, body)
    assert isinstance(err, ContextOverflow)
    assert err.limit is None
    assert "413 Request Entity Too Large" in err.message


def test_context_limit_from_plain_text() -> None:
    assert context_limit_from_text("This model's maximum context length is 8,192 tokens.") == 8192
    assert context_limit_from_text("the request exceeds the available context size. n_ctx = "
                                   "32768, n_tokens = 33990") == 32768
    assert context_limit_from_text("something else went wrong") is None


def test_429_with_retry_after_seconds() -> None:
    body = _j({"error": {"message": "Rate limit reached for requests", "type": "requests",
                         "code": "rate_limit_exceeded"}})
    err = classify(429, body, {"Retry-After": "7"})
    assert type(err) is RateLimited
    assert isinstance(err, RetryableError)
    assert err.retry_after == 7.0
    assert err.message == "Rate limited by the server (429): Rate limit reached for requests"


def test_429_with_retry_after_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=120)
    err = classify(429, "{}", {"retry-after": format_datetime(when, usegmt=True)})
    assert isinstance(err, RateLimited)
    assert err.retry_after is not None and 60 < err.retry_after <= 120


def test_retry_after_date_against_a_fixed_clock() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    header = {"Retry-After": "Wed, 01 Jan 2025 12:00:30 GMT"}
    assert parse_retry_after(header, now=now.timestamp()) == 30.0
    assert parse_retry_after({"Retry-After": "Wed, 01 Jan 2025 11:00:00 GMT"},
                             now=now.timestamp()) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after(None) is None


def test_retry_after_ms_wins() -> None:
    err = classify(429, "", {"retry-after-ms": "1500", "Retry-After": "2"})
    assert isinstance(err, RateLimited) and err.retry_after == 1.5


def test_retry_hint_in_the_message_when_no_header() -> None:
    body = _j({"error": {"message": "Rate limit reached for gpt-4o on tokens per min (TPM): "
                                    "Limit 30000, Used 29000, Requested 2000. Please try again "
                                    "in 2.5s.", "code": "rate_limit_exceeded"}})
    err = classify(429, body)
    assert isinstance(err, RateLimited) and err.retry_after == 2.5


def test_503_is_a_retryable_server_error() -> None:
    body = _j({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
    err = classify(503, body, {"Retry-After": "3"})
    assert type(err) is ServerError
    assert err.retry_after == 3.0
    assert err.message == "Server error (503): Loading model"


def test_500_that_is_not_an_overflow_is_a_server_error() -> None:
    body = _j({"error": {"code": 500, "message": "Jinja Exception: System message must be at "
                                                 "the beginning", "type": "server_error"}})
    assert type(classify(500, body)) is ServerError


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_point_at_the_api_key(status: int) -> None:
    body = _j({"error": {"message": "Incorrect API key provided: sk-abc***xyz. You can find "
                                    "your API key at https://platform.openai.com/account/api-"
                                    "keys.", "type": "invalid_request_error",
                         "code": "invalid_api_key"}})
    err = classify(status, body)
    assert type(err) is AuthError
    assert err.message.startswith(f"The server rejected the API key ({status}): Incorrect API")
    assert err.message.endswith(
        "Check your API key (OPENAI_API_KEY or api_key in the config).")
    assert ".." not in err.message


def test_redact_scrubs_an_echoed_key() -> None:
    key = "sk-live-1234567890abcdef"
    err = classify(401, _j({"error": {"message": f"Invalid key {key}"}}))
    err.redact(key)
    assert key not in err.message and key not in err.body and key not in str(err)
    assert "***" in err.message


def test_html_body_from_a_proxy_is_classified_by_status() -> None:
    body = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>"
            "502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n"
            "</html>\r\n")
    err = classify(502, body)
    assert type(err) is ServerError
    assert err.message == "Server error (502): 502 Bad Gateway"
    assert err.body == body


def test_html_without_title_becomes_one_line_of_text() -> None:
    assert provider_message("<p>Service\n  <b>down</b></p>") == "Service down"


def test_empty_body_uses_the_status_phrase() -> None:
    err = classify(504, "")
    assert isinstance(err, ServerError)
    assert err.message == "Server error (504): Gateway Timeout"


@pytest.mark.parametrize("body", [
    # Anthropic refusing max_tokens above the model's output cap: not a context overflow.
    _j({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: "
        "10000 > 4096, which is the maximum allowed number of output tokens for "
        "claude-3-5-sonnet-20240620"}}),
    _j({"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.",
                  "type": "invalid_request_error", "param": None, "code": "model_not_found"}}),
    _j({"error": {"message": "Invalid 'messages' type: expected array", "type":
                  "invalid_request_error", "param": "messages", "code": "invalid_type"}}),
])
def test_a_400_that_is_not_an_overflow_is_a_request_error(body: str) -> None:
    err = classify(400, body)
    assert type(err) is RequestError
    assert not isinstance(err, RetryableError)
    assert err.message.startswith("The server refused the request (400): ")


def test_408_is_retryable() -> None:
    assert isinstance(classify(408, ""), NetworkError)


def test_mid_stream_error_without_status_is_retryable() -> None:
    err = classify(None, _j({"error": {"message": "Provider disconnected", "code":
                                       "server_error"}}))
    assert type(err) is ServerError
    assert err.message == "The server reported an error mid-stream: Provider disconnected"


def test_long_provider_messages_are_cut_to_one_short_line() -> None:
    err = classify(400, _j({"error": {"message": "bad\n" + "x" * 5000}}))
    assert isinstance(err, ProviderError)
    assert "\n" not in err.message and len(err.message) < 400


def test_a_key_cut_by_the_message_length_is_scrubbed_too():
    key = "sk-test-SECRET-0123456789abcdef"
    body = json.dumps({"error": {"message": "x" * 280 + " key " + key, "type": "auth"}})
    err = classify(401, body)
    assert "…" in err.message and key[:10] in err.message  # the cut fell inside the key
    err.redact(key)
    assert key[:8] not in err.message and key not in err.body
