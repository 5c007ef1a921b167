"""A model server run as a child process on a free loopback port: started, waited for, stopped.

The app and `ask --local` talk to it through the same OpenAI-compatible provider as any remote
server. The child never outlives us: it is stopped on exit, on errors and on Ctrl+C, and on
Linux the kernel kills it if we die without a chance to (SIGKILL).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import platformdirs

from jarvis_tui.core.providers.local_model import (
    PART_PACKAGES,
    ModelFileError,
    Progress,
    model_path,
)

POLL_S = 0.25
STOP_GRACE_S = 5.0


class LocalServerError(Exception):
    """The local server could not start; the message says why and quotes its last log lines."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def llama_cpp_command(model: Path, n_ctx: int, host: str, port: int,
                      chat_format: str | None = None) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server. Without `chat_format` it uses the chat
    template the GGUF carries (Qwen's renders tool definitions; llama-cpp-python's chatml
    would drop them)."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
            "--n_ctx", str(n_ctx), "--host", host, "--port", str(port),
            *(["--chat_format", chat_format] if chat_format else [])]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to the child when this process dies, so a
    # killed jarvis-tui leaves no model server holding the port and the memory.
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class LocalServer:
    def __init__(self, command: Sequence[str], *, host: str = "127.0.0.1", port: int,
                 log_path: Path, startup_timeout: float = 180.0,
                 ready_path: str = "/v1/models") -> None:
        self.command = list(command)
        self.host, self.port = host, port
        self.log_path = log_path
        self.startup_timeout = startup_timeout
        self.ready_path = ready_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self, progress: Callable[[float], None] | None = None) -> None:
        """Start the child and wait until it answers; LocalServerError if it cannot.
        `progress` hears the seconds waited so far, about four times a second.

        A plain Popen, not an asyncio subprocess: the server outlives the event loop that
        started it (the CLI starts it, then hands over to the app's own loop)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # Unbuffered: uvicorn writes its access log to stdout, which a file would hold back in
        # an 8 KB buffer, so the log's tail (quoted in errors, read by the e2e tests) would lag.
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        started = time.monotonic()
        async with httpx.AsyncClient(timeout=2.0) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise LocalServerError(
                        f"the local model server exited with code {code} while starting; its "
                        f"log ({self.log_path}) ends with: {self._tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    resp = await client.get(f"http://{self.host}:{self.port}{self.ready_path}")
                    if resp.status_code == 200:
                        return
                waited = time.monotonic() - started
                if waited > self.startup_timeout:
                    self.stop()
                    raise LocalServerError(
                        f"the local model server did not answer within "
                        f"{self.startup_timeout:g}s; its log ({self.log_path}) ends with: "
                        f"{self._tail()}")
                if progress is not None:
                    progress(waited)
                await asyncio.sleep(POLL_S)

    def stop(self) -> None:
        """Terminate, then kill after a grace period. Safe to call twice."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()

    async def __aenter__(self) -> LocalServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()

    def _tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = [line for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(tail) or "(empty log)"


LOCAL_MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
# Chat replies keep the server's sampling (temperature 0.8): on the tuning questions of
# bench/local/local_answers.py --tuning, 0.0 and 0.2 answered no better (6/10 against 7/10).
# A summary must copy what was said, so it is asked at a low temperature.
LOCAL_SUMMARY_SAMPLING = {"temperature": 0.2}
# Follows the system prompt whenever the bundled model is offered tools: with it, at the chat's
# own sampling, it called the right tool for 8 of 24 questions that needed one, against 4 of 24
# without; a call where none was needed, 3 of 24 against 1 (each still asks the user first);
# bench/local/tools_local.py --passes 2. At the end of the system message, after the summary, it did
# not help.
LOCAL_TOOL_SENTENCE = ("Call a tool only when the question needs live data or the user's files; "
                       "otherwise answer directly.")
LOCAL_N_CTX = 4096  # when context_window is 0: room for a few turns and the tools' definitions
INSTALL_HINT = ("pip install -e '.[local]' with CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" (README, "
                "\"Run offline\")")


def with_tool_sentence(system_prompt: str) -> str:
    """The bundled model's system prompt when it is offered tools."""
    return f"{system_prompt} {LOCAL_TOOL_SENTENCE}".strip()


def local_model_installed() -> bool:
    """Whether the `local` extra (the server and the model's parts) is installed."""
    return all(importlib.util.find_spec(name) is not None
               for name in ("llama_cpp", *PART_PACKAGES))


def model_cache_dir() -> Path:
    return platformdirs.user_cache_path("jarvis-tui") / "models"


def local_model_path(progress: Progress | None = None, *, language: str = "en",
                     notice: Callable[[str], None] | None = None) -> Path:
    """The local model's GGUF file, assembled into the user's cache on first use and checked
    by sha256 (core/providers/local_model.py); LocalServerError with one line saying what to do
    when the `local` extra is missing, the bytes are not the pinned ones or the cache cannot
    be written. `notice` hears the space freed from what a killed start left."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalServerError(f"the local model server is not installed: {INSTALL_HINT}")
    try:
        return model_path(model_cache_dir(), progress, language=language, notice=notice)
    except ModelFileError as err:
        raise LocalServerError(str(err)) from None


def may_read_images(model: str) -> bool:
    """Whether `model` may be sent images at all: not the bundled one, a text model whose
    server has no vision projector (any other is tried, and a refusal is learned)."""
    return model != LOCAL_MODEL_NAME
