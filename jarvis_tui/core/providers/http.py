"""What every provider that speaks HTTP shares: the client, timeouts, and turning httpx failures
into one clear ProviderError line that never carries the API key."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import unquote_plus

import httpx

from jarvis_tui.core.calls.tool_args import Unreadable, loads
from jarvis_tui.core.providers.base import ChatDelta, ChatEvent
from jarvis_tui.core.providers.errors import (
    NetworkError,
    ProviderError,
    ReadTimedOut,
    RequestError,
    StreamCut,
    TimedOut,
    classify,
)
from jarvis_tui.core.providers.registry import spec_of
from jarvis_tui.core.safety.textsafe import SurrogateJoiner

MAX_BODY = 1 << 20  # bytes of an error body or whole answer read before giving up on the rest


class _Clock:
    """The deadlines of one attempt, on the event loop's clock: the first reply text within
    `first` seconds of sending (headers, queueing, the model reading the prompt), the whole
    reply within `whole`."""

    def __init__(self, first: float, whole: float) -> None:
        self.first, self.whole = first, whole
        self._start = asyncio.get_running_loop().time()
        self._texted = False

    def text_arrived(self) -> None:
        self._texted = True

    def limit(self) -> asyncio.Timeout:
        wait = self.whole if self._texted else min(self.first, self.whole)
        return asyncio.timeout_at(self._start + wait)

    def error(self, where: str) -> TimedOut:
        if self._texted:
            return TimedOut(f"{where} was still sending the reply after {self.whole:g}s "
                            "(reply_timeout); it was stopped there.")
        return TimedOut(f"{where} sent no reply within {self.first:g}s (first_token_timeout): "
                        "the server may be overloaded or stuck. Raise first_token_timeout for "
                        "a model that thinks long before it answers.")


def tls_context() -> ssl.SSLContext:
    """httpx's default verification context, made once per process and shared: reading the CA
    bundle costs about 70 ms of CPU, which every new client (each session, each summarizer,
    each `ask`) paid again. Keyed on the variables httpx reads, so a changed one is honoured."""
    return _tls_context(os.environ.get("SSL_CERT_FILE", ""), os.environ.get("SSL_CERT_DIR", ""))


@functools.cache
def _tls_context(cert_file: str, cert_dir: str) -> ssl.SSLContext:
    return httpx.create_ssl_context()


class HttpProvider:
    name = "http"
    truncates_silently = False

    def __init__(self, base_url: str, api_key: str = "", *, timeout: float = 120.0,
                 connect_timeout: float = 10.0, first_token_timeout: float = 300.0,
                 reply_timeout: float = 600.0, headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        # A gateway that wants its key in the query (?key=...) wants it on every request URL,
        # not glued in front of the path a provider appends.
        address, _, query = base_url.partition("?")
        query = query.partition("#")[0]
        self.base_url = address.rstrip("/")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.first_token_timeout = first_token_timeout
        self.reply_timeout = reply_timeout
        self._api_key = api_key
        # The variable a refused key is told to come from; registry entries that share this
        # class (another OpenAI-compatible host) set their own after making it.
        self.key_env = spec_of(self.name).key_named
        # Everything a server or an httpx error could print back: never shown.
        self._secrets = [api_key, *url_secrets(base_url)]
        # Shown in messages; credentials in the URL itself stay out of them.
        self._where = hide_url_secrets(self.base_url + (f"?{query}" if query else ""))
        self._client = httpx.AsyncClient(
            headers={"Accept": "application/json", **(headers or {})}, transport=transport,
            params=httpx.QueryParams(query), verify=tls_context(),
            timeout=httpx.Timeout(timeout, connect=connect_timeout))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._where!r})"

    async def __aenter__(self) -> HttpProvider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def detect_context_window(self, model: str) -> int | None:
        return None

    async def _stream(self, url: str, payload: dict[str, Any], accept: str,
                      status_error: Callable[[int, str, httpx.Headers], ProviderError],
                      events: Callable[[httpx.Response], AsyncIterator[ChatEvent]],
                      ) -> AsyncIterator[ChatEvent]:
        """POST and stream: a non-2xx answer becomes `status_error(...)`, the body goes
        through `events`, and a connection that breaks after the first byte is a cut stream.

        The whole attempt is bounded, not only each read: a server that trickles its headers
        a byte at a time or streams keep-alives without a token never lets a read time out.
        Reply text is made valid Unicode here, where it arrives: an emoji split into its two
        surrogate halves across events is joined, a lone half replaced."""
        clock = _Clock(self.first_token_timeout, self.reply_timeout)
        received = False
        request = self._client.build_request("POST", url, json=payload,
                                             headers={"Accept": accept})
        try:
            async with clock.limit():
                resp = await self._client.send(request, stream=True)
            try:
                if resp.status_code >= 300:
                    async with clock.limit():
                        body = await self._read_text(resp)
                    raise self._scrub(status_error(resp.status_code, body, resp.headers))
                received = True
                joiner = SurrogateJoiner()
                stream = aiter(events(resp))
                try:
                    while True:
                        async with clock.limit():
                            try:
                                event = await anext(stream)
                            except StopAsyncIteration:
                                break
                        if isinstance(event, ChatDelta):
                            clock.text_arrived()
                            if text := joiner.feed(event.text):
                                yield ChatDelta(text)
                            continue
                        if rest := joiner.flush():
                            yield ChatDelta(rest)
                        yield event
                finally:
                    await stream.aclose()
            finally:
                await resp.aclose()
        except TimeoutError:
            raise self._scrub(clock.error(self._where)) from None
        except Unreadable as err:
            raise self._unreadable(err) from None
        except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
            if received:
                raise StreamCut(f"The connection to {self._where} broke in the middle of the "
                                "reply.") from exc
            raise self._network_error(exc) from exc
        except httpx.HTTPError as exc:
            raise self._network_error(exc) from exc

    async def _post(self, url: str, payload: dict[str, Any],
                    status_error: Callable[[int, str, httpx.Headers], ProviderError]) -> str:
        """One non-streaming POST; the body of a 2xx answer, else `status_error(...)`. Bounded
        as a whole by reply_timeout (the answer is the whole reply)."""
        clock = _Clock(self.reply_timeout, self.reply_timeout)
        try:
            async with clock.limit():
                resp = await self._client.post(url, json=payload)
        except TimeoutError:
            raise self._scrub(clock.error(self._where)) from None
        except httpx.HTTPError as exc:
            raise self._network_error(exc) from exc
        if resp.status_code >= 300:
            raise self._scrub(status_error(resp.status_code, resp.text, resp.headers))
        return resp.text

    def _json_object(self, body: str) -> dict[str, Any]:
        """A whole answer that must be one JSON object, or a clear error saying it was not."""
        try:
            data = loads(body)
        except Unreadable as err:
            raise self._unreadable(err) from None
        except ValueError:
            raise ProviderError(f"{self._where} sent a reply that is not JSON.",
                                body=body) from None
        if not isinstance(data, dict):
            raise ProviderError(f"{self._where} sent an unexpected reply.", body=body)
        return data

    async def _sse_or_whole(self, resp: httpx.Response,
                            sse: Callable[[httpx.Response], AsyncIterator[ChatEvent]],
                            whole: Callable[[str], list[ChatEvent]]) -> AsyncIterator[ChatEvent]:
        """SSE events, or the events of a whole JSON answer from a server or proxy that
        ignored stream=true."""
        ctype = resp.headers.get("content-type", "")
        if "json" in ctype and "event-stream" not in ctype:
            for event in whole(await self._read_text(resp)):
                yield event
            return
        async for event in sse(resp):
            yield event

    async def _get_json(self, url: str) -> object | None:
        """GET for discovery: any failure means "the server does not say", never an error."""
        try:
            resp = await self._client.get(url, timeout=min(self.connect_timeout, 5.0))
            return resp.json() if resp.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    @staticmethod
    async def _read_text(resp: httpx.Response) -> str:
        """The body of an error or whole answer, up to MAX_BODY bytes: an error page has no
        business being larger, and a server that sends one without end must not fill memory."""
        data = bytearray()
        async for piece in resp.aiter_bytes():
            data += piece
            if len(data) > MAX_BODY:
                break
        return bytes(data[:MAX_BODY]).decode("utf-8", errors="replace")

    def _classify(self, status: int | None, body: str,
                  headers: Mapping[str, str] | None = None) -> ProviderError:
        """classify(), telling a user whose key was refused this provider's key variable."""
        return classify(status, body, headers, key_env=self.key_env)

    def _unreadable(self, err: Unreadable) -> ProviderError:
        """A reply of JSON Python will not read: the round ends saying why, as a call's own
        unreadable arguments are told to the model (see tool_args)."""
        return ProviderError(f"{self._where} sent a tool call that could not be read: {err}.")

    def _scrub(self, err: ProviderError) -> ProviderError:
        err.redact(*self._secrets)
        return err

    def _network_error(self, exc: Exception) -> ProviderError:
        where = self._where
        if isinstance(exc, httpx.ConnectTimeout):
            msg = f"Timed out after {self.connect_timeout:g}s connecting to {where}."
        elif isinstance(exc, httpx.ReadTimeout):
            return self._scrub(ReadTimedOut(
                f"{where} sent nothing for {self.timeout:g}s (read timeout, request_timeout)."))
        elif isinstance(exc, httpx.TimeoutException):
            msg = f"Timed out talking to {where}."
        elif isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
            return self._scrub(RequestError(
                f"The base URL {where!r} is not usable: {_reason(exc)}. It should look like "
                "http://127.0.0.1:8080/v1."))
        elif isinstance(exc, httpx.ConnectError):
            msg = f"Could not connect to {where}: {_reason(exc)}."
        elif isinstance(exc, httpx.RemoteProtocolError):
            msg = f"{where} closed the connection without an answer."
        elif isinstance(exc, httpx.LocalProtocolError):
            # The request itself is malformed (a header with a line break in it): this client's
            # fault, so not worth a retry, and the header it would quote may be the API key.
            return self._scrub(RequestError(f"The request to {where} was not sent: "
                                            f"{_local_reason(exc)}."))
        else:
            msg = f"Network error talking to {where}: {_reason(exc)}."
        return self._scrub(NetworkError(msg))


def _local_reason(exc: BaseException) -> str:
    text = str(exc)
    if "header" in text.lower():
        return ("a request header holds a character HTTP does not allow; check the API key "
                "for a stray line break or space")
    # Whatever h11 quotes after its words (b'...') is the offending data: left out.
    said = re.split(r"\s*b?['\"]", text, maxsplit=1)[0].strip().rstrip(":.")
    return f"it is not valid HTTP ({said or type(exc).__name__})"


def _reason(exc: BaseException) -> str:
    # httpx's own text is often "All connection attempts failed"; the cause says why.
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused (is the server running?)"
        if isinstance(seen, socket.gaierror):
            return f"the host name could not be resolved ({seen.strerror or seen})"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text).rstrip(".")


# Query parameters whose values are credentials, as gateways name them: ?key=, ?api_key=,
# ?access_token=, Azure's ?sig= and ?code=, ?password=... (any prefix: x-api-key, client_secret).
_SECRET_PARAM = re.compile(r"[\w.~-]*?(key|token|secret|sig|signature|password|passwd|pwd|auth|"
                           r"authorization|code|credentials?)", re.IGNORECASE)
_QUERY_PAIR = re.compile(r"([?&;])([^=&;#?]*)=([^&;#]*)")
_USERINFO = re.compile(r"^([^/?#@]*//)?([^/?#@]*)@")


def _secret_param(name: str) -> bool:
    return bool(_SECRET_PARAM.fullmatch(unquote_plus(name)))


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries, as written and percent-decoded: the user and password
    before the host, and the values of query parameters named like secrets."""
    found = []
    user = _USERINFO.match(url)
    if user:
        found += user[2].split(":", 1)
    found += [value for _, name, value in _QUERY_PAIR.findall(url) if _secret_param(name)]
    return [form for value in found for form in dict.fromkeys((value, unquote_plus(value)))
            if form]


def hide_url_secrets(url: str) -> str:
    """The URL to show: no user or password, and *** for each secret query value."""
    url = _USERINFO.sub(lambda m: m[1] or "", url, count=1)
    return _QUERY_PAIR.sub(
        lambda m: f"{m[1]}{m[2]}=***" if _secret_param(m[2]) else m[0], url)


_EOL = re.compile(r"\r\n|\r|\n")


async def stream_lines(resp: httpx.Response) -> AsyncIterator[str]:
    """The lines of an SSE or NDJSON stream, which end only at CRLF, CR or LF. httpx's
    aiter_lines also splits at U+2028, U+2029, NEL and other separators that servers send raw
    inside a JSON chunk, and the halves are then dropped as garbage.

    Each piece of text is scanned once: a line that spans many pieces (one 40 MB event) is
    kept as a list of them and joined when it ends, never searched again from its start."""
    line: list[str] = []
    after_cr = False  # the last piece ended in CR: an LF opening the next one belongs to it
    async for text in resp.aiter_text():
        if after_cr and text.startswith("\n"):
            text = text[1:]
        after_cr = False
        start = 0
        for end in _EOL.finditer(text):
            line.append(text[start:end.start()])
            yield "".join(line)
            line = []
            start = end.end()
            after_cr = end.group() == "\r" and start == len(text)
        if start < len(text):
            line.append(text[start:])
    if line:
        yield "".join(line)


def json_or_none(line: str) -> dict[str, Any] | None:
    """One streamed JSON object; None for a garbled line, which must not sink a good reply.
    Raises Unreadable for a line of JSON Python will not read (a call's arguments nested a
    hundred thousand deep): dropped as garbled, it would drop the call without a word."""
    try:
        obj = loads(line)
    except Unreadable:
        raise
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
