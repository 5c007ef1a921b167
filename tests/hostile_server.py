"""A small misbehaving HTTP server on a loopback socket, for the faults a well-behaved fake cannot
make: headers trickled a byte at a time, a request accepted and never answered, a stream that
never ends, an emoji split into two stream events, a single 40 MB line, a reply that ignores
max_tokens, an error that echoes the request's headers or its whole head.

Raw sockets, so every byte is the test's to choose. One behaviour per server (`play`), called
with the parsed request and a writer; a stopping server wakes every sleeping behaviour.

    python -m tests.hostile_server --port 8799 --play endless
"""

from __future__ import annotations

import argparse
import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from tests.fakeserver import Served


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        try:
            data = json.loads(self.body.decode("utf-8"))
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


@dataclass
class Wire:
    """What a behaviour writes with. Every write raises `Gone` once the client hung up or the
    server stops, so an endless behaviour ends with its client."""

    sock: socket.socket
    stopping: threading.Event
    sent: int = 0

    def raw(self, data: bytes) -> None:
        if self.stopping.is_set():
            raise Gone
        try:
            self.sock.sendall(data)
        except OSError:
            raise Gone from None
        self.sent += len(data)

    def wait(self, seconds: float) -> None:
        if self.stopping.wait(seconds):
            raise Gone

    def head(self, status: int = 200, ctype: str = "text/event-stream",
             extra: dict[str, str] | None = None) -> None:
        lines = [f"HTTP/1.1 {status} X", f"Content-Type: {ctype}", "Connection: close",
                 *(f"{k}: {v}" for k, v in (extra or {}).items())]
        self.raw(("\r\n".join(lines) + "\r\n\r\n").encode())

    def event(self, obj: Any, *, ascii_only: bool = False) -> None:
        self.raw(b"data: " + json.dumps(obj, ensure_ascii=ascii_only).encode() + b"\n\n")

    def done(self) -> None:
        self.raw(b"data: [DONE]\n\n")

    def whole(self, status: int, obj: Any) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode()
        self.head(status, "application/json", {"Content-Length": str(len(data))})
        self.raw(data)


class Gone(Exception):
    """The client went away, or the server is stopping."""


Play = Callable[[Request, Wire], None]


def chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    """An OpenAI chat.completion.chunk carrying `text`."""
    return {"id": "chatcmpl-hostile", "object": "chat.completion.chunk", "model": "hostile",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}


# -- behaviours ----------------------------------------------------------------------------------

def silent(req: Request, w: Wire) -> None:
    """Accepts, reads the request, and never answers."""
    while True:
        w.wait(3600)


def trickle_headers(req: Request, w: Wire) -> None:
    """The status line and headers a byte every 0.2 s, without end: no read ever times out."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    n = 0
    while True:
        w.raw(head[n % len(head):n % len(head) + 1] if n < len(head) else b"X")
        n += 1
        w.wait(0.2)


def endless(req: Request, w: Wire) -> None:
    """A good stream that never finishes: a few words every half second."""
    w.head()
    n = 0
    while True:
        w.event(chunk(f"word{n} "))
        n += 1
        w.wait(0.5)


def keepalive_forever(req: Request, w: Wire) -> None:
    """Headers, then SSE comments without end and never a token."""
    w.head()
    while True:
        w.raw(b": keep-alive\n\n")
        w.wait(0.3)


def split_emoji(req: Request, w: Wire) -> None:
    """😀 (U+1F600) as two events, each half a surrogate pair in a JSON escape, as servers that
    stream per UTF-16 unit send it; then a lone half that nothing completes."""
    w.head()
    for text in ("Hi ", "\ud83d", "\ude00", " there \ud83d", "!"):
        w.event(chunk(text), ascii_only=True)
    w.event(chunk("", "stop"))
    w.done()


def flood(size: int, piece: int = 64 * 1024) -> Play:
    """A reply of `size` characters in `piece`-sized events, as fast as the socket takes them."""
    def play(req: Request, w: Wire) -> None:
        w.head()
        line = "x" * (piece - 1) + "\n"
        left = size
        while left > 0:
            w.event(chunk(line[:left] if left < piece else line))
            left -= piece
        w.event(chunk("", "stop"))
        w.done()
    return play


def one_line(size: int) -> Play:
    """The whole reply in one SSE data line of `size` characters."""
    def play(req: Request, w: Wire) -> None:
        w.head()
        w.event(chunk("y" * size))
        w.event(chunk("", "stop"))
        w.done()
    return play


def past_max_tokens(req: Request, w: Wire) -> None:
    """Ignores max_tokens: words as fast as it can, for as long as the client listens."""
    w.head()
    while True:
        w.event(chunk("and more words " * 8))


def echo_headers(req: Request, w: Wire) -> None:
    """A 401 whose message quotes every request header back, as some proxies do."""
    said = "; ".join(f"{k}: {v}" for k, v in req.headers.items())
    w.whole(401, {"error": {"message": f"Unauthorized. Request headers were {said}",
                            "type": "invalid_request_error", "code": "invalid_api_key"}})


def echo_request(req: Request, w: Wire) -> None:
    """A 400 that quotes the whole request head back, the query string of its path included,
    as some gateways and debugging proxies do."""
    head = " ".join([req.method, req.path, *(f"{k}: {v}" for k, v in req.headers.items())])
    w.whole(400, {"error": {"message": f"Bad request: {head}", "type": "bad_request"}})


PLAYS: dict[str, Play] = {
    "silent": silent, "trickle_headers": trickle_headers, "endless": endless,
    "keepalive_forever": keepalive_forever, "split_emoji": split_emoji,
    "past_max_tokens": past_max_tokens, "echo_headers": echo_headers,
    "echo_request": echo_request,
}


# -- the server ----------------------------------------------------------------------------------

class HostileServer(Served):
    def __init__(self, play: Play, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.play = play
        self.host, self.port = host, port
        self.requests: list[Request] = []
        self._stopping = threading.Event()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

    def start(self) -> Self:
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                req = _read_request(self.request)
                if req is None:
                    return
                owner.requests.append(req)
                if req.method != "POST":  # discovery (/props, /models): "not here"
                    _not_found(self.request)
                    return
                try:
                    owner.play(req, Wire(self.request, owner._stopping))
                except Gone:
                    pass

        self._serve(_TCPServer((self.host, self.port), Handler))
        return self


class _TCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def _read_request(sock: socket.socket) -> Request | None:
    sock.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            got = sock.recv(65536)
            if not got:
                return None
            data += got
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        size = int(next((v for k, v in headers.items() if k.lower() == "content-length"), 0))
        while len(body) < size:
            got = sock.recv(65536)
            if not got:
                break
            body += got
    except (OSError, ValueError):
        return None
    sock.settimeout(None)
    return Request(method, path, headers, body)


def _not_found(sock: socket.socket) -> None:
    body = b'{"error": {"message": "not here"}}'
    try:
        sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: " + str(len(body)).encode()
                     + b"\r\n\r\n" + body)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A misbehaving chat server, for trying faults.")
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--play", choices=sorted(PLAYS), default="endless")
    args = parser.parse_args(argv)
    server = HostileServer(PLAYS[args.play], port=args.port).start()
    print(f"hostile server ({args.play}) at {server.base_url} (Ctrl+C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
