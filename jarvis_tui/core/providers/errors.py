"""Turn a provider's error answer (status, body, headers) into one of a few typed errors.

The engine only needs to know three things: does the request not fit the context window
(compact and retry), is it worth retrying as is (backoff), or is it final. Servers say
"does not fit" in many ways, and not always with status 400, so overflow is judged by the body.
The wordings below are the real ones servers send (OpenAI, vLLM, llama.cpp server, OpenRouter,
Anthropic, Gemini); tests/core/providers/test_errors.py holds a copy of each.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

from jarvis_tui.core.providers.registry import DEFAULT
from jarvis_tui.core.safety.known_secrets import MIN_SECRET_CHARS
from jarvis_tui.core.safety.known_secrets import printed_forms as _printed_forms

MAX_MESSAGE_CHARS = 300


class ProviderError(Exception):
    """A provider call failed. ``message`` is one human line; ``body`` is the raw answer."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body

    def redact(self, *secrets: str) -> None:
        """Scrub secrets (the API key, credentials in the base URL) in case a server, a proxy or
        httpx echoed one back, in any form it takes when printed. Values shorter than
        MIN_SECRET_CHARS are left alone: hiding "x" would turn every x in the text into ***."""
        forms = sorted({form for secret in secrets if len(secret.strip()) >= MIN_SECRET_CHARS
                        for form in _printed_forms(secret)}, key=len, reverse=True)
        for form in forms:
            self.message = self.message.replace(form, "***")
            self.body = self.body.replace(form, "***")
        # The one-line message is cut at MAX_MESSAGE_CHARS: the cut may fall inside the key.
        for form in forms:
            for n in range(len(form) - 1, 5, -1):
                if form[:n] + "…" in self.message:
                    self.message = self.message.replace(form[:n] + "…", "***…")
                    break
        self.args = (self.message,)


class ContextOverflow(ProviderError):
    """The request does not fit the model's context window.

    ``limit`` is the real window when the server names it. ``requested`` is what the server
    counted for the request: the prompt tokens when it names them apart from the completion
    reserve (that is what estimates get calibrated against), else the total it names.
    """

    def __init__(self, message: str, *, status: int | None = None, body: str = "",
                 limit: int | None = None, requested: int | None = None,
                 total_requested: int | None = None, said: str = "") -> None:
        super().__init__(message, status=status, body=body)
        self.said = said or message  # the server's own words, for a line that has said the rest
        self.limit = limit
        self.requested = requested
        self.total_requested = total_requested


class RetryableError(ProviderError):
    def __init__(self, message: str, *, status: int | None = None, body: str = "",
                 retry_after: float | None = None) -> None:
        super().__init__(message, status=status, body=body)
        self.retry_after = retry_after


class RateLimited(RetryableError):
    """429."""


class ServerError(RetryableError):
    """5xx that is not an overflow."""


class NetworkError(RetryableError):
    """Connection refused, DNS failure, connect or read timeout."""


class ReadTimedOut(NetworkError):
    """Nothing came from the server for request_timeout seconds; worth one more try, not many
    (a server that hung once usually hangs again)."""


class StreamCut(RetryableError):
    """The stream ended before [DONE] or a finish_reason."""


class TimedOut(ProviderError):
    """An attempt ran past one of its deadlines (first_token_timeout, reply_timeout) while the
    server kept the connection busy; asking again would wait as long again."""


class AuthError(ProviderError):
    """401/403."""


class RequestError(ProviderError):
    """Any other 4xx: retrying the same request will not help."""


class ToolsRefused(RequestError):
    """The server refused the request for one tool's definition (its schema): the same request
    without that tool is good. Servers point at it in different ways, so whichever they give is
    kept: `tool` its name (OpenAI), `index` its place in the request's list (Anthropic, OpenAI's
    param), `schema` the part of its schema they quote (llama.cpp)."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "",
                 tool: str | None = None, index: int | None = None,
                 schema: object = None) -> None:
        super().__init__(message, status=status, body=body)
        self.tool = tool
        self.index = index
        self.schema = schema


class ImagesRefused(RequestError):
    """The model or server takes no images (a text-only model, llama.cpp without its vision
    projector): the same request without them is good, and the user decides what to do."""


# What servers say of an image a text-only model was sent: OpenAI, llama.cpp's server (a 500
# that is no fault: the same request fails again), Ollama (llama-server's words, passed on),
# vLLM, LiteLLM passing them on.
_NO_IMAGES = re.compile(
    r"image_url is only supported|image input is not supported|does not support (image|vision)"
    r"|doesn't support (image|vision)|not a multimodal model|multimodal.{0,40}not supported"
    r"|does not support multimodal"
    r"|images? (are|is) not supported", re.I)


def refuses_images(body: str) -> bool:
    return bool(_NO_IMAGES.search(body or ""))


# --- recognising an overflow -------------------------------------------------------------------

_OVERFLOW = re.compile(
    "|".join([
        r"context_length_exceeded",                    # OpenAI error code
        r"maximum context length",                     # OpenAI, vLLM, OpenRouter, DeepSeek
        r"input tokens exceed the configured limit",   # OpenAI, newer models
        r"exceeds the context window",                 # OpenAI Responses API
        r"context length is only \d+",                 # vLLM 0.1x: "You passed N input tokens..."
        r"max_tokens must be at least 1, got -\d+",    # old vLLM, no max_tokens: prompt > window
        r"exceed_context_size_error",                  # llama.cpp error type
        r"exceeds the available context size",         # llama.cpp, all versions
        r"larger than the max context size",           # llama.cpp, non-splittable input
        r"is too large to process",                    # llama.cpp, input > physical batch (500)
        r"prompt is too long",                         # Anthropic
        r"exceed context limit",                       # Anthropic, input + max_tokens
        r"input token count \(\d+\) exceeds",          # Gemini
        r"input is too long",                          # Bedrock
        r"exceeded max_prompt_tokens",                 # SiliconFlow-style gateways
        r"maximum prompt length is \d+",               # vLLM --max-prompt-len
    ]),
    re.IGNORECASE,
)

_N = r"(\d[\d,]*)"  # a count, possibly written "204,648"

_LIMIT_PATTERNS = [
    rf"maximum context length is {_N} tokens",
    rf"configured limit of {_N} tokens",
    rf"context length is only {_N} tokens",
    rf"available context size \({_N} tokens\)",
    rf"max context size \({_N} tokens\)",
    rf'\\?"n_ctx\\?"\s*:\s*{_N}',
    rf"\bn_ctx\s*=\s*{_N}",
    rf"tokens > {_N} maximum",
    rf"exceed context limit: \d+ \+ \d+ > {_N}",
    rf"maximum number of tokens allowed \({_N}\)",
    rf"max_prompt_tokens \({_N}\)",
    rf"maximum prompt length is {_N} tokens",
]

# Each gives (prompt tokens or None, total tokens or None) from a match.
_REQUEST_PATTERNS: list[tuple[str, Any]] = [
    (rf"you requested (?:about )?{_N} tokens \({_N} (?:in the messages|of text input)",
     lambda m: (_int(m[2]), _int(m[1]))),
    (rf"is too large: {_N}\. This model's maximum context length is \d+ tokens and your "
     rf"request has {_N} input tokens", lambda m: (_int(m[2]), _int(m[2]) + _int(m[1]))),
    (rf"you passed {_N} input tokens and requested {_N} output tokens",
     lambda m: (_int(m[1]), _int(m[1]) + _int(m[2]))),
    (rf"exceed context limit: {_N} \+ {_N} >", lambda m: (_int(m[1]), _int(m[1]) + _int(m[2]))),
    (rf"messages resulted in {_N} tokens", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"your request has {_N} input tokens", lambda m: (_int(m[1]), _int(m[1]))),
    (rf'\\?"n_prompt_tokens\\?"\s*:\s*{_N}', lambda m: (_int(m[1]), _int(m[1]))),
    (rf"(?:request|input) \({_N} tokens\)", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"\bn_tokens\s*=\s*{_N}", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"prompt is too long: {_N} tokens", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"input token count \({_N}\)", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"number of input tokens \({_N}\)", lambda m: (_int(m[1]), _int(m[1]))),
    (rf"you requested (?:about )?{_N} tokens", lambda m: (None, _int(m[1]))),
]


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def is_context_overflow(text: str) -> bool:
    return bool(_OVERFLOW.search(text))


def context_limit_from_text(text: str) -> int | None:
    """The context window size an error text names, if it names one."""
    for pattern in _LIMIT_PATTERNS:
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return _int(m[1])
    return None


def requested_from_text(text: str) -> tuple[int | None, int | None]:
    """(prompt tokens, total tokens) an overflow text names; either may be None."""
    for pattern, pick in _REQUEST_PATTERNS:
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return pick(m)
    return None, None


# --- recognising a refused tool definition ----------------------------------------------------

# OpenAI: "Invalid schema for function 'NAME': ...", param "tools[3].function.parameters".
_TOOL_NAMED = re.compile(r"Invalid schema for function '([^']{1,128})'")
_TOOL_PARAM = re.compile(r"^tools\[(\d+)\]")
# Anthropic: "tools.3.custom.input_schema: JSON schema is invalid. It must match ...".
_TOOL_AT = re.compile(r"\btools\.(\d+)\.(?:custom\.)?input_schema\b")
# llama.cpp: "JSON schema conversion failed:\nUnrecognized schema: {...}" (400, 500 before).
_SCHEMA_FAILED = re.compile(r"JSON schema conversion failed")
_SCHEMA_QUOTED = re.compile(r"Unrecognized schema: ")


def tool_refusal(body: str) -> tuple[str | None, int | None, object] | None:
    """(tool name, index, quoted schema) when the body refuses a tool's definition, any of them
    None where the server does not say; None when it is not such a refusal."""
    err = _error_object(body) or {}
    message = err.get("message") if isinstance(err.get("message"), str) else body
    named = _TOOL_NAMED.search(message)
    param = err.get("param")
    at = _TOOL_PARAM.match(param) if isinstance(param, str) else None
    at = at or _TOOL_AT.search(message)
    if named or at:
        return (named[1] if named else None), (int(at[1]) if at else None), None
    if _SCHEMA_FAILED.search(message):
        quoted = _SCHEMA_QUOTED.search(message)
        schema = None
        if quoted:
            with contextlib.suppress(ValueError):
                schema = json.JSONDecoder().raw_decode(message, quoted.end())[0]
        return None, None, schema
    return None


# --- reading the body --------------------------------------------------------------------------

def _error_object(body: str) -> dict[str, Any] | None:
    """The error dict out of the shapes servers use, or None if the body is not JSON."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list) and data:  # Gemini's OpenAI-compatible endpoint wraps it in a list
        data = data[0]
    if not isinstance(data, dict):
        return None
    err = data.get("error")
    if isinstance(err, dict):
        return err  # OpenAI, new vLLM, llama.cpp, OpenRouter, Anthropic, Gemini
    if isinstance(err, str):
        return {"message": err}  # Ollama, some proxies
    return data  # old vLLM: {"object": "error", "message": ...}; FastAPI: {"detail": ...}


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1].rstrip() + "…"
    return text


def provider_message(body: str) -> str:
    """The provider's own words, on one line: the JSON message, or an HTML page's title/text."""
    err = _error_object(body)
    if err is not None:
        for key in ("message", "detail", "error"):
            value = err.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value)
        return _one_line(json.dumps(err, ensure_ascii=False))
    title = re.search(r"<title[^>]*>(.*?)</title>", body, re.IGNORECASE | re.DOTALL)
    if title and title.group(1).strip():
        return _one_line(html.unescape(title.group(1)))
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.IGNORECASE | re.DOTALL)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return _one_line(text)


def _error_kind(body: str) -> str:
    """The error's type/code words, lowercased, for the few cases decided by them."""
    err = _error_object(body) or {}
    return " ".join(str(err.get(k, "")) for k in ("type", "code", "status")).lower()


# --- Retry-After -------------------------------------------------------------------------------

def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait, from retry-after-ms or Retry-After (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = (lower.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def _retry_hint_in_text(text: str) -> float | None:
    # OpenAI: "Please try again in 1.5s" / "in 350ms", when no header came through a proxy.
    m = re.search(r"try again in (\d+(?:\.\d+)?)\s*(ms|s)\b", text, re.IGNORECASE)
    if not m:
        return None
    value = float(m[1])
    return value / 1000.0 if m[2].lower() == "ms" else value


# --- classify ----------------------------------------------------------------------------------

def _label(status: int | None) -> str:
    return f" ({status})" if status else ""


def classify(status: int | None, body: str, headers: Mapping[str, str] | None = None, *,
             key_env: str = DEFAULT.key_named) -> ProviderError:
    """The typed error for an error answer. ``status`` is None for an error inside a stream;
    ``key_env`` is the variable a rejected key is told to come from (the provider's)."""
    body = body or ""
    said = provider_message(body)
    if not said and status:
        try:
            said = HTTPStatus(status).phrase
        except ValueError:
            said = "no details"
    said = said or "no details"
    kind = _error_kind(body)

    if status in (401, 403):
        return AuthError(
            f"The server rejected the API key{_label(status)}: {said.rstrip('.')}. "
            f"Check your API key ({key_env} or api_key in the config).",
            status=status, body=body)
    if status == 429 or (status is None and "rate_limit" in kind):
        wait = parse_retry_after(headers)
        wait = wait if wait is not None else _retry_hint_in_text(said)
        return RateLimited(f"Rate limited by the server{_label(status)}: {said}",
                           status=status, body=body, retry_after=wait)
    # 413 is a proxy or gateway saying the request body is too big: shrinking is the cure too.
    if status == 413 or is_context_overflow(body):
        prompt, total = requested_from_text(body)
        return ContextOverflow(
            f"The request does not fit the model's context window{_label(status)}: {said}",
            status=status, body=body, limit=context_limit_from_text(body),
            requested=prompt if prompt is not None else total, total_requested=total,
            said=f"{said}{_label(status)}")
    refused = tool_refusal(body) if status is None or status >= 400 else None
    if refused is not None:
        tool, index, schema = refused
        return ToolsRefused(f"The server refused a tool's definition{_label(status)}: {said}",
                            status=status, body=body, tool=tool, index=index, schema=schema)
    if status is not None and status >= 400 and refuses_images(body):
        return ImagesRefused(f"The model takes no images{_label(status)}: {said}. Ask again "
                             "without the image, or pick a model that reads images",
                             status=status, body=body)
    if status == 408:
        return NetworkError(f"The server timed out waiting for the request (408): {said}",
                            status=status, body=body, retry_after=parse_retry_after(headers))
    if status is None or status >= 500:
        where = "Server error" if status else "The server reported an error mid-stream"
        return ServerError(f"{where}{_label(status)}: {said}", status=status, body=body,
                           retry_after=parse_retry_after(headers))
    if 400 <= status < 500:
        return RequestError(f"The server refused the request ({status}): {said}",
                            status=status, body=body)
    return ProviderError(f"Unexpected answer from the server ({status}): {said}",
                         status=status, body=body)
