"""`jarvis-tui memory` and the memory in a session export, as a user runs them: real processes
on real config and data dirs (the `home` fixture), hostile files included."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_tui.cli_memory import MAX_IMPORT_BYTES
from jarvis_tui.core.store.store import Store
from tests.cli.test_cli import flags, run

OPENAI_KEY = "sk-proj-" + "Zq8xY2wV4uT6sR1pO3nM5lK7jH9gF0dS"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def db(home: dict[str, str]) -> Path:
    return Path(home["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db"


def stored(home: dict[str, str], states=("active", "suggested", "dismissed")) -> list[str]:
    with Store(db(home)) as store:
        return [e.text for e in store.memories(states)]


def memory_file(entries: list, **top) -> str:
    return json.dumps({"format": "jarvis-tui memory", "version": 1, "entries": entries, **top})


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints: exit 2, nothing on stdout, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jarvis-tui: "), result.stderr
    return lines[0]


def test_add_list_delete(home):
    assert "no memory yet" in run(home, "memory", "list").stdout
    added = run(home, "memory", "add", "I prefer answers in Chinese")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "remembered as entry 1"
    assert run(home, "memory", "add", "Our deploy target is Fly.io").returncode == 0
    # The same text, case and spacing aside, is that entry, not a second one.
    assert run(home, "memory", "add", "i prefer  answers in chinese").stdout.strip() \
        == "remembered as entry 1"
    with Store(db(home)) as store:
        store.update_memory(1, pinned=True)
        store.add_suggestions(store.create_conversation(model="m").id,
                              [("decision", "We use PostgreSQL", None)])
        store.add_memory("Dismissed long ago", state="dismissed")
    lines = run(home, "memory", "list").stdout.splitlines()
    assert lines[0].split() == ["ID", "STATE", "PIN", "KIND", "TEXT"]
    assert "active" in lines[1] and "*" in lines[1] and "i prefer  answers" not in lines[1]
    assert lines[1].endswith("i prefer answers in chinese")  # the newer wording, one line
    assert len(lines) == 4 and not any("Dismissed" in line for line in lines)
    assert any("suggested" in line and "We use PostgreSQL" in line for line in lines)
    listed = json.loads(run(home, "memory", "list", "--json").stdout)
    assert [(e["id"], e["pinned"], e["state"]) for e in listed][0] == (1, True, "active")
    assert {e["text"] for e in listed} == {"i prefer  answers in chinese",
                                          "Our deploy target is Fly.io", "We use PostgreSQL"}
    deleted = run(home, "memory", "delete", "2")
    assert deleted.returncode == 0 and deleted.stdout.strip() == "deleted memory entry 2"
    assert "Our deploy target is Fly.io" not in stored(home)
    assert "memory entry 2 does not exist" in one_line(run(home, "memory", "delete", "2"))
    assert run(home, "memory", "delete", "x").returncode == 2


@pytest.mark.parametrize("secret", [OPENAI_KEY, GITHUB_TOKEN])
def test_add_refuses_a_secret_without_printing_it(home, secret):
    line = one_line(run(home, "memory", "add", f"my token is {secret}"))
    assert "never holds a secret" in line and secret not in line and secret[:12] not in line
    assert stored(home) == []


def test_add_refuses_the_api_key_it_was_given_whatever_its_shape(home):
    key = "plain-words-key-123"  # no rule would call this a secret
    assert run(home, "memory", "add", f"remember {key}").returncode == 0
    line = one_line(run(home, "--api-key", key, "memory", "add", f"the key: {key}"))
    assert "a key jarvis-tui was given (the API key" in line and key not in line
    assert stored(home) == [f"remember {key}"]


def test_export_to_stdout_and_a_file_then_import_elsewhere(home, tmp_path):
    for text in ("Answer in Chinese", "我住在上海", "Deploys go to Fly.io"):
        assert run(home, "memory", "add", text).returncode == 0
    out = run(home, "memory", "export")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["version"] == 1 and doc["format"] == "jarvis-tui memory"
    assert [e["text"] for e in doc["entries"]] == ["Answer in Chinese", "我住在上海",
                                                   "Deploys go to Fly.io"]
    assert set(doc["entries"][0]) == {"text", "kind", "state", "pinned", "created_at",
                                      "updated_at"}
    target = tmp_path / "out" / "memory.json"
    to_file = run(home, "memory", "export", str(target))
    assert to_file.returncode == 0 and to_file.stdout == ""
    assert "wrote 3 memory entries" in to_file.stderr
    assert json.loads(target.read_text())["entries"] == doc["entries"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # memory is about the user
    assert not [p for p in target.parent.iterdir() if p != target]  # no temporary left

    other = {**home, "XDG_DATA_HOME": str(tmp_path / "other-data")}
    assert run(other, "memory", "add", "Answer in Chinese").returncode == 0
    first = run(other, "memory", "import", str(target))
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "imported 2 entries, skipped 1 (already there)"
    again = run(other, "memory", "import", "-", stdin=out.stdout)
    assert again.stdout.strip() == "imported 0 entries, skipped 3 (already there)"
    assert sorted(stored(other)) == sorted(e["text"] for e in doc["entries"])


def test_export_to_a_place_it_cannot_write_says_so(home, tmp_path):
    assert run(home, "memory", "add", "Answer in Chinese").returncode == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = one_line(run(home, "memory", "export", str(blocker / "memory.json")))
    assert f"could not write {blocker / 'memory.json'}" in line


def test_export_redact_hides_a_secret_stored_before_the_guard(home):
    with Store(db(home)) as store:  # an entry from before the guard, or another program's
        store.add_memory(f"deploy with {OPENAI_KEY}")
    assert OPENAI_KEY in run(home, "memory", "export").stdout  # faithful by default
    redacted = run(home, "memory", "export", "--redact")
    assert redacted.returncode == 0
    assert OPENAI_KEY not in redacted.stdout and "[redacted]" in redacted.stdout
    assert json.loads(redacted.stdout)["version"] == 1


def test_import_refuses_a_file_with_a_secret_naming_the_entry_only(home, tmp_path):
    path = tmp_path / "memory.json"
    path.write_text(memory_file([{"text": "Answer in Chinese"},
                                 {"text": f"The CI token is {GITHUB_TOKEN}"}]))
    result = run(home, "memory", "import", str(path))
    line = one_line(result)
    assert "entry 2 was refused" in line and "never holds a secret" in line
    assert "nothing was imported" in line
    assert GITHUB_TOKEN not in result.stderr + result.stdout and "ghp_" not in line
    assert stored(home) == []  # all or nothing: entry 1 was not stored either


BAD_FILES = [
    (b"\xff\xfe not utf-8 \x80", "is not UTF-8 text (a bad byte at offset 0)"),
    (b'{"format": "jarvis-tui memory", "version": 1, "entries": [', "is not JSON ("),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'[{"text": "a list, not a memory file"}]', "is not a jarvis-tui memory file"),
    (memory_file([], version=2).encode(), "of version 2; this jarvis-tui reads version 1"),
    (memory_file([], version="1").encode(), 'of version "1"'),
    (memory_file({"text": "x"}).encode(), '"entries" is not a list'),
    (memory_file(["just a string"]).encode(), "entry 1 is not an object"),
    (memory_file([{"text": "ok"}, {"kind": "fact"}]).encode(), "entry 2 was refused (has no text"),
    (memory_file([{"text": "ok"}, {"text": "x", "kind": "nonsense"}]).encode(),
     "entry 2 has kind 'nonsense'"),
    (memory_file([{"text": "\x1b]52;c;aGk=\x07 paste me"}]).encode(), "terminal control"),
    (memory_file([{"text": "x" * 5000}]).encode(), "5,000 characters, the most is 1,000"),
]


@pytest.mark.parametrize(("content", "expected"), BAD_FILES,
                         ids=[expected[:30] for _, expected in BAD_FILES])
def test_import_says_what_is_wrong_and_where(home, tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    line = one_line(run(home, "memory", "import", str(path)))
    assert str(path) in line and expected in line, line
    assert "nothing was imported" in line
    assert stored(home) == []


def test_import_of_a_huge_file_reads_only_up_to_the_limit(home, tmp_path):
    path = tmp_path / "huge.json"
    with path.open("wb") as f:  # sparse: 1 GB that costs nothing, if it were read whole
        f.truncate(2**30)
    line = one_line(run(home, "memory", "import", str(path)))
    assert f"over {MAX_IMPORT_BYTES // 2**20} MB, the most a memory file may be" in line
    piped = run(home, "memory", "import", "-", stdin="x" * (MAX_IMPORT_BYTES + 10))
    assert "standard input is over 4 MB" in one_line(piped)
    assert stored(home) == []


def test_import_of_a_file_that_is_not_there(home, tmp_path):
    line = one_line(run(home, "memory", "import", str(tmp_path / "nope.json")))
    assert "could not read" in line and "No such file" in line


def many_entries(home: dict[str, str], n: int = 2000) -> None:
    with Store(db(home)) as store:
        store.import_memory([{"text": f"fact number {i}: " + "padding " * 12} for i in range(n)])


def test_export_to_a_full_disk_and_to_a_reader_that_goes_away(home):
    many_entries(home)
    full = subprocess.run(f'"{sys.executable}" -m jarvis_tui memory export > /dev/full',
                          shell=True, env=home, capture_output=True, text=True, timeout=60)
    assert full.returncode == 74, full.stderr
    assert full.stderr.strip().splitlines() == [
        "jarvis-tui: could not write to standard output (No space left on device); send it "
        "where there is room"]
    head = subprocess.run(
        f'"{sys.executable}" -m jarvis_tui memory export | head -c 5; '
        'echo; echo "status ${PIPESTATUS[0]}"',
        shell=True, executable="/bin/bash", env=home, capture_output=True, text=True,
        timeout=60)
    assert head.stdout.startswith("{\n  \"")
    assert head.stdout.strip().splitlines()[-1] in ("status 0", "status 141")
    assert head.stderr == ""  # quietly


def test_two_imports_at_once_lose_nothing_and_add_nothing_twice(home, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(memory_file([{"text": f"shared fact {i}"} for i in range(300)]
                             + [{"text": f"only in a {i}"} for i in range(100)]))
    b.write_text(memory_file([{"text": f"only in b {i}"} for i in range(100)]
                             + [{"text": f"shared fact {i}"} for i in range(300)]))
    assert run(home, "memory", "list").returncode == 0  # the store exists before the race
    procs = [subprocess.Popen([sys.executable, "-m", "jarvis_tui", "memory", "import", str(p)],
                              env=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for p in (a, b)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    added = [int(out.split()[1].rstrip(",")) for out, _ in outs]
    assert sum(added) == 500
    texts = stored(home)
    assert len(texts) == len(set(texts)) == 500


def test_session_export_carries_the_memory_and_redacts_it(home, fake_server):
    assert run(home, *flags(fake_server), "ask", "Hello").returncode == 0
    assert run(home, "memory", "add", "Answer in Chinese").returncode == 0
    with Store(db(home)) as store:
        store.add_memory(f"deploy key {OPENAI_KEY}", conversation_id=1, message_id=1)
        store.update_memory(2, pinned=True)
        store.add_memory("Not yet accepted", state="suggested")
    data = json.loads(run(home, "export", "--format", "json").stdout)
    assert [(m["text"], m["pinned"], m["conversation_id"], m["message_id"])
            for m in data["memory"]] == [(f"deploy key {OPENAI_KEY}", True, 1, 1),
                                         ("Answer in Chinese", False, None, None)]
    md = run(home, "export").stdout
    assert "# Memory" in md
    assert f"- deploy key {OPENAI_KEY} (fact, pinned, from session 1, message #1)" in md
    line = next(line for line in md.splitlines() if line.startswith("- Answer in Chinese ("))
    assert line.endswith(", typed or imported)")
    assert "Not yet accepted" not in md
    for fmt in ("md", "json"):
        redacted = run(home, "export", "--format", fmt, "--redact").stdout
        assert OPENAI_KEY not in redacted and "deploy key [redacted]" in redacted


def test_help_names_every_action(home):
    top = run(home, "--help").stdout
    assert "memory" in top
    memory = run(home, "memory", "--help").stdout
    for action in ("list", "add", "delete", "export", "import"):
        assert action in memory
    assert "4 MB" in run(home, "memory", "import", "--help").stdout
    assert "--redact" in run(home, "memory", "export", "--help").stdout


def test_add_refuses_an_mcp_servers_token_whatever_its_shape(home):
    token = "plain words pat 42"  # no rule would call this a secret; its name says it is one
    config = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[mcp.servers.github]\ncommand = "github-mcp"\n'
                      f'env = {{ GITHUB_PERSONAL_ACCESS_TOKEN = "{token}" }}\n', encoding="utf-8")
    line = one_line(run(home, "memory", "add", f"the github one is {token}"))
    assert "an MCP server's token" in line and token not in line
    assert run(home, "memory", "add", "the github server needs a token").returncode == 0
    assert stored(home) == ["the github server needs a token"]
