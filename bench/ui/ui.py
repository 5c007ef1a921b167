"""The TUI at any length (issue 7): the real app, headless, with its real widgets.

Four measurements, each beside a baseline measured in the same run:

1. key echo while a reply streams at 200 tokens/s: the time from a key reaching the app (posted
   from another thread, as the terminal driver's input thread does) to the first frame in which
   the prompt was painted with it; in a new session and in a stored 5,000-message one. Baseline:
   a plain Textual app streaming the same reply from the same server into a Markdown widget
   through Textual's own `Markdown.get_stream()` (a MarkdownStream, which batches the chunks
   that arrive while the widget is busy), a TextArea taking the keys (`child_stream_textual`).
2. the reply's render time: from the server sending the first chunk to the frame that shows the
   whole document, divided by the time the server took to send it (target <= 1.5); same
   baseline.
3. startup to first frame: the real `jarvis-tui` in a pseudo-terminal (120x40) with an existing
   config, until the chat screen's footer is on the terminal. Baselines: `import textual`, and a
   bare Textual app with a Static and a footer, timed the same way (bench/ui/ui_startup.py).
4. opening a stored session of 500 and 5,000 messages: time to a usable screen (chat screen
   drawn, prompt focused, messages shown), widgets in the DOM and peak memory growth; an empty
   store gives the app's own start. Baseline: every message mounted as a MessageView in the
   conversation's VerticalScroll.

Each app run happens in a fresh child process (this script with --child), so one run's imports,
caches and garbage do not colour the next. The streaming server runs in this parent process, on
loopback, so it does not share the app's interpreter. Frames: headless Textual computes each
frame (the compositor renders every changed line) but writes nothing; the bench hooks
`App._display` and also encodes the frame as the terminal bytes a real driver would write, so a
frame costs what it costs on a terminal.

Run from the repository root: python bench/ui/ui.py [--quick] [--only stream,startup,open]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.ui.ui_startup import import_profile, measure_startup, report_imports, report_startup  # noqa: E402
from tests.fakeserver import (  # noqa: E402
    ENCODING,
    FakeProvider,
    _Handler,
    _usage,
    start_event_stream,
)

SIZE = (120, 40)
RATE = 200.0  # tokens per second, as the issue says
CHILD_TIMEOUT_S = 240.0
LONG_SESSION = 5000  # stored messages behind the streamed reply in the second row
KEY_GAP_S = (0.05, 0.1)  # a key every 50-100 ms
TYPED = "the quick brown fox jumps over the lazy dog "  # what the typist types, again and again
TYPED_STREAM = TYPED * 200
SEND_TEXT = "Please write the long answer."
NOW = time.monotonic  # CLOCK_MONOTONIC: one clock for this process and the children


# -- data ---------------------------------------------------------------------------------------

SECTION = """## Step {k}: keeping the window in budget

A long conversation cannot be sent whole forever. **Step {k}** keeps the newest turns verbatim \
and folds the older ones into a summary; the gauge shows how much of the window is in use, and \
`compact_threshold` decides when folding starts. Nothing is dropped from the store.

- the system prompt and the summary go first
- then the newest turns, the newest one last
- about 1,024 tokens stay free for the reply

1. count the history with the calibrated estimator
2. drop the oldest turns that no longer fit
3. recall pinned turns by their words

```python
def fit(messages, budget):
    kept = []
    for m in reversed(messages):
        if budget < m.tokens:
            break
        kept.append(m)
        budget -= m.tokens
    return kept[::-1]
```

上下文窗口是有限的：第 {k} 步把较早的对话压缩成摘要，最新的几轮原样保留。这样即使会话很长，\
请求也不会超出模型的窗口，用户也不会丢失任何已经显示过的内容。

> Note: the store keeps every message; `/export` writes the whole session.

"""


def long_reply(tokens: int) -> str:
    """A Markdown reply of about `tokens` cl100k tokens: headings, paragraphs, lists, code
    fences, a quote and Chinese."""
    parts: list[str] = []
    total = k = 0
    while total < tokens:
        k += 1
        section = SECTION.format(k=k)
        parts.append(section)
        total += len(ENCODING.encode(section, disallowed_special=()))
    text = "".join(parts)
    pieces = token_pieces(text)
    return "".join(pieces[:tokens]).rstrip() + "\n"


def token_pieces(text: str) -> list[str]:
    """The text cut at token boundaries, one token a piece (a character split across tokens,
    as Chinese often is, goes out whole with the token that completes it)."""
    out: list[str] = []
    pending = b""
    for token in ENCODING.encode(text, disallowed_special=()):
        pending += ENCODING.decode_single_token_bytes(token)
        try:
            out.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        pending = b""
    if pending:
        out.append(pending.decode("utf-8", errors="replace"))
    return out


def session_messages(n: int) -> list[tuple[str, str]]:
    """n stored messages, alternating questions and Markdown answers, English and Chinese."""
    out = []
    for i in range(n):
        if i % 2 == 0:
            q = (f"Question {i}: how should a long conversation stay inside the window?"
                 if i % 4 == 0 else f"问题 {i}：长对话怎样才能不超出上下文窗口？")
            out.append(("user", q))
        else:
            body = (f"Answer {i}. Keep the **newest turns** verbatim and fold the rest into a "
                    "summary; the gauge shows how full the window is.\n\n"
                    "- the summary goes first\n- then the newest turns\n\n"
                    "上下文窗口有限，较早的对话会被压缩成摘要。\n")
            if i % 10 == 1:
                body += "\n```python\nkept = fit(messages, budget)\n```\n"
            out.append(("assistant", body))
    return out


def make_session_db(path: Path, n: int) -> None:
    from jarvis_tui.core.messages import Message
    from jarvis_tui.core.store.store import Store

    with Store(path) as store:
        conv = store.create_conversation(model="fake-model")
        for role, text in session_messages(n):
            store.add_message(conv.id, Message(role, text))


class SessionDBs:
    """Stored sessions of n messages, made once per run (an empty store for n = 0)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.made: dict[int, Path] = {}

    def get(self, n: int) -> Path:
        if n not in self.made:
            path = self.directory / f"session{n}.db"
            if n:
                make_session_db(path, n)
            self.made[n] = path
        return self.made[n]


# -- the streaming server -----------------------------------------------------------------------

class RateProvider(FakeProvider):
    """The fake provider, streaming its reply one token a chunk at a fixed rate (each chunk sent
    at its due time from the first one, so sleeps do not add up)."""

    def __init__(self, rate: float) -> None:
        super().__init__(limit=10_000_000)
        self.handler = _RateHandler
        self.rate = rate
        self.first_sent = self.last_sent = 0.0
        self.chunks = 0


class _RateHandler(_Handler):
    fake: RateProvider  # type: ignore[assignment]

    def _stream(self, body: dict, rec: Any, reply: str, finish: str, fault: Any) -> None:
        fake = self.fake
        start_event_stream(self)
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", fake.model)}

        def chunk(delta: dict, finish_reason: str | None = None) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta,
                                         "finish_reason": finish_reason}]}

        self._event(chunk({"role": "assistant", "content": ""}))
        pieces = token_pieces(reply)
        start = NOW()
        fake.first_sent = start
        for n, piece in enumerate(pieces):
            wait = start + n / fake.rate - NOW()
            if wait > 0 and not fake._sleep(wait):
                return
            self._event(chunk({"content": piece}))
        fake.last_sent = NOW()
        fake.chunks = len(pieces)
        self._event(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event({**base, "choices": [], "usage": _usage(rec)})
        self._line("data: [DONE]")


# -- helpers ------------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(p * len(ordered)) - 1)]


def rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found.get("VmRSS", 0.0), found.get("VmHWM", 0.0)


def run_child(spec: dict, timeout: float = CHILD_TIMEOUT_S) -> dict:
    """Run one measurement in a fresh interpreter; its answer is the last RESULT line."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
    return {"error": f"no result (exit {done.returncode}):\n    " + "\n    ".join(tail)}


class Frames:
    """Hooks App._display: every frame the app would write is also encoded to terminal bytes (as
    the real driver does) and time-stamped; `on_frame` callbacks run after each one."""

    def __init__(self, app: Any) -> None:
        from textual._compositor import CompositorUpdate

        self.times: list[float] = []
        self.bytes = 0
        self.callbacks: list[Any] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            if isinstance(renderable, CompositorUpdate) and app.is_headless:
                self.bytes += len(renderable.render_segments(app.console))
            now = NOW()
            self.times.append(now)
            for callback in self.callbacks:
                callback(now)

        app._display = display


# -- 1 and 2: streaming, in a child -------------------------------------------------------------

def typist(driver: Any, stop_at: float, sent: list[float]) -> None:
    """A key every 50-100 ms until `stop_at`, posted as the terminal driver's input thread does;
    each key's time goes into `sent`."""
    from textual import events

    rng = random.Random(7)
    i = 0
    while True:
        time.sleep(rng.uniform(*KEY_GAP_S))
        if NOW() >= stop_at:
            return
        ch = TYPED_STREAM[i]
        i += 1
        key = events.Key("space" if ch == " " else ch, ch)
        sent.append(NOW())
        driver.process_message(key)


async def type_through(app: Any, t_view: float, duration: float, limit: float, state: dict,
                       sent: list[float], echoed: list) -> None:
    """Type for `duration` from `t_view` (the typist thread, as the terminal's input thread
    posts keys), then wait until the reply is done and every key echoed, or `limit` passes."""
    thread = threading.Thread(target=typist, args=(app._driver, t_view + duration, sent),
                              daemon=True)
    thread.start()
    end = t_view + limit
    while NOW() < end and (state["done"] is None or thread.is_alive()
                           or len(echoed) < len(sent)):
        await asyncio.sleep(0.02)


async def child_stream_textual(spec: dict) -> dict:
    """The baseline: a plain Textual chat app, what Textual's documentation shows for streaming
    Markdown. A Markdown widget in an anchored VerticalScroll above a TextArea with the focus, and
    a worker that reads the same server's reply (httpx, the OpenAI SSE lines) and writes each
    chunk to `Markdown.get_stream(markdown)`, Textual's MarkdownStream, which joins the chunks
    that arrive while the widget is still appending the last ones."""
    import httpx
    from textual import work
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Footer, Markdown, TextArea

    expected = long_reply(spec["tokens"])
    duration = spec["tokens"] / spec["rate"]
    limit = spec["limit_s"]
    painted = [0]
    original_render = TextArea.render_lines

    def render_lines(self: TextArea, crop: Any) -> Any:
        if TYPED_STREAM.startswith(self.text):
            painted[0] = len(self.text)
        return original_render(self, crop)

    TextArea.render_lines = render_lines  # type: ignore[method-assign]
    state: dict[str, Any] = {"started": None, "stopped": False, "done": None}

    class PlainChat(App):
        CSS = "VerticalScroll { height: 1fr; } TextArea { height: 5; }"

        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()
            yield TextArea()
            yield Footer()

        def on_mount(self) -> None:
            self.query_one(TextArea).focus()

        @work(group="stream")
        async def stream_reply(self) -> None:
            self.query_one(VerticalScroll).anchor()
            stream = Markdown.get_stream(self.query_one(Markdown))
            body = {"model": "fake-model", "stream": True,
                    "messages": [{"role": "user", "content": SEND_TEXT}]}
            try:
                async with httpx.AsyncClient(timeout=300) as client, client.stream(
                        "POST", spec["base_url"] + "/chat/completions", json=body) as resp:
                    state["started"] = NOW()
                    async for line in resp.aiter_lines():
                        if not line.startswith("data: ") or line == "data: [DONE]":
                            continue
                        for choice in json.loads(line[len("data: "):]).get("choices", []):
                            text = (choice.get("delta") or {}).get("content")
                            if text:
                                await stream.write(text)
            finally:
                await stream.stop()
                state["stopped"] = True

    sent: list[float] = []
    echoed: list[float] = []
    app = PlainChat()
    frames = Frames(app)

    def on_frame(now: float) -> None:
        while len(echoed) < len(sent) and painted[0] > len(echoed):
            echoed.append(now)
        if state["done"] is not None or not state["stopped"]:
            return
        md = app.query_one(Markdown)
        if not md.lock.is_locked and md.source.strip() == expected.strip():
            state["done"] = now

    frames.callbacks.append(on_frame)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        box = app.query_one(TextArea)
        app.stream_reply()
        end = NOW() + 30
        while state["started"] is None and NOW() < end:
            await asyncio.sleep(0.002)
        if state["started"] is None:
            return {"error": "no reply began"}
        t_view = NOW()
        await type_through(app, t_view, duration, limit, state, sent, echoed)
        md = app.query_one(Markdown)
        frames_in_stream = sum(1 for t in frames.times if t_view <= t <= t_view + duration)
        result = {"t_view": t_view, "done": state["done"], "sent": sent[:],
                  "echoed": echoed[:], "complete": md.source.strip() == expected.strip(),
                  "blocks": len(md.children), "fps": frames_in_stream / duration, "gauge": [],
                  "typed_ok": box.text == TYPED_STREAM[:len(box.text)]}
        if state["done"] is None:
            result["timed_out"] = limit
        app.workers.cancel_group(app, "stream")
    return result


async def child_stream(spec: dict) -> dict:
    from textual import events
    from textual.widgets import Markdown

    from jarvis_tui.ui.widgets.prompt_input import PromptInput
    from tests.ui.app_helpers import make_app

    if spec["mode"] == "baseline":
        return await child_stream_textual(spec)
    expected = long_reply(spec["tokens"])
    duration = spec["tokens"] / spec["rate"]
    limit = spec["limit_s"]

    painted = [0]  # how many typed characters the prompt showed when it was last painted
    original_render = PromptInput.render_lines

    def render_lines(self: PromptInput, crop: Any) -> Any:
        text = self.text
        if TYPED_STREAM.startswith(text):
            painted[0] = len(text)
        return original_render(self, crop)

    PromptInput.render_lines = render_lines  # type: ignore[method-assign]

    from jarvis_tui.ui.screens.chat.screen import ChatScreen

    gauge: list[float] = []  # seconds per ChatScreen.update_gauge call while the reply streams
    original_gauge = ChatScreen.update_gauge

    # Whatever the screen passes on (marks=False for a keystroke): the stand-in only times it.
    def update_gauge(self: ChatScreen, *args: Any, **kwargs: Any) -> None:
        t = time.perf_counter()
        original_gauge(self, *args, **kwargs)
        if self.reply.view is not None:
            gauge.append(time.perf_counter() - t)

    ChatScreen.update_gauge = update_gauge  # type: ignore[method-assign]

    def document(view: Any) -> tuple[str, bool, int]:
        """The reply's Markdown source as shown, whether a widget is still busy, its blocks."""
        mds = list(view.query(Markdown))
        return ("".join(md.source for md in mds), any(md.lock.is_locked for md in mds),
                sum(len(md.children) for md in mds))

    sent: list[float] = []
    echoed: list[float] = []
    state: dict[str, Any] = {"view": None, "done": None, "chat": None}

    def on_frame(now: float) -> None:
        while len(echoed) < len(sent) and painted[0] > len(echoed):
            echoed.append(now)
        view, chat = state["view"], state["chat"]
        if view is None or state["done"] is not None or chat.reply.question is not None:
            return
        if view.markdown_stream_open:
            return
        source, busy, _ = document(view)
        if not busy and source.strip() == expected.strip():
            state["done"] = now

    with tempfile.TemporaryDirectory() as tmp:
        store = None
        if spec.get("db"):  # a long stored session to stream into (a copy: the run writes)
            from jarvis_tui.core.store.store import Store

            for suffix in ("", "-wal"):
                if Path(spec["db"] + suffix).exists():
                    shutil.copy(spec["db"] + suffix, Path(tmp) / f"sessions.db{suffix}")
            store = Store(Path(tmp) / "sessions.db")
        app = make_app(spec["base_url"], Path(tmp), store=store, context_window=131072,
                       response_reserve=8192, request_timeout=300)
        frames = Frames(app)
        frames.callbacks.append(on_frame)
        async with app.run_test(size=SIZE) as pilot:
            chat = state["chat"] = app.chat
            await pilot.pause()
            box = chat.query_one(PromptInput)
            box.focus()
            box.load_text(SEND_TEXT)
            await pilot.pause()
            # Enter as the terminal sends it (pilot.press would wait for the app to go idle,
            # which it does not while a reply streams).
            app._driver.process_message(events.Key("enter", "\r"))
            end = NOW() + 30
            while chat.reply.view is None and NOW() < end:
                await asyncio.sleep(0.002)
            if chat.reply.view is None:
                return {"error": "no reply view appeared"}
            state["view"] = chat.reply.view
            t_view = NOW()
            await type_through(app, t_view, duration, limit, state, sent, echoed)
            source, _, blocks = document(state["view"])
            frames_in_stream = sum(1 for t in frames.times if t_view <= t <= t_view + duration)
            result = {"t_view": t_view, "done": state["done"], "sent": sent[:],
                      "echoed": echoed[:], "complete": source.strip() == expected.strip(),
                      "blocks": blocks, "fps": frames_in_stream / duration, "gauge": gauge[:],
                      "typed_ok": box.text == TYPED_STREAM[:len(box.text)]}
            if state["done"] is None:
                result["timed_out"] = limit
            chat.workers.cancel_group(chat, "chat")
        return result



STREAM_ROWS = {
    "ours": "jarvis-tui, new session",
    "ours_long": f"jarvis-tui, {LONG_SESSION:,}-message session",
    "baseline": "baseline (Textual MarkdownStream)",
}


def measure_stream(quick: bool, dbs: SessionDBs, profile: str | None = None
                   ) -> dict[str, dict]:
    tokens = 200 if quick else 2000
    # An app that falls behind is given this long after the stream's end, then its figures are
    # reported as "more than".
    limit = tokens / RATE + (20.0 if quick else 30.0)
    out = {}
    # --quick leaves out the stored 5,000-message session (building it takes longest)
    for mode in [m for m in STREAM_ROWS if not (quick and m == "ours_long")]:
        fake = RateProvider(RATE).start()
        fake.reply_fn = lambda body, t=tokens: long_reply(t)
        spec = {"kind": "stream", "mode": mode, "base_url": fake.base_url, "tokens": tokens,
                "rate": RATE, "limit_s": limit}
        if mode == "ours_long":
            spec["db"] = str(dbs.get(LONG_SESSION))
        if profile:
            spec["profile"] = str(Path(profile) / f"stream_{mode}.txt")
        try:
            r = run_child(spec, timeout=limit + 60)
        finally:
            fake.stop()
        r.update(first_sent=fake.first_sent, last_sent=fake.last_sent, chunks=fake.chunks)
        out[mode] = r
    return out


def _ms(value: float, cap: str) -> str:
    return f"{value:>10.1f}" if value != float("inf") else f"{cap:>10}"


def report_stream(results: dict[str, dict]) -> None:
    chunks = max(r.get("chunks", 0) for r in results.values())
    print()
    print(f"1. Key echo while a reply streams ({chunks:,} chunks of one token at {RATE:.0f} "
          f"tokens/s; a key every {KEY_GAP_S[0] * 1000:.0f}-{KEY_GAP_S[1] * 1000:.0f} ms; "
          "key posted -> first frame showing it)")
    print(f"{'':36}{'keys':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'frames/s':>10}")
    for mode, label in STREAM_ROWS.items():
        if mode not in results:  # --quick
            continue
        r = results[mode]
        if "error" in r:
            print(f"{label:36}  error: {r['error']}")
            continue
        lat = [(e - s) * 1000 for s, e in zip(r["sent"], r["echoed"], strict=False)]
        lat += [float("inf")] * (len(r["sent"]) - len(lat))  # never shown within the limit
        cap = f">{r.get('timed_out', 0):.0f} s"
        print(f"{label:36}{len(lat):>6}{_ms(statistics.median(lat), cap)}"
              f"{_ms(percentile(lat, 0.95), cap)}{_ms(max(lat), cap)}{r['fps']:>10.1f}")
        if not r["typed_ok"]:
            print(f"{'':36}  (the prompt does not hold what was typed!)")
    print(f"{'target':36}{'>= 50':>6}{'':>10}{'<= 50':>10}")
    print()
    print("2. Whole reply rendered (first chunk sent -> frame showing the whole document)")
    print(f"{'':36}{'stream s':>10}{'render s':>10}{'ratio':>8}{'blocks':>8}"
          f"{'gauge ms mean/max':>19}")
    for mode, label in STREAM_ROWS.items():
        if mode not in results:  # --quick
            continue
        r = results[mode]
        if "error" in r:
            print(f"{label:36}  error: {r['error']}")
            continue
        stream_s = r["last_sent"] - r["first_sent"]
        if r["done"] is None:
            waited = r["t_view"] + r["timed_out"] - r["first_sent"]
            render, ratio = f"{'>' + format(waited, '.0f'):>10}", \
                f"{'>' + format(waited / stream_s, '.1f'):>8}"
        else:
            render_s = r["done"] - r["first_sent"]
            render, ratio = f"{render_s:>10.2f}", f"{render_s / stream_s:>8.2f}"
        gauge = r.get("gauge") or []
        gauge_ms = (f"{statistics.mean(gauge) * 1000:.1f} / {max(gauge) * 1000:.1f}" if gauge
                    else "-")
        flag = "" if r["complete"] else "  (document incomplete)"
        print(f"{label:36}{stream_s:>10.2f}{render}{ratio}{r['blocks']:>8}{gauge_ms:>19}{flag}")
    print(f"{'target':36}{'':>10}{'':>10}{'<= 1.5':>8}")


# -- 4: opening a long session, in a child ------------------------------------------------------

def patch_baseline_open() -> None:
    """The baseline conversation: every message of the session mounted as a MessageView (the
    app's own show() runs first, then whatever it left out goes in above it)."""
    from jarvis_tui.ui.widgets.conversation import Conversation
    from jarvis_tui.ui.widgets.message_view import MessageView

    original = Conversation.show

    async def show(self: Conversation, messages: list) -> None:
        await original(self, messages)
        shown = {id(view.message) for view in self.query(MessageView)}
        rest = [MessageView(m) for m in messages if id(m) not in shown]
        if rest:
            await self.mount_all(rest, before=0)
        self.scroll_end(animate=False)

    Conversation.show = show  # type: ignore[method-assign]


async def child_open(spec: dict) -> dict:
    import gc

    from textual.widgets import Markdown

    from jarvis_tui.core.store.store import Store
    from jarvis_tui.ui.screens.chat.screen import ChatScreen  # imported before timing
    from jarvis_tui.ui.widgets.message_view import MessageView
    from jarvis_tui.ui.widgets.prompt_input import PromptInput
    from tests.ui.app_helpers import make_app

    if spec["mode"] == "baseline":
        patch_baseline_open()
    limit = spec["limit_s"]
    gc.collect()
    rss0, _ = rss_mb()
    state: dict[str, Any] = {"usable": None}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = NOW()
        store = Store(spec["db"])
        app = make_app("http://127.0.0.1:9/v1", Path(tmp), store=store, context_window=131072)
        frames = Frames(app)

        def on_frame(now: float) -> None:
            if state["usable"] is not None:
                return
            chat = app.screen
            if not isinstance(chat, ChatScreen) or not isinstance(app.focused, PromptInput):
                return
            if not chat.session.messages or chat.query(MessageView):
                state["usable"] = now

        frames.callbacks.append(on_frame)
        result: dict[str, Any] = {}
        async with app.run_test(size=SIZE) as pilot:
            end = t0 + limit
            while state["usable"] is None and NOW() < end:
                await asyncio.sleep(0.01)
            if state["usable"] is None:
                return {"error": f"no usable screen within {limit:.0f} s", "timed_out": limit}
            # Every mounted reply's Markdown parsed and mounted too.
            loaded = None
            while NOW() < end:
                mds = list(app.screen.query(Markdown))
                if all(not md.lock.is_locked and (md.children or not md.source.strip())
                       for md in mds):
                    loaded = NOW()
                    break
                await asyncio.sleep(0.05)
            await pilot.pause()
            rss1, hwm = rss_mb()
            result = {
                "usable": state["usable"] - t0,
                "loaded": None if loaded is None else loaded - t0,
                "widgets": len(list(app.screen.walk_children(with_self=True))),
                "views": len(app.screen.query(MessageView)),
                "engine_messages": len(app.chat.session.messages),
                "rss_growth": rss1 - rss0, "peak_growth": hwm - rss0,
            }
        store.close()
    return result


def measure_open(quick: bool, dbs: SessionDBs, profile: str | None = None
                 ) -> dict[tuple[str, int], dict]:
    limit = 20.0 if quick else 60.0  # the baseline's 5,000 views take minutes: cut off there
    rows = [("ours", 0), ("ours", 500), ("ours", 5000), ("baseline", 500), ("baseline", 5000)]
    if quick:  # the baseline mounts every message: 100 of them take seconds, not 500's 15
        rows = [(mode, 100) for mode, n in rows if n == 500]
    out = {}
    for mode, n in rows:
        spec = {"kind": "open", "mode": mode, "db": str(dbs.get(n)), "limit_s": limit}
        if profile:
            spec["profile"] = str(Path(profile) / f"open_{mode}_{n}.txt")
        r = run_child(spec, timeout=limit + 20)
        if "error" in r and "timed out" in r["error"] or r.get("timed_out"):
            r = {"error": f"not usable after {limit:.0f} s"}
        out[(mode, n)] = r
    return out


def report_open(results: dict[tuple[str, int], dict]) -> None:
    print()
    print("4. Opening a stored session (app start -> chat screen drawn with its messages, "
          "prompt focused; 0 messages = the app's own start)")
    print(f"{'':34}{'messages':>9}{'usable s':>10}{'md done s':>10}{'views':>7}"
          f"{'widgets':>9}{'mem +MB':>9}")
    for (mode, n), r in results.items():
        label = "jarvis-tui" if mode == "ours" else "baseline (every message mounted)"
        if "error" in r:
            print(f"{label:34}{n:>9,}  {r['error']}")
            continue
        loaded = f"{r['loaded']:>10.2f}" if r["loaded"] is not None else f"{'-':>10}"
        print(f"{label:34}{n:>9,}{r['usable']:>10.2f}{loaded}{r['views']:>7}"
              f"{r['widgets']:>9,}{r['peak_growth']:>9.1f}")
    print(f"{'target (5,000 messages)':34}{'':>9}{'<= 1.00':>10}{'':>10}{'':>7}"
          f"{'as 500':>9}{'as 500':>9}")
    print("(md done: every mounted reply's Markdown parsed and mounted; mem: peak RSS growth "
          "from before the store was opened)")


# -- main ---------------------------------------------------------------------------------------

def child_main(spec: dict) -> None:
    kind = spec["kind"]
    runner = {"stream": child_stream, "open": child_open}[kind]
    if spec.get("profile"):
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        result = profiler.runcall(asyncio.run, runner(spec))
        with open(spec["profile"], "w") as f:
            stats = pstats.Stats(profiler, stream=f)
            stats.sort_stats("tottime").print_stats(60)
            stats.sort_stats("cumulative").print_stats(80)
    else:
        result = asyncio.run(runner(spec))
    print("RESULT " + json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: a 200-token reply, one startup run, only "
                             "100-message sessions opened")
    parser.add_argument("--only", default="stream,startup,open",
                        help="comma-separated: stream, startup, open")
    parser.add_argument("--profile", metavar="DIR",
                        help="run the app children under cProfile; write their stats to DIR")
    parser.add_argument("--imports", action="store_true",
                        help="with startup: the 10 costliest imports of the app's start "
                             "(python -X importtime)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(json.loads(args.child))
        return
    only = {part.strip() for part in args.only.split(",")}
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    started = NOW()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} CPUs (other work on the machine moves the "
          "timings)")
    with tempfile.TemporaryDirectory() as tmp:
        dbs = SessionDBs(Path(tmp))
        if "stream" in only:
            report_stream(measure_stream(args.quick, dbs, args.profile))
        if "startup" in only:
            report_startup(measure_startup(args.quick))
            if args.imports:
                report_imports(import_profile())
        if "open" in only:
            report_open(measure_open(args.quick, dbs, args.profile))
    print(f"\n(bench took {NOW() - started:.0f} s)")


if __name__ == "__main__":
    main()
