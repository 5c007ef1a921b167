"""Fault-matrix cases for API keys and the config file (issue 13, items 1, 2, 3, 17 and 18): a
key pasted with its line end, a key in the base URL's query, a key too short to hide, config
files nested too deep or holding a broken address, and a settings save that must keep the
user's file as they wrote it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line
from tests.hostile_server import HostileServer, echo_request

KEY = "sk-proj-Abc123Def456Ghi789"
GATEWAY_KEY = "gw-Zy9/Xw8+Vu7=Ts6"  # has characters a URL query percent-encodes
FAST_RETRIES = "max_retries = 1\nretry_base_delay = 0\nretry_max_delay = 0\n"


def write_config(t: Trial, text: str) -> Path:
    t.config.parent.mkdir(parents=True, exist_ok=True)
    t.config.write_text(text, encoding="utf-8")
    t.config.chmod(0o600)
    return t.config


def refused_in_one_line(t: Trial, proc: Proc, *words: str) -> None:
    """Exit 2 (nothing was sent) with a single line on stderr holding `words`."""
    lines = proc.stderr.strip().splitlines()
    t.expect(proc.returncode == 2, f"exit {proc.returncode}")
    t.expect(len(lines) == 1, f"{len(lines)} lines on stderr")
    t.expect(all(w in proc.stderr for w in words), f"no {words} in {one_line(proc.stderr)!r}")


def a_dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- item 1: a key with its line end --------------------------------------------------------------

def sent_the_trimmed_key(t: Trial, fake: FakeProvider, ask: Proc) -> None:
    t.expect(ask.returncode == 0, f"exit {ask.returncode}: {one_line(ask.stderr)}")
    sent = [r.headers.get("Authorization") for r in fake.chat_requests]
    t.expect(sent == [f"Bearer {KEY}"], f"the server saw {len(sent)} requests, not one "
                                        "with the trimmed key")
    t.keeps(["say hi"])


def key_with_crlf_in_the_config_file(tmp: Path) -> ProcOutcome:
    t = Trial(1, "API key with CRLF in the config file", tmp, secrets=[KEY])
    with FakeProvider() as fake:
        write_config(t, f'base_url = "{fake.base_url}"\nmodel = "m"\napi_key = "{KEY}\\r\\n"\n')
        ask = t.run("ask", "say hi")
        sent_the_trimmed_key(t, fake, ask)
    return t.outcome(f"sent Bearer {KEY[:8]}…")


def key_with_crlf_in_openai_api_key(tmp: Path) -> ProcOutcome:
    t = Trial(1, "OPENAI_API_KEY ending in CRLF", tmp, secrets=[KEY])
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "say hi",
                    env={**t.env, "OPENAI_API_KEY": KEY + "\r\n"})
        sent_the_trimmed_key(t, fake, ask)
    return t.outcome(f"sent Bearer {KEY[:8]}…")


def key_with_a_line_break_inside(tmp: Path) -> ProcOutcome:
    t = Trial(1, "API key with a line break inside", tmp, secrets=[KEY[:13], KEY[13:]])
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "say hi",
                    env={**t.env, "OPENAI_API_KEY": KEY[:13] + "\n" + KEY[13:]})
        refused_in_one_line(t, ask, "OPENAI_API_KEY", "line break", "not shown")
        t.expect(not fake.chat_requests, "a request was sent")
    return t.outcome()


# -- item 2: a key in the base URL's query -----------------------------------------------------

def query_key_server_down(tmp: Path) -> ProcOutcome:
    encoded = quote(GATEWAY_KEY, safe="")
    t = Trial(2, "key in the base URL query, server down", tmp, secrets=[GATEWAY_KEY, encoded])
    write_config(t, FAST_RETRIES)
    url = f"http://127.0.0.1:{a_dead_port()}/v1?key={encoded}"
    ask = t.run("--base-url", url, "--model", "m", "ask", "say hi")
    t.expect(ask.returncode == 1, f"exit {ask.returncode}")
    t.expect("?key=***" in ask.stderr, "the address is not shown with its key hidden")
    t.keeps(["say hi"])
    return t.outcome()


def query_key_echoed_by_the_server(tmp: Path) -> ProcOutcome:
    encoded = quote(GATEWAY_KEY, safe="")
    t = Trial(2, "key in the base URL query, request echoed", tmp,
              secrets=[GATEWAY_KEY, encoded, KEY])
    with HostileServer(echo_request) as server:
        ask = t.run("--base-url", f"{server.base_url}?key={encoded}", "--api-key", KEY,
                    "--model", "m", "ask", "say hi")
    t.expect(ask.returncode == 1, f"exit {ask.returncode}")
    t.expect("Bad request: POST" in ask.stderr, f"said {one_line(ask.stderr)!r}")
    paths = [r.path for r in server.requests if r.method == "POST"]
    t.expect(paths == [f"/v1/chat/completions?key={encoded}"], f"requested {paths}")
    t.keeps(["say hi"])
    return t.outcome()


# -- item 3: a key too short to be a secret ------------------------------------------------------

def one_letter_api_key(tmp: Path) -> ProcOutcome:
    t = Trial(3, "--api-key x keeps the x's of an error", tmp)
    said = "Invalid API key x: expected a key like sk-xxxx, got x (max 0x7f)"
    with FakeProvider() as fake:
        fake.faults.append(("status", 401, {}, {"error": {"message": said}}))
        ask = t.run("--base-url", fake.base_url, "--model", "m", "--api-key", "x",
                    "ask", "say hi")
    t.expect(ask.returncode == 1, f"exit {ask.returncode}")
    t.expect(said in ask.stderr, f"said {one_line(ask.stderr)!r}")
    return t.outcome()


# -- item 17: config and keys the HTTP client cannot take -------------------------------------

def deeply_nested_toml(tmp: Path) -> ProcOutcome:
    t = Trial(17, "config nested 100000 levels deep", tmp)
    for nested in ("[" * 100_000 + "]" * 100_000, "{ a = " * 50_000 + "1" + " }" * 50_000):
        write_config(t, f"theme = {nested}\n")
        refused_in_one_line(t, t.run("ask", "say hi"), str(t.config), "nested too deeply")
    return t.outcome()


def base_url_with_a_newline(tmp: Path) -> ProcOutcome:
    t = Trial(17, "base_url with a newline", tmp)
    with FakeProvider() as fake:
        write_config(t, f'base_url = "{fake.base_url}\\nhttp://elsewhere"\nmodel = "m"\n')
        refused_in_one_line(t, t.run("ask", "say hi"), "key 'base_url'", "line break")
        t.expect(not fake.chat_requests, "a request was sent")
    return t.outcome()


def non_ascii_api_key(tmp: Path) -> ProcOutcome:
    pasted = KEY[:13] + "\u201d" + KEY[13:]  # a closing quote from a word processor
    t = Trial(17, "API key with a non-ASCII character", tmp, secrets=[KEY[:13], KEY[13:]])
    with FakeProvider() as fake:
        ask = t.run("--base-url", fake.base_url, "--model", "m", "--api-key", pasted,
                    "ask", "say hi")
        refused_in_one_line(t, ask, "--api-key", "not ASCII (U+201D)")
        t.expect(not fake.chat_requests, "a request was sent")
    return t.outcome()


# -- item 18: saving settings keeps the user's file -----------------------------------------------

COMMENTED = """# jarvis, as I like it (kept in my dotfiles)
model = "m"  # small and fast

theme = "jarvis-dark"  # dark at night
"""


def theme_change_keeps_comments_and_symlink(tmp: Path) -> ProcOutcome:
    t = Trial(18, "theme change keeps comments and the symlink", tmp)
    dotfile = tmp / "dotfiles" / "jarvis.toml"
    dotfile.parent.mkdir(parents=True)
    with FakeProvider() as fake:
        dotfile.write_text(f'base_url = "{fake.base_url}"\n' + COMMENTED, encoding="utf-8")
        dotfile.chmod(0o600)
        t.config.parent.mkdir(parents=True)
        t.config.symlink_to(dotfile)
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "tests.faults.tui_driver", "jarvis-light"],
                              env=t.env, capture_output=True, timeout=120)
        t.add(Proc(["tui", "theme"], done.returncode, done.stdout.decode("utf-8", "replace"),
                   done.stderr.decode("utf-8", "replace"), time.monotonic() - start))
    t.expect(done.returncode == 0, f"exit {done.returncode}: {one_line(t.procs[-1].stderr)}")
    t.expect(t.config.is_symlink(), "the symlink was replaced by a plain file")
    expected = COMMENTED.replace('"jarvis-dark"', '"jarvis-light"')
    t.expect(dotfile.read_text(encoding="utf-8").endswith(expected),
             "the file's comments or order changed")
    return t.outcome("saved jarvis-light; comments and symlink kept")


CASES: list[ProcCase] = [
    ProcCase(1, "API key with CRLF in the config file", key_with_crlf_in_the_config_file),
    ProcCase(1, "OPENAI_API_KEY ending in CRLF", key_with_crlf_in_openai_api_key),
    ProcCase(1, "API key with a line break inside", key_with_a_line_break_inside),
    ProcCase(2, "key in the base URL query, server down", query_key_server_down),
    ProcCase(2, "key in the base URL query, request echoed", query_key_echoed_by_the_server),
    ProcCase(3, "--api-key x keeps the x's of an error", one_letter_api_key),
    ProcCase(17, "config nested 100000 levels deep", deeply_nested_toml),
    ProcCase(17, "base_url with a newline", base_url_with_a_newline),
    ProcCase(17, "API key with a non-ASCII character", non_ascii_api_key),
    ProcCase(18, "theme change keeps comments and the symlink",
             theme_change_keeps_comments_and_symlink),
]
