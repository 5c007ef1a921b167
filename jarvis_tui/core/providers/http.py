"""What every provider that speaks HTTP shares: the client, timeouts, and turning httpx failures
into one clear ProviderError line that never carries the API key."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from jarvis_tui.core.providers.base import ChatEvent
from jarvis_tui.core.providers.errors import (
    NetworkError,
    ProviderError,
    RequestError,
    StreamCut,
)


class HttpProvider:
    name = "http"
    truncates_silently = False

    def __init__(self, base_url: str, api_key: str = "", *, timeout: float = 120.0,
                 connect_timeout: float = 10.0, headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._api_key = api_key
        # Shown in messages; credentials in the URL itself stay out of them.
        self._where = re.sub(r"//[^/@]*@", "//", self.base_url)
        self._client = httpx.AsyncClient(
            headers={"Accept": "application/json", **(headers or {})}, transport=transport,
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
        through `events`, and a connection that breaks after the first byte is a cut stream."""
        received = False
        try:
            async with self._client.stream("POST", url, json=payload,
                                           headers={"Accept": accept}) as resp:
                if resp.status_code >= 300:
                    body = await self._read_text(resp)
                    raise self._scrub(status_error(resp.status_code, body, resp.headers))
                received = True
                async for event in events(resp):
                    yield event
        except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
            if received:
                raise StreamCut(f"The connection to {self._where} broke in the middle of the "
                                "reply.") from exc
            raise self._network_error(exc) from exc
        except httpx.HTTPError as exc:
            raise self._network_error(exc) from exc

    async def _post(self, url: str, payload: dict[str, Any],
                    status_error: Callable[[int, str, httpx.Headers], ProviderError]) -> str:
        """One non-streaming POST; the body of a 2xx answer, else `status_error(...)`."""
        try:
            resp = await self._client.post(url, json=payload)
        except httpx.HTTPError as exc:
            raise self._network_error(exc) from exc
        if resp.status_code >= 300:
            raise self._scrub(status_error(resp.status_code, resp.text, resp.headers))
        return resp.text

    def _json_object(self, body: str) -> dict[str, Any]:
        """A whole answer that must be one JSON object, or a clear error saying it was not."""
        try:
            data = json.loads(body)
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
        return (await resp.aread()).decode("utf-8", errors="replace")

    def _scrub(self, err: ProviderError) -> ProviderError:
        err.redact(self._api_key)
        return err

    def _network_error(self, exc: Exception) -> ProviderError:
        where = self._where
        if isinstance(exc, httpx.ConnectTimeout):
            msg = f"Timed out after {self.connect_timeout:g}s connecting to {where}."
        elif isinstance(exc, httpx.ReadTimeout):
            msg = f"{where} sent nothing for {self.timeout:g}s (read timeout)."
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
        else:
            msg = f"Network error talking to {where}: {_reason(exc)}."
        return self._scrub(NetworkError(msg))



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


_EOL = re.compile(r"\r\n|\r|\n")


async def stream_lines(resp: httpx.Response) -> AsyncIterator[str]:
    """The lines of an SSE or NDJSON stream, which end only at CRLF, CR or LF. httpx's
    aiter_lines also splits at U+2028, U+2029, NEL and other separators that servers send raw
    inside a JSON chunk, and the halves are then dropped as garbage."""
    rest = ""
    async for text in resp.aiter_text():
        lines = _EOL.split(rest + text)
        rest = lines.pop()
        for line in lines:
            yield line
    if rest:
        yield rest


def json_or_none(line: str) -> dict[str, Any] | None:
    """One streamed JSON object; None for a garbled line, which must not sink a good reply."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
