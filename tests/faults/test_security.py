"""Hostile text and secrets: what a model, a server or a pasted key can make the client print,
store or export. The CLI runs as real processes against the fake server on a loopback socket."""

from __future__ import annotations

import json
import os
import pty
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.errors import (
    NetworkError,
    ProviderError,
    RequestError,
    RetryableError,
)
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.safety.textsafe import SafeStream, terminal_safe
from jarvis_tui.core.settings.config import config_warnings
from jarvis_tui.core.store.export import REDACTED, redact
from jarvis_tui.core.store.store import Store
from tests.cli.test_cli import flags, run
from tests.hostile_server import HostileServer, echo_request
from tests.provider_helpers import stream_events

# Console markup, a screen clear, a clipboard write (OSC 52), window titles (OSC 0, BEL- and
# ST-terminated), 8-bit CSI and OSC, and a bare C1 control (RI, cursor up), around CJK and emoji.
PAYLOAD = ("see [link=https://evil.example]click[/link] and [bold]x[/] then [/] 中文😀"
           "\x1b[2J\x1b]52;c;SGVsbG8gY2xpcGJvYXJk\x07\x1b]0;pwned\x07\x1b]0;st title\x1b\\"
           "\x9b31m\x9d0;c1 title\x9c\x8d end\ttab")
SHOWN = "see [link=https://evil.example]click[/link] and [bold]x[/] then [/] 中文😀 end\ttab"
# Anything a terminal acts on: C0 controls but tab and newline, DEL, C1 (U+009B CSI, U+009D OSC).
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
KEY = "sk-test-SECRET-123456"


def assert_clean(text: str) -> None:
    found = UNSAFE.search(text)
    assert found is None, f"control character {found.group()!r} in {text!r}"


# -- terminal_safe and SafeStream --------------------------------------------------------------

@pytest.mark.parametrize("raw, shown", [
    ("a\x1b]52;c;SGVsbG8=\x07b", "ab"),  # OSC 52 clipboard write, BEL
    ("a\x1b]0;title\x07b", "ab"),  # OSC 0 window title
    ("a\x1b]0;title\x1b\\b", "ab"),  # ST-terminated
    ("a\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # OSC 8 hyperlink
    ("a\x1b[2J\x1b[1;31mb\x1b[0m", "ab"),  # CSI
    ("a\x1b7\x1b8\x1bc\x1bM\x1b(B\x1b#8b", "ab"),  # single-character and nF ESC sequences
    ("a\x1bP1;1|secret\x1b\\b", "ab"),  # DCS
    ("a\x9b2Jb\x9b31m", "ab"),  # 8-bit CSI
    ("a\x9d0;title\x07b\x9d52;c;SGk=\x9c", "ab"),  # 8-bit OSC, BEL and 8-bit ST
    ("a\x85\x8d\x90q\x9cb\x9f", "ab"),  # other C1 controls, 8-bit DCS
    ("a\x07\x08\x0c\x7fb\rc", "abc"),  # BEL, backspace, form feed, DEL, a bare CR
    ("a\x1b]0;never ends\nnext line", "a\nnext line"),  # unterminated: only to the line end
    ("行一\r\n行二\t制表😀👩‍💻", "行一\n行二\t制表😀👩‍💻"),  # CJK, emoji, ZWJ kept; CRLF → LF
    ("中\x1b文\x1b", "中文"),  # a lone ESC
])
def test_terminal_safe_removes_every_sequence_and_keeps_text(raw, shown):
    assert terminal_safe(raw) == shown


def test_terminal_safe_on_the_payload():
    assert terminal_safe(PAYLOAD) == SHOWN


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 11])
def test_safe_stream_holds_sequences_split_across_chunks(size):
    stream = SafeStream()
    pieces = [PAYLOAD[i:i + size] for i in range(0, len(PAYLOAD), size)]
    out = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert out == SHOWN


def test_safe_stream_lone_esc_at_a_chunk_boundary():
    stream = SafeStream()
    assert stream.feed("你好\x1b") == "你好"  # held: the next chunk may make it a sequence
    assert stream.feed("]0;pwned\x07世界") == "世界"
    assert stream.feed("end\x1b") == "end"
    assert stream.flush() == ""
    stream = SafeStream()
    assert stream.feed("x\x9b3") == "x"  # 8-bit CSI split too
    assert stream.feed("1mred") == "red"


def test_safe_stream_gives_up_on_a_sequence_that_never_ends():
    stream = SafeStream()
    out = stream.feed("a\x1b]0;" + "x" * 3000) + stream.feed("\nrest") + stream.flush()
    assert out.endswith("\nrest") and "\x1b" not in out


# -- redaction ---------------------------------------------------------------------------------

SECRETS = {
    "openai": "sk-" + "A1b2C3d4E5f6G7h8I9j0" * 2 + "KLMNOPQR",
    "openai_project": "sk-proj-" + "Ab3_De6-Gh9Jk2Mn5Pq8St1Vw4Yz7" * 3,
    "anthropic": "sk-ant-api03-" + "xY9_zW8-vU7tS6rQ5pO4nM3lK2jI1hG0fE" * 2 + "-AA",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"[:35],
    "github_classic": "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a",
    "github_oauth": "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
    "github_fine": "github_pat_11ABCDEFG0" + "a1B2c3D4e5F6g7H8i9J0" * 3,
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws": "AKIAIOSFODNN7EXAMPLE",
}


@pytest.mark.parametrize("name", SECRETS)
def test_redact_each_secret_kind_inside_chinese_text(name):
    secret = SECRETS[name]
    text = f"这是我的密钥{secret}，请不要泄露。Also: ({secret})."
    assert redact(text) == f"这是我的密钥{REDACTED}，请不要泄露。Also: ({REDACTED})."


@pytest.mark.parametrize("text, shown", [
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.c2ln",
     "Authorization: Bearer [redacted]"),
    ("curl -H 'authorization: bearer abc123def456ghi'",
     "curl -H 'authorization: bearer [redacted]'"),
    ('api_key = "hunter2-but-longer"', 'api_key = "[redacted]"'),
    ('{"api_key": "plain-secret"}', '{"api_key": "[redacted]"}'),
    ("client = Client(api_key='k-9f8e7d')", "client = Client(api_key='[redacted]')"),
    ("OPENAI_API_KEY=abc123def456 python app.py", "OPENAI_API_KEY=[redacted] python app.py"),
    ('password: "correct horse"', 'password: "[redacted]"'),
])
def test_redact_headers_and_assignments(text, shown):
    assert redact(text) == shown


@pytest.mark.parametrize("text", [
    "api_key = os.environ['OPENAI_API_KEY']",  # code that reads a key holds none
    "def f(api_key: str) -> None:",
    "max_tokens = 512 and context_window: 8192",
    "the bearer of this letter; Bearer instrument",
    "sk-learn, task-oriented-dialogue-systems-and-more",
    "AKIA is a prefix; 上下文窗口是 128000 个 token",
])
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == text


# -- the CLI: hostile replies and error bodies ------------------------------------------------

def test_ask_prints_a_hostile_reply_as_plain_text(home, fake_server):
    fake_server.reply_fn = lambda body: PAYLOAD
    result = run(home, *flags(fake_server), "ask", "hi")
    assert result.returncode == 0, result.stderr
    assert_clean(result.stdout.replace("\t", ""))
    assert result.stdout == SHOWN + "\n"  # brackets literal, CJK and emoji whole
    # The session keeps what the model sent, exactly; only the terminal is protected.
    data = json.loads(run(home, "export", "--format", "json").stdout)
    assert data["messages"][-1]["content"] == PAYLOAD


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_in_a_reply_arrive_whole(home, fake_server, separator):
    # SSE lines end only at CR or LF. A server that writes JSON without ASCII escaping (llama.cpp
    # does) sends U+2028, U+2029 and NEL raw; splitting on them would drop that chunk.
    reply = f"第一段{separator}第二段 and more text{separator}end"
    fake_server.reply_fn = lambda body: reply
    result = run(home, *flags(fake_server), "ask", "hi")
    assert result.returncode == 0, result.stderr
    data = json.loads(run(home, "export", "--format", "json").stdout)
    assert data["messages"][-1]["content"] == reply


def test_a_hostile_error_body_is_one_clean_line(home, fake_server):
    fake_server.faults.append(("status", 400, {}, {"error": {"message": PAYLOAD, "type": "x"}}))
    result = run(home, *flags(fake_server), "ask", "hi")
    assert result.returncode == 1
    assert_clean(result.stderr)
    lines = [ln for ln in result.stderr.splitlines() if "[bold]" in ln]
    assert len(lines) == 1
    assert "[link=https://evil.example]click[/link] and [bold]x[/] then [/] 中文😀" in lines[0]
    assert "Traceback" not in result.stderr


def test_a_hostile_config_key_is_quoted_cleanly(home, tmp_path):
    config = tmp_path / "hostile.toml"
    config.write_text('"\\u001b]0;pwned\\u0007[bold]x[/]" = 1\n', encoding="utf-8")
    config.chmod(0o600)
    result = run(home, "--config", str(config), "ask", "hi")
    assert result.returncode == 2
    assert_clean(result.stderr)
    assert "unknown key" in result.stderr


# -- export: faithful to a file or pipe, clean on a terminal -----------------------------------

def seed(home: dict[str, str], contents: list[str], summary: str | None = None) -> Path:
    """A session written straight into the default database, as the app would have."""
    db = Path(home["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    with Store(db) as store:
        conv = store.create_conversation(model="fake-model")
        msgs = [store.add_message(conv.id, Message(role=("user", "assistant")[i % 2], content=c))
                for i, c in enumerate(contents)]
        if summary is not None:
            store.add_summary(conv.id, summary, msgs[:2], kind="auto")
    return db


def export_to_terminal(env: dict[str, str], *args: str) -> str:
    """`jarvis-tui export` with its stdout on a real pseudo-terminal; what the terminal got."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "jarvis_tui", "export", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    got = b""
    try:
        while chunk := os.read(master, 65536):
            got += chunk
    except OSError:  # EIO: the child closed its side of the terminal
        pass
    finally:
        os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    proc.stderr.close()
    return got.decode("utf-8").replace("\r\n", "\n")  # the tty's own LF → CRLF


def test_export_is_clean_in_a_file_too_and_json_keeps_every_byte_escaped(home):
    seed(home, ["问题：" + PAYLOAD, "回答：" + PAYLOAD], summary="摘要 " + PAYLOAD)
    piped = run(home, "export", "--format", "md")  # a file the user will `cat` or paste from
    assert piped.returncode == 0
    assert piped.stdout.count(SHOWN) == 3
    assert_clean(piped.stdout.replace("\t", ""))
    piped = run(home, "export", "--format", "json")
    assert_clean(piped.stdout.replace("\t", ""))
    as_json = json.loads(piped.stdout)  # every ESC, BEL and C1 byte kept, as \u escapes
    assert as_json["messages"][0]["content"] == "问题：" + PAYLOAD
    assert as_json["summaries"][0]["content"] == "摘要 " + PAYLOAD

    for fmt in ("md", "json"):
        shown = export_to_terminal(home, "--format", fmt)
        assert_clean(shown.replace("\t", ""))
        assert "中文😀" in shown
    md = export_to_terminal(home, "--format", "md")
    assert md.count(SHOWN) == 3 and "问题：" in md and "# Summaries" in md


def test_export_redact_replaces_every_secret_kind(home):
    kinds = list(SECRETS.values()) + [
        "Authorization: Bearer abcdef0123456789abcdef", 'api_key = "my-own-secret"',
        '{"api_key": "json-secret"}']
    contents = [f"第{i}条：{text} 结束" for i, text in enumerate(kinds)]
    contents.append("普通的回答，没有密钥。")  # an even count: user/assistant pairs
    seed(home, contents, summary="摘要里也有 " + SECRETS["openai"] + " 和 " + SECRETS["aws"])
    secrets = list(SECRETS.values()) + ["abcdef0123456789abcdef", "my-own-secret", "json-secret"]

    for fmt in ("md", "json"):
        faithful = run(home, "export", "--format", fmt)
        assert faithful.returncode == 0
        assert all(s in faithful.stdout for s in secrets)  # by default nothing is changed

        redacted = run(home, "export", "--format", fmt, "--redact")
        assert redacted.returncode == 0, redacted.stderr
        leaked = [s for s in secrets if s in redacted.stdout]
        assert leaked == []
        assert redacted.stdout.count(REDACTED) >= len(secrets) + 2  # the summary's two as well
        assert "普通的回答，没有密钥。" in redacted.stdout and "结束" in redacted.stdout

    data = json.loads(run(home, "export", "--format", "json", "--redact").stdout)
    assert data["messages"][0]["content"] == f"第0条：{REDACTED} 结束"
    assert data["conversation"]["title"] == f"第0条：{REDACTED} 结束"  # the title came from it
    assert data["summaries"][0]["content"] == f"摘要里也有 {REDACTED} 和 {REDACTED}"


# -- the API key stays out of the store, the exports and the error lines ----------------------

def db_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_api_key_is_never_stored_exported_or_printed(home, fake_server, how):
    env = {**home, "OPENAI_API_KEY": KEY} if how == "env" else home
    key_flag = ["--api-key", KEY] if how == "flag" else []
    first = run(env, *flags(fake_server, *key_flag), "ask", "第一个问题 first question")
    assert first.returncode == 0, first.stderr
    sent = {k.lower(): v for k, v in fake_server.chat_requests[-1].headers.items()}
    assert sent["authorization"] == f"Bearer {KEY}"  # the key really was in use

    db = Path(home["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db"
    # An open reader keeps the WAL file in place (the last connection to close would fold it
    # into the database and delete it), so the bytes of both are read.
    with sqlite3.connect(db) as reader:
        reader.execute("SELECT count(*) FROM messages").fetchone()
        # A proxy that echoes the key back, in the message and elsewhere in the body.
        fake_server.faults.append(("status", 401, {}, {
            "error": {"message": f"Incorrect API key provided: {KEY}. 密钥 {KEY} 无效。",
                      "type": "invalid_request_error", "code": "invalid_api_key",
                      "key": KEY}}))
        failed = run(env, *flags(fake_server, *key_flag), "ask", "第二个问题 second question")
        assert failed.returncode == 1
        assert "API key" in failed.stderr and "Traceback" not in failed.stderr
        assert KEY not in failed.stderr and "SECRET" not in failed.stderr

        assert Path(str(db) + "-wal").stat().st_size > 0
        stored = db_bytes(db)
    assert "第二个问题".encode() in stored  # the second round was written after all
    assert KEY.encode() not in stored and b"SECRET" not in stored

    for fmt in ("md", "json"):
        exported = run(env, "export", "--format", fmt)
        assert exported.returncode == 0 and "第一个问题" in exported.stdout
        assert KEY not in exported.stdout and KEY not in exported.stderr


def test_an_echoed_key_cut_by_the_length_limit_does_not_leak_its_start(home, fake_server):
    # Error messages are cut to 300 characters; a key that straddles the cut must not survive
    # as a prefix ("sk-test-SECRET-12…").
    fake_server.faults.append(("status", 401, {}, {"error": {"message": "x" * 281 + " " + KEY}}))
    result = run(home, *flags(fake_server, "--api-key", KEY), "ask", "hi")
    assert result.returncode == 1
    assert "SECRET" not in result.stderr, result.stderr


# -- config file permissions -------------------------------------------------------------------

def default_config(home: dict[str, str], mode: int) -> Path:
    config = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'api_key = "{KEY}"\nmodel = "fake-model"\n', encoding="utf-8")
    config.chmod(mode)
    return config


def test_a_config_file_others_can_read_is_warned_about(home):
    config = default_config(home, 0o644)
    expected = (f"jarvis-tui: warning: {config} can be read by other users (mode 0644) and may "
                f"hold an API key; run: chmod 600 {config}")
    assert config_warnings(config) == [expected.removeprefix("jarvis-tui: warning: ")]
    for args in (["sessions"], ["export"], ["ask", "   "], ["--compact-threshold", "70"]):
        result = run(home, *args)  # the last one is the TUI start, stopped by a bad value
        assert result.stderr.splitlines()[0] == expected, args
        assert KEY not in result.stderr
    listing = run(home, "sessions")
    assert listing.returncode == 0 and "no sessions yet" in listing.stdout  # only a warning
    other = Path(home["XDG_CONFIG_HOME"]) / "elsewhere.toml"
    other.write_text(f'api_key = "{KEY}"\n', encoding="utf-8")
    other.chmod(0o640)
    result = run(home, "--config", str(other), "sessions")
    assert f"{other} can be read by other users (mode 0640)" in result.stderr


def test_a_private_or_keyless_config_file_gets_no_warning(home):
    config = default_config(home, 0o600)
    assert config_warnings(config) == []
    assert config_warnings(config.parent / "missing.toml") == []
    result = run(home, "sessions")
    assert result.returncode == 0 and result.stderr == ""
    # Readable by all but holding no secret: the usual editor default, not worth a warning.
    config.write_text('model = "fake-model"\nbase_url = "https://example.com/@v1"\n')
    config.chmod(0o644)
    assert config_warnings(config) == []
    assert run(home, "sessions").stderr == ""


@pytest.mark.parametrize("text", [
    'base_url = "https://user:pa55@proxy.example/v1"\n',  # a password in the address
    'api_key = "sk-unfinished\n',  # broken TOML may still hold a key
])
def test_other_secrets_in_a_readable_config_are_warned_about(home, text):
    config = Path(home["XDG_CONFIG_HOME"]) / "cfg.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    config.chmod(0o604)
    assert config_warnings(config) == [
        f"{config} can be read by other users (mode 0604) and may hold an API key; "
        f"run: chmod 600 {config}"]


# -- the provider's secrets: the key, and credentials in the base URL -------------------------

GATEWAY = "gw-Zy9/Xw8+Vu7=Ts6"


def test_the_address_shown_hides_credentials_and_secret_query_values():
    url = (f"https://me:{quote(GATEWAY, safe='')}@gw.example/v1/?api-version=2024-06-01"
           f"&key={quote(GATEWAY)}&X-Api-Key=abc&access_token=t0ken-t0ken&sig=s1gn4ture&model=m")
    shown = repr(OpenAIProvider(url, KEY))
    assert shown == ("OpenAIProvider('https://gw.example/v1?api-version=2024-06-01&key=***"
                     "&X-Api-Key=***&access_token=***&sig=***&model=m')")


async def test_a_key_in_the_query_goes_on_every_request_and_never_into_a_message():
    encoded = quote(GATEWAY, safe="")
    with HostileServer(echo_request) as server:
        async with OpenAIProvider(f"{server.base_url}?key={encoded}&v=1", KEY) as provider:
            with pytest.raises(RequestError) as err:
                await stream_events(provider, [{"role": "user", "content": "hi"}], model="m")
    assert server.requests[-1].path == f"/v1/chat/completions?key={encoded}&v=1"
    said = err.value.message
    assert said.startswith("The server refused the request (400): Bad request: POST ")
    for printed in (GATEWAY, encoded, KEY):
        assert printed not in said and printed not in err.value.body


async def test_a_dead_gateway_is_named_without_its_key():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = (f"http://token-user:{quote(GATEWAY, safe='')}@127.0.0.1:{port}/v1"
           f"?access_token={quote(GATEWAY)}")
    async with OpenAIProvider(url) as provider:
        with pytest.raises(NetworkError) as err:
            await stream_events(provider, [{"role": "user", "content": "hi"}], model="m")
    assert err.value.message == (f"Could not connect to http://127.0.0.1:{port}/v1?"
                                 "access_token=***: connection refused (is the server running?).")


async def test_a_header_the_client_cannot_send_is_one_final_line_without_the_key():
    # A provider made without load_settings, which would have trimmed the key: h11 refuses the
    # header and quotes it, escaped (b'Bearer sk-...\r\n'); that is no network fault to retry.
    with HostileServer(echo_request) as server:
        where = server.base_url
        async with OpenAIProvider(where, KEY + "\r\n") as provider:
            with pytest.raises(RequestError) as err:
                await stream_events(provider, [{"role": "user", "content": "hi"}], model="m")
    assert not isinstance(err.value, RetryableError)
    assert err.value.message == (
        f"The request to {where} was not sent: a request header holds a character "
        "HTTP does not allow; check the API key for a stray line break or space.")
    assert [r for r in server.requests if r.method == "POST"] == []


@pytest.mark.parametrize(("secret", "printed"), [
    (KEY, KEY),
    (KEY + "\r\n", repr(KEY + "\r\n")[1:-1]),  # as str repr escapes it
    (KEY + "\n", repr((KEY + "\n").encode())[2:-1]),  # as h11 quotes a header: b'...\n'
    (GATEWAY, quote(GATEWAY, safe="")),  # in a URL
    (GATEWAY, quote_plus(GATEWAY)),  # in a form-encoded query
    ("é" + KEY, json.dumps("é" + KEY)[1:-1]),  # in JSON with ASCII escapes
    ("sk-test-\n  SECRET-123456", "sk-test- SECRET-123456"),  # a message folded to one line
])
def test_redact_knows_the_printed_forms_of_a_secret(secret, printed):
    err = ProviderError(f"echoed: {printed}.", body=f'{{"k": "{printed}"}}')
    err.redact("", secret)
    assert (err.message, err.body) == ("echoed: ***.", '{"k": "***"}')


def test_values_too_short_to_be_secrets_are_not_scrubbed():
    text = "Invalid API key x: expected sk-xxxx, got x (max 0x7f); abc1234 too"
    err = ProviderError(text, body=text)
    err.redact("x", "abc1234", "")
    assert (err.message, err.body) == (text, text)
