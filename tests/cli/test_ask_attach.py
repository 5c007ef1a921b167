"""`jarvis-tui ask --attach`: the real command in its own process, a fake provider on loopback
and a real SQLite file. A file goes with the question as it was read; a file that cannot be
attached stops the command with one line before any session or request is made."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.fakeserver import SentImage
from tests.images import image

CODE = "def deploy(port):\n    serve(port)\n\n\ndef serve(port):\n    raise OSError(port)\n"


def run(env: dict[str, str], cwd: Path, *args: str,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jarvis_tui", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def ask(env: dict[str, str], cwd: Path, fake, *args: str) -> subprocess.CompletedProcess[str]:
    return run(env, cwd, "ask", "--base-url", fake.base_url, "--model", "fake-model", *args)


def test_a_file_goes_with_the_question_and_is_kept_as_sent(home, fake_server, tmp_path):
    (tmp_path / "deploy.py").write_text(CODE, encoding="utf-8")
    done = ask(home, tmp_path, fake_server, "--attach", "deploy.py", "Why does it fail?")
    assert done.returncode == 0, done.stderr
    sent = fake_server.chat_requests[-1].body["messages"][-1]["content"]
    assert sent.startswith("Attached file deploy.py (6 lines, 77 B):\n```python\ndef deploy")
    assert sent.endswith("```\n\nWhy does it fail?")
    # Edited on disk afterwards: the session keeps what was sent, and says the file changed
    # when it is sent again.
    (tmp_path / "deploy.py").write_text(CODE.replace("OSError", "ValueError"), encoding="utf-8")
    again = ask(home, tmp_path, fake_server, "--attach", "deploy.py", "And now?")
    assert again.returncode == 0, again.stderr
    assert "deploy.py changed since this session last sent it (77 B then, 80 B now)" \
        in again.stderr
    exported = json.loads(run(home, tmp_path, "export", "--format", "json").stdout)
    first, second = (m for m in exported["messages"] if m["role"] == "user")
    assert "OSError" in first["content"] and "ValueError" in second["content"]
    record = first["attachments"][0]
    assert record["path"] == str(tmp_path / "deploy.py") and record["size"] == 77
    assert record["sha256"] != second["attachments"][0]["sha256"]
    assert first["content"][record["start"]:record["end"]].startswith("Attached file deploy.py")


def test_a_line_range_and_a_folder(home, fake_server, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "deploy.py").write_text(CODE, encoding="utf-8")
    done = ask(home, tmp_path, fake_server, "--attach", "src/deploy.py:5-6", "--attach", "src",
               "What raises?")
    assert done.returncode == 0, done.stderr
    sent = fake_server.chat_requests[-1].body["messages"][-1]["content"]
    assert "Attached file src/deploy.py, lines 5-6 of 6:\n```python\ndef serve(port):\n" \
           "    raise OSError(port)\n```" in sent
    assert "def deploy" not in sent
    assert "Attached folder ```text\nsrc/: a folder (1 files and 0 folders listed" in sent


def test_what_cannot_be_attached_stops_before_anything_is_made(home, fake_server, tmp_path):
    (tmp_path / "short.txt").write_text("one line\n", encoding="utf-8")
    cases = {
        "missing.txt": "Not attached: there is no file or folder at missing.txt",
        "/dev/zero": "Not attached: /dev/zero is a character device, not a file; attach a "
                     "regular file",
        "short.txt:5-9": "Not attached: short.txt has 1 line; lines 5-9 are not in it",
    }
    for given, line in cases.items():
        start = time.monotonic()
        done = ask(home, tmp_path, fake_server, "--attach", given, "look at this")
        assert done.returncode == 2 and done.stderr.strip() == f"jarvis-tui: {line}" \
            + (" (PATH:FIRST-LAST, counting from 1)" if ":" in given else ""), done.stderr
        assert time.monotonic() - start < 20
    assert fake_server.chat_requests == []
    assert "no sessions yet" in run(home, tmp_path, "sessions").stdout
    chinese = ask(home, tmp_path, fake_server, "--attach", "missing.txt", "这个文件说了什么？")
    assert chinese.stderr.strip() == "jarvis-tui: 未附加：missing.txt 不存在"


def test_a_file_larger_than_the_window_goes_as_its_digest_the_model_reads(home, fake_server,
                                                                         tmp_path):
    (tmp_path / "app.log").write_text("".join(f"10:00:{i % 60:02d} worker {i} restarted\n"
                                              for i in range(4000)), encoding="utf-8")
    done = ask(home, tmp_path, fake_server, "--context-window", "4096", "--attach", "app.log",
               'Why?\ncall read_attachment {"path": "app.log", "first_line": 3001, '
               '"last_line": 3001}')
    assert done.returncode == 0, done.stderr
    assert "app.log (" in done.stderr and "it goes as a digest" in done.stderr \
        and "--whole sends it anyway (cut to its start and end)" in done.stderr
    first, last = fake_server.chat_requests[0].body, fake_server.chat_requests[-1].body
    question = first["messages"][-1]["content"]
    assert question.startswith("Attached file (digest only; it is too large to send whole): "
                               "app.log: ") and "worker 3000" not in question
    assert [t["function"]["name"] for t in first["tools"]] == ["read_attachment"]
    assert last["messages"][-1] == {
        "role": "tool", "tool_call_id": last["messages"][-2]["tool_calls"][0]["id"],
        "content": "app.log, lines 3001-3001 of 4,000:\n  3001\t10:00:00 worker 3000 restarted"}
    # --whole sends it anyway: the window's own fallback is the user's to choose.
    whole = ask(home, tmp_path, fake_server, "--context-window", "4096", "--whole",
                "--attach", "app.log:1-50", "--attach", "app.log", "All of it.")
    assert "it goes as a digest" not in whole.stderr and "Traceback" not in whole.stderr
    sent = [r.body for r in fake_server.chat_requests if "All of it." in json.dumps(r.body)]
    assert sent and "worker 3999 restarted" in json.dumps(sent[0])


def test_an_image_goes_scaled_to_the_provider_and_says_so(home, fake_server, tmp_path):
    (tmp_path / "shot.png").write_bytes(image(3000, 3000, "PNG", (240, 200, 20)))
    done = ask(home, tmp_path, fake_server, "--attach", "shot.png", "What colour is it?")
    assert done.returncode == 0, done.stderr
    assert ("jarvis-tui: shot.png is 3000x3000 pixels; it goes scaled down to 768x768, the "
            "most the provider reads (") in done.stderr
    sent = fake_server.chat_requests[-1]
    assert sent.images == [SentImage("image/png", 768, 768)]
    parts = sent.body["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text"]
    assert parts[1]["text"].startswith("[Attached image shot.png: 768x768 pixels, ")
    assert parts[1]["text"].endswith("What colour is it?")
