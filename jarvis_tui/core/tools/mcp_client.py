"""The MCP client: starts the configured servers and runs their tools for the engine (a ToolBox).

Each server lives in one long-lived task that enters the SDK's transport and session contexts,
says it is ready, and waits to be told to stop. anyio's contexts must be left by the task that
entered them (else "exited non-innermost cancel scope" and a leaked child), so nothing else ever
enters or leaves them; calls reach the session from the caller's task, which the SDK allows.

A server's failure is the server's: a tool call gets an error result saying what happened, the
server's status says it too, and nothing raises out of `run` but the caller's own cancellation.
A stdio server's stderr goes into a small ring buffer, never to the terminal (it would write
over the TUI), and its last lines explain why it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from jarvis_tui.core.calls.specs import ToolCall, ToolResult, ToolSpec
from jarvis_tui.core.safety.known_secrets import HIDDEN, Scrubber
from jarvis_tui.core.safety.redact import redact
from jarvis_tui.core.safety.textsafe import terminal_safe
from jarvis_tui.core.settings.mcp import McpServerConfig
from jarvis_tui.core.tools.mcp_content import clean, result_text
from jarvis_tui.core.tools.mcp_listing import CheckedListing, validation_line
from jarvis_tui.core.tools.specs import ToolBox

# The SDK reports transport trouble with logger.exception; with no handler anywhere, Python's
# last-resort handler would print it on stderr, over the TUI. What matters reaches the user
# through the server's status and the call's result instead.
logging.getLogger("mcp").addHandler(logging.NullHandler())
log = logging.getLogger(__name__)

State = Literal["starting", "ready", "failed", "stopped", "disabled"]

START_TIMEOUT = 20.0  # seconds from spawning (or connecting) to the tool list
STOP_TIMEOUT = 8.0  # the SDK's own stdio shutdown takes at most about 6 s (close, TERM, KILL)
GROUP_GRACE = 1.0  # seconds a server's leftover children get between SIGTERM and SIGKILL
STDERR_KEEP = 16 * 1024  # bytes of a server's stderr kept for its error messages
WATCH_EVERY = 0.5  # seconds between looks at whether an idle stdio server is still alive
CLIENT_INFO = types.Implementation(name="jarvis-tui", version="0.1.0")
_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class ServerStatus:
    """One server as the UI shows it. `error` says why it failed (None otherwise); `tools` are
    the specs it offers under their session names; `started_s` is how long its start took."""

    name: str
    transport: str
    state: State
    error: str | None
    tools: tuple[ToolSpec, ...]
    detail: str  # the command line or the address (without credentials)
    started_s: float | None
    # The tools of its listing that were left out (the SDK refuses them): (name, why) each.
    left_out: tuple[tuple[str, str], ...] = ()


class _StderrTail(asyncio.Protocol):
    """The last STDERR_KEEP bytes a server wrote to stderr."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.data += data
        if len(self.data) > STDERR_KEEP:
            del self.data[:-STDERR_KEEP]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)

    def last_line(self) -> str:
        text = terminal_safe(self.data.decode("utf-8", "replace"))
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""


@dataclass
class _Server:
    cfg: McpServerConfig
    state: State = "stopped"
    reason: str | None = None  # why it failed, without "server NAME"
    session: ClientSession | None = None
    tools: list[types.Tool] = field(default_factory=list)
    left_out: tuple[tuple[str, str], ...] = ()  # tools of its listing left out: (name, why)
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # ready, or failed first
    done: asyncio.Event = field(default_factory=asyncio.Event)  # its task has ended
    process: Any = None  # the SDK's process object (pid, returncode) for a stdio server
    group: int | None = None  # its process group, which its children share; ended with it
    stderr: _StderrTail | None = None
    started_s: float | None = None
    stopping: bool = False
    scrub: Scrubber = field(init=False)

    def __post_init__(self) -> None:
        # What it was given (a token in its env or headers) can come back in its stderr, an
        # error or a result; from there it would be shown, stored and sent to the model.
        self.scrub = Scrubber(self.cfg.secrets)

    def hide(self, text: str) -> str:
        """Its own words (stderr, an error) as shown: its secrets and anything shaped like a
        credential (a token it read from a file) hidden."""
        return redact(self.scrub(text), mark=HIDDEN)


class _Failed(Exception):
    """Ends a server's task with `reason` as its error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class McpHub(ToolBox):
    """The MCP servers of a session and their tools, as a ToolBox.

    `await start()` (or `ensure_started()`) before use and `await aclose()` after; `specs()`
    offers the tools of the servers that are ready. `on_change` is called with the new status
    on every state change, from the event loop's thread."""

    def __init__(self, servers: Iterable[McpServerConfig], *, default_timeout: float = 120.0,
                 start_timeout: float = START_TIMEOUT,
                 on_change: Callable[[ServerStatus], None] | None = None) -> None:
        self._servers: dict[str, _Server] = {}
        for cfg in servers:
            self._servers[cfg.name] = _Server(cfg, state="stopped" if cfg.enabled else "disabled")
        # One server can print another's secret (a shared token file, a wrapper that dumps its
        # whole environment): each hides every server's.
        self.scrub = Scrubber(s for srv in self._servers.values() for s in srv.cfg.secrets)
        for srv in self._servers.values():
            srv.scrub = self.scrub
        self.default_timeout = default_timeout
        self.start_timeout = start_timeout
        self.on_change = on_change
        self._started = False
        self._start_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> McpHub:
        """The servers of `settings.mcp`, each call bounded by tool_timeout unless the server
        says otherwise."""
        return cls(settings.mcp, default_timeout=settings.tool_timeout, **kwargs)

    # -- starting and stopping -------------------------------------------------------------------

    async def start(self, names: Iterable[str] | None = None) -> list[ServerStatus]:
        """Start every enabled server (or those named, enabled or not) that is not running yet,
        all at once; return when each is ready or has failed. Unknown names are skipped."""
        if self._closed:
            raise RuntimeError("the MCP hub is closed")
        if names is None:
            chosen = [s for s in self._servers.values() if s.cfg.enabled]
        else:
            wanted = set(names)
            chosen = [s for s in self._servers.values() if s.cfg.name in wanted]
        for srv in chosen:
            if srv.state not in ("starting", "ready"):
                self._launch(srv)
        if names is None:
            self._started = True
        await asyncio.gather(*(self._settle(srv) for srv in chosen))
        return [self._status(srv) for srv in chosen]

    async def ensure_started(self) -> None:
        """Start the enabled servers once (for `ask`, which needs them only if the model calls a
        tool); later calls return at once, or wait for the start under way."""
        async with self._start_lock:
            if not self._started:
                await self.start()

    async def stop(self, names: Iterable[str] | None = None) -> None:
        """Stop the named servers (all by default); their tools are no longer offered."""
        wanted = None if names is None else set(names)
        await asyncio.gather(*(self._stop(srv) for srv in self._servers.values()
                               if wanted is None or srv.cfg.name in wanted))

    async def aclose(self) -> None:
        """Stop every server and wait for their processes to end (bounded)."""
        self._closed = True
        try:
            await self.stop()
        finally:  # also when the caller gave up waiting (the app's exit is bounded)
            for srv in self._servers.values():
                _end_group(srv)

    async def __aenter__(self) -> McpHub:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _launch(self, srv: _Server) -> None:
        _end_group(srv)  # a reconnect: what the last run left behind goes first
        srv.stop = asyncio.Event()
        srv.settled = asyncio.Event()
        srv.done = asyncio.Event()
        srv.stopping = False
        srv.reason = None
        srv.started_s = None
        srv.tools = []
        srv.left_out = ()
        self._set(srv, "starting")
        srv.task = asyncio.create_task(self._serve(srv), name=f"mcp server {srv.cfg.name}")

    async def _settle(self, srv: _Server) -> None:
        # The task bounds its own start; this outer bound only guards against a bug there.
        try:
            await asyncio.wait_for(srv.settled.wait(), self.start_timeout + STOP_TIMEOUT + 5)
        except TimeoutError:
            await self._stop(srv)
            self._fail(srv, f"did not answer within {_seconds(self.start_timeout)}")

    async def _stop(self, srv: _Server) -> None:
        task = srv.task
        if task is None or task.done():
            if srv.state in ("starting", "ready"):
                self._set(srv, "stopped")
            return
        srv.stopping = True
        srv.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except TimeoutError:
            log.warning("MCP server %s did not stop in %s s; cancelling it", srv.cfg.name,
                        STOP_TIMEOUT)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(task, 3.0)
        except Exception:  # the task reports its own failures as the server's status
            pass
        finally:
            _end_group(srv)

    # -- one server's task -----------------------------------------------------------------------

    async def _serve(self, srv: _Server) -> None:
        began = time.monotonic()
        reason: str | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open(srv, stack)
                # One tool the SDK refuses is left out, not the whole server with it.
                listing = CheckedListing(read, write)
                session = await stack.enter_async_context(
                    ClientSession(dispatcher=listing, client_info=CLIENT_INFO))
                listing.version = lambda: session.protocol_version
                try:
                    with anyio.fail_after(self.start_timeout):
                        await session.initialize()
                        tools = await _list_tools(session)
                except TimeoutError:
                    raise _Failed(f"did not answer within {_seconds(self.start_timeout)}") from None
                srv.session, srv.tools = session, tools
                srv.left_out = tuple(listing.left_out)
                srv.started_s = time.monotonic() - began
                self._set(srv, "ready")
                srv.settled.set()
                await self._watch(srv)
        except _Failed as e:
            reason = e.reason
        except asyncio.CancelledError:
            reason = "stopped while starting" if not srv.stopping else None
            raise
        except Exception as e:  # whatever ends it is the server's failure, never the caller's
            reason = _describe(e)
        finally:
            srv.session = None
            reason = await self._exit_reason(srv, reason)
            # The SDK stops the server's process tree only when the server itself outlives its
            # grace period; one that exited (at the end of its stdin, or by crashing) leaves
            # its children running. They are ours to end: they share its group.
            await _end_group_gently(srv)
            if srv.stopping and srv.state != "failed":
                self._set(srv, "stopped")
            elif srv.state != "failed":
                self._fail(srv, reason or "stopped")
            srv.settled.set()
            srv.done.set()

    async def _open(self, srv: _Server, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        cfg = srv.cfg
        if cfg.transport == "http":
            client = httpx2.AsyncClient(headers=cfg.headers or None,
                                        timeout=httpx2.Timeout(30.0, read=300.0))
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(
                streamable_http_client(cfg.url, http_client=client))
            return read, write
        loop = asyncio.get_running_loop()
        r, w = os.pipe()
        errlog, reader = os.fdopen(w, "w"), os.fdopen(r, "rb", 0)
        try:
            pipe, tail = await loop.connect_read_pipe(_StderrTail, reader)
        except BaseException:
            errlog.close()
            reader.close()
            raise
        stack.callback(pipe.close)  # after the process is gone (callbacks run last-in first)
        srv.stderr = tail
        params = StdioServerParameters(command=cfg.command, args=list(cfg.args),
                                       env=cfg.env or None, cwd=cfg.cwd)
        cm = stdio_client(params, errlog=errlog)
        try:
            read, write = await stack.enter_async_context(cm)
        except OSError as e:
            raise _Failed(f"could not start {cfg.command!r}: {e.strerror or e}") from None
        finally:
            errlog.close()  # the child has its own copy; ours would keep the pipe from ending
        srv.process = _process_of(cm)
        srv.group = _own_group(srv.process)
        return read, write

    async def _watch(self, srv: _Server) -> None:
        """Until asked to stop; a stdio server that dies while idle fails at once rather than
        at the next call."""
        while not srv.stop.is_set():
            with anyio.move_on_after(WATCH_EVERY):
                await srv.stop.wait()
            if srv.process is not None and srv.process.returncode is not None:
                raise _Failed("exited")

    async def _exit_reason(self, srv: _Server, reason: str | None) -> str | None:
        """The reason, with the exit code and the last line of stderr when the process ended
        on its own ("exited (code 1): no such repository")."""
        proc = srv.process
        if proc is None or srv.stopping:
            return reason
        tail = srv.stderr
        if tail is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(tail.ended), 0.5)
        code = proc.returncode
        if code is None:
            return reason
        if reason is None or reason == "exited" or _closed_reason(reason):
            reason = "exited"
        else:
            return reason
        if code < 0:
            try:
                what = signal.Signals(-code).name
            except ValueError:
                what = str(-code)
            reason += f" (killed by {what})"
        else:
            reason += f" (code {code})"
        line = tail.last_line() if tail else ""
        return f"{reason}: {line}" if line else reason

    # -- state -----------------------------------------------------------------------------------

    def _set(self, srv: _Server, state: State) -> None:
        srv.state = state
        if state != "failed":
            srv.reason = None
        if self.on_change is not None:
            try:
                self.on_change(self._status(srv))
            except Exception:  # the UI's bug must not take a server down with it
                log.exception("MCP on_change callback failed")

    def _fail(self, srv: _Server, reason: str) -> None:
        srv.reason = srv.hide(reason)  # before _set, so on_change sees the error
        self._set(srv, "failed")

    def _status(self, srv: _Server) -> ServerStatus:
        cfg = srv.cfg
        tools = tuple(s for s in self.specs() if s.server == cfg.name) \
            if srv.state == "ready" else ()
        error = f"server {cfg.name} {srv.reason}" if srv.state == "failed" and srv.reason \
            else None
        return ServerStatus(cfg.name, cfg.transport, srv.state, error, tools, cfg.detail,
                            srv.started_s, srv.left_out if srv.state == "ready" else ())

    def statuses(self) -> list[ServerStatus]:
        """Every configured server, in the order of the configuration."""
        return [self._status(srv) for srv in self._servers.values()]

    # -- the ToolBox -----------------------------------------------------------------------------

    def specs(self) -> list[ToolSpec]:
        """The tools of the ready servers, named for the model: the tool's own name, or
        SERVER_TOOL where two servers offer one of the same name, within ^[a-zA-Z0-9_-]{1,64}$."""
        offered = [(srv, tool) for srv in self._servers.values() if srv.state == "ready"
                   for tool in srv.tools]
        counts: dict[str, int] = {}
        for _, tool in offered:
            key = _tool_name(tool.name)
            counts[key] = counts.get(key, 0) + 1
        taken: set[str] = set()
        out = []
        for srv, tool in offered:
            name = _tool_name(tool.name)
            if counts[name] > 1:
                name = _tool_name(f"{srv.cfg.name}_{tool.name}")
            base, n = name, 1
            while name in taken:  # still the same after cutting to 64 or replacing characters
                n += 1
                name = f"{base[:64 - len(str(n)) - 1]}_{n}"
            taken.add(name)
            out.append(ToolSpec(name=name, description=clean(tool.description or ""),
                                parameters=tool.input_schema or {"type": "object",
                                                                 "properties": {}},
                                server=srv.cfg.name, tool=tool.name))
        return out

    def timeout_for(self, spec: ToolSpec) -> float:
        """The engine's bound on a call: above this hub's own (the server's timeout or the
        default), which says more when it fires."""
        srv = self._servers.get(spec.server)
        seconds = (srv.cfg.timeout if srv is not None else None) or self.default_timeout
        return seconds + 10

    def allowed(self, spec: ToolSpec) -> bool:
        """Whether the server's `allow` list lets this tool run without asking."""
        srv = self._servers.get(spec.server)
        if srv is None:
            return False
        allow = srv.cfg.allow
        return "*" in allow or spec.tool in allow or spec.name in allow

    async def run(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        result = await self._call(call, spec)
        return replace(result, text=self.scrub(result.text))

    async def _call(self, call: ToolCall, spec: ToolSpec) -> ToolResult:
        srv = self._servers.get(spec.server)
        session = srv.session if srv is not None and srv.state == "ready" else None
        if srv is None or session is None:
            why = f": {srv.reason}" if srv is not None and srv.reason else ""
            state = srv.state if srv is not None else "unknown"
            return ToolResult(f"server {spec.server} is not running ({state}{why})", True,
                              {"server": spec.server})
        try:
            arguments = call.parsed()
        except ValueError as e:
            return ToolResult(f"{spec.name} was not called: {e}", True, {"server": spec.server})
        timeout = srv.cfg.timeout or self.default_timeout
        meta: dict[str, Any] = {"server": srv.cfg.name, "tool": spec.tool}
        began = time.monotonic()
        late = f"{spec.name} did not finish within {_seconds(timeout)}"
        try:
            # The SDK times the call itself (and tells the server to stop); this outer bound
            # covers a request that never even got written.
            async with asyncio.timeout(timeout + 5):
                result = await session.call_tool(spec.tool, arguments,
                                                 read_timeout_seconds=timeout)
        except TimeoutError:
            return ToolResult(late, True, meta)
        except MCPError as e:
            if e.code == types.REQUEST_TIMEOUT:
                return ToolResult(late, True, meta)
            if e.code == types.CONNECTION_CLOSED:
                return ToolResult(await self._lost(srv, e), True, meta)
            # Only why: whoever shows a failed call names the call and says it failed.
            return ToolResult(clean(e.message or f"error {e.code}"), True, meta)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError,
                httpx2.HTTPError) as e:
            return ToolResult(await self._lost(srv, e), True, meta)
        except Exception as e:  # a result the SDK could not read or check
            if srv.session is not session:
                return ToolResult(await self._lost(srv, e), True, meta)
            return ToolResult(_describe(e), True, meta)
        meta["seconds"] = round(time.monotonic() - began, 3)
        if not isinstance(result, types.CallToolResult):
            return ToolResult(f"{spec.name} gave a kind of result this client does not read",
                              True, meta)
        text, extra = result_text(result)
        return ToolResult(text, bool(result.is_error), {**meta, **extra})

    async def _lost(self, srv: _Server, error: BaseException) -> str:
        """The connection went away mid-call: mark the server failed (waiting briefly for its
        process's exit code and last words) and say so."""
        if srv.stopping:  # our own stop (aclose, /mcp stop) ended it: not the server's fault
            return f"server {srv.cfg.name} was stopped during the call"
        task = srv.task
        if task is not None and not task.done():
            if srv.process is None:  # HTTP: nothing to watch, so end the connection here
                self._fail(srv, f"lost the connection ({_describe(error)})")
                srv.stop.set()
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(srv.done.wait(), 3.0)
        if srv.stopping:
            return f"server {srv.cfg.name} was stopped during the call"
        if srv.state != "failed":
            self._fail(srv, f"lost the connection ({_describe(error)})")
        return f"server {srv.cfg.name} stopped: {srv.reason}"


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _tool_name(name: str) -> str:
    return _TOOL_NAME.sub("_", name)[:64] or "tool"


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _closed_reason(reason: str) -> bool:
    return "connection closed" in reason.lower()


def _describe(error: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the first real cause."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        text = error.message
    elif isinstance(error, ValidationError):  # an answer the SDK refused: one line, no dump
        text = f"sent an answer that does not follow MCP ({validation_line(error)})"
    elif isinstance(error, httpx2.ConnectError):
        text = f"cannot connect ({error})"
    elif isinstance(error, httpx2.HTTPStatusError):
        text = f"HTTP {error.response.status_code}"
    else:
        text = str(error) or type(error).__name__
    return terminal_safe(clean(text)).replace("\n", " ")[:300]


def _process_of(cm: Any) -> Any:
    """The SDK's process object inside stdio_client, for its pid and exit code.

    stdio_client does not hand it out; it is a local of the suspended generator. Reading it is
    what lets a status say "exited (code 1)" and a stop kill a process that outlived the SDK's
    own shutdown; without it (another SDK version) both quietly do without, and a test says so.
    """
    frame = getattr(getattr(cm, "gen", None), "ag_frame", None)
    proc = frame.f_locals.get("process") if frame is not None else None
    return proc if hasattr(proc, "pid") and hasattr(proc, "returncode") else None


def _own_group(proc: Any) -> int | None:
    """The process group the SDK started the server in (start_new_session: the server leads
    it), or None when it did not give it one of its own: ending ours would end us."""
    if proc is None:
        return None
    try:
        group = os.getpgid(proc.pid)
    except OSError:  # already gone: its group, if any member is left, bears its pid
        group = proc.pid
    return group if group == proc.pid and group != os.getpgrp() else None


def _group_alive(group: int) -> bool:
    """Whether any process is left running in the group. Its id cannot be handed to another
    process while one is: the kernel keeps a pid in use while a group bears it."""
    try:
        os.killpg(group, 0)
    except OSError:  # none left, or none ours to signal (setuid): nothing to do either way
        return False
    return _running_in(group) if os.path.isdir("/proc/self") else True


def _running_in(group: int) -> bool:
    """Whether a member of the group is more than a zombie (Linux): an orphan that has exited
    still answers signals until init reaps it, which can take seconds."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:  # it ended while we looked
            continue
        if len(fields) > 2 and int(fields[2]) == group and fields[0] != b"Z":
            return True
    return False


def _end_group(srv: _Server) -> None:
    """Kill whatever is left of a server's process group, at once."""
    group, srv.group = srv.group, None
    if group is not None and _group_alive(group):
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


async def _end_group_gently(srv: _Server) -> None:
    """Ask what is left of a server's process group to stop (SIGTERM), and kill it after
    GROUP_GRACE seconds if it has not."""
    group = srv.group
    if group is None or not _group_alive(group):
        srv.group = None
        return
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GROUP_GRACE
    while time.monotonic() < deadline and _group_alive(group):
        await asyncio.sleep(0.02)
    _end_group(srv)
