"""An MCP server that misbehaves on request, for the MCP client's tests.

    python -m tests.mcp_servers.faulty                 # stdio
    python -m tests.mcp_servers.faulty --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp
    python -m tests.mcp_servers.faulty --start exit    # says why on stderr and exits 3
    python -m tests.mcp_servers.faulty --start hang    # never answers initialize
    (or FAULTY_START=exit|hang in its environment)
    python -m tests.mcp_servers.faulty --start exit --why TEXT   # exits 3 giving TEXT as why
    python -m tests.mcp_servers.faulty --calls FILE    # one JSON line a call of echo or slow,
                                                       # written when the call arrives

Built on the SDK's own server (MCPServer, what FastMCP became in mcp 2), so the client is tested
against the same wire as real servers. It writes to stderr on purpose: none of it may reach the
client's terminal.
"""

import argparse
import base64
import json
import os
import sys
import time

CRASH_CODE = 7
START_EXIT_CODE = 3
START_EXIT_WHY = "faulty: cannot start: the answer is not 42"
PNG = base64.b64decode(  # a 1x1 transparent PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
MARKUP = ("[bold red]x[/]\n"
          "\x1b[31mred\x1b[0m and \x1b[2J cleared\n"
          "\x1b]52;c;aGVsbG8=\x07 clipboard\n"
          "\x1b]0;title\x1b\\ end")


def huge_text(kb: int) -> str:
    """At least `kb` KiB of UTF-8: numbered lines, ASCII and CJK by turns, so a test knows
    its head and tail and that nothing in between went missing."""
    lines, size, n = [], 0, 0
    while size < kb * 1024:
        n += 1
        line = (f"line {n:05d}: the quick brown fox jumps over the lazy dog" if n % 2 else
                f"line {n:05d}: 敏捷的棕色狐狸跳过了懒狗，上下文窗口不会溢出")
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    return "\n".join(lines)


def read_calls(path: str | os.PathLike[str]) -> list[dict]:
    """The calls a server started with --calls PATH received: {"tool": ..., "arguments": ...}
    each, in order; none if it received none."""
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def build_server(calls: str | None = None):
    """The server and its tools; the SDK is imported here, so a bad start is quick (importing
    it takes a couple of seconds on a busy machine). With `calls`, echo and slow note each
    call they receive in that file, as it arrives (so a test sees that a call reached the
    server, or that none did)."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    server = MCPServer("faulty", instructions="misbehaves on request", log_level="WARNING")

    def note(tool: str, **arguments: object) -> None:
        if calls:
            with open(calls, "a", encoding="utf-8") as f:
                f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text as it came."""
        note("echo", text=text)
        print(f"faulty: echo {len(text)} characters", file=sys.stderr, flush=True)
        return text

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then say so."""
        note("slow", seconds=seconds)
        await anyio.sleep(seconds)
        return f"slept {seconds} s"

    @server.tool()
    def crash() -> str:
        """Exit the whole process in the middle of the call."""
        print("faulty: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(CRASH_CODE)

    @server.tool()
    def leak_env() -> str:
        """Print SECRET_TOKEN from its environment to stderr, then exit in the middle of the call:
        a server whose last words before a crash hold what it was configured with."""
        token = os.environ.get("SECRET_TOKEN", "")
        print(f"faulty: login refused for token {token}", file=sys.stderr, flush=True)
        os._exit(CRASH_CODE)

    @server.tool()
    def huge(kb: int) -> str:
        """Return kb KiB of numbered lines."""
        return huge_text(kb)

    @server.tool()
    def markup() -> str:
        """Return Rich markup, ANSI colours, a screen clear and an OSC 52 clipboard write."""
        return MARKUP

    @server.tool()
    def fail() -> CallToolResult:
        """Report a failure the way tools should: isError with a message."""
        return CallToolResult(content=[TextContent(text="it failed on purpose")], is_error=True)

    @server.tool()
    def mixed() -> CallToolResult:
        """One of every content kind."""
        data = base64.b64encode(PNG).decode()
        return CallToolResult(content=[
            TextContent(text="first"),
            ImageContent(data=data, mime_type="image/png"),
            AudioContent(data=base64.b64encode(b"\0" * 1000).decode(), mime_type="audio/wav"),
            EmbeddedResource(resource=TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="the notes")),
            EmbeddedResource(resource=BlobResourceContents(
                uri="file:///a.bin", mime_type="application/octet-stream",
                blob=base64.b64encode(b"12345").decode())),
            ResourceLink(uri="file:///big.log", name="big.log"),
            TextContent(text="last"),
        ])

    @server.tool()
    def structured() -> CallToolResult:
        """No content, only structuredContent."""
        return CallToolResult(content=[], structured_content={"answer": 42, "名": "值"})

    @server.tool()
    def dirty() -> str:
        """Text with a NUL in it."""
        return "before\x00after"

    return server


def _hang() -> None:
    # Reads (and so never blocks the client's writes) but never answers; leaves when the
    # client closes its stdin, as a stuck server whose pipe is closed would.
    print("faulty: hanging at start", file=sys.stderr, flush=True)
    while sys.stdin.buffer.read(4096):
        pass
    time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mcp_servers.faulty")
    parser.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on PORT")
    parser.add_argument("--start", choices=("exit", "hang"), default=os.environ.get("FAULTY_START"))
    parser.add_argument("--why", default=START_EXIT_WHY,
                        help="the last line --start exit writes to stderr")
    parser.add_argument("--calls", metavar="FILE", help="note each call of echo and slow here")
    args = parser.parse_args(argv)
    if args.start == "exit":
        print("faulty: starting", file=sys.stderr)
        print(args.why, file=sys.stderr, flush=True)
        return START_EXIT_CODE
    if args.start == "hang":
        _hang()
        return 0
    server = build_server(args.calls)
    print("faulty: ready", file=sys.stderr, flush=True)
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
