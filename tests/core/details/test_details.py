"""Details found by their shape, in English and Chinese, and which of them a summary left out."""

from __future__ import annotations

import pytest

from jarvis_tui.core.details.extract import SENTENCE_CHARS, Detail, details_of, extract, omitted
from jarvis_tui.core.messages import Message


def found(text: str) -> set[tuple[str, str]]:
    return {(d.kind, d.text) for d in extract(text)}


@pytest.mark.parametrize("text, expected", [
    ("The collector config is at /etc/collector.yaml.", ("path", "/etc/collector.yaml")),
    ("Put it in ~/.config/jarvis-tui/config.toml", ("path", "~/.config/jarvis-tui/config.toml")),
    ("See ./scripts/deploy.sh first", ("path", "./scripts/deploy.sh")),
    (r"Windows keeps it in C:\Users\li\AppData\app.ini", ("path", r"C:\Users\li\AppData\app.ini")),
    ("我们改了 src/app/main.py 里的超时", ("path", "src/app/main.py")),
    ("Docs: https://example.com/docs/v2?x=1.", ("url", "https://example.com/docs/v2?x=1")),
    ("文档在 https://wiki.example.cn/页面，看一下", ("url", "https://wiki.example.cn/页面")),
])
def test_paths_and_urls(text, expected):
    assert expected in found(text)


@pytest.mark.parametrize("text, expected", [
    ("p95 latency went from 240 ms to 95 ms", ("number", "240 ms")),
    ("The service listens on port 8443", ("number", "8443")),
    ("服务端口是 9090", ("number", "9090")),
    ("超时设为 300毫秒", ("number", "300毫秒")),
    ("预算 3万元，别超", ("number", "3万元")),
    ("这个季度的云资源预算是 9万6千元，别超了", ("number", "9万6千元")),
    ("The budget is €4,200 for the launch", ("number", "€4,200")),
    ("call +86 138 0013 8000 if it breaks", ("number", "+86 138 0013 8000")),
    ("缓存命中率 85%", ("number", "85%")),
])
def test_numbers_with_what_they_measure(text, expected):
    assert expected in found(text)
    detail = next(d for d in extract(text) if d.text == expected[1])
    assert detail.context and expected[1] in detail.context


@pytest.mark.parametrize("text, expected", [
    ("The launch is on 2026-12-03 14:30", ("time", "2026-12-03 14:30")),
    ("会议在12月5日下午3点", ("time", "12月5日下午3点")),
    ("We meet May 3rd, 2027 at the office", ("time", "May 3rd, 2027")),
    ("下午3点半开会", ("time", "下午3点半")),
])
def test_dates_and_times(text, expected):
    assert expected in found(text)


@pytest.mark.parametrize("text, expected", [
    ("Run `journalctl -u collector -n 20` to see it", ("command", "journalctl -u collector -n 20")),
    ("then git rebase -i HEAD~3 and push", ("command", "git rebase -i HEAD~3 and push")),
    ("```bash\nmake test\nuv run pytest -q\n```", ("command", "uv run pytest -q")),
    ("set max_retries in the RetryPolicy", ("command", "max_retries")),
    ("set max_retries in the RetryPolicy", ("command", "RetryPolicy")),
    ("用 `docker compose up -d` 启动", ("command", "docker compose up -d")),
])
def test_commands_and_identifiers(text, expected):
    assert expected in found(text)


def test_a_command_line_is_one_detail_not_its_numbers():
    assert found("Run `journalctl -u collector -n 20` now") == {
        ("command", "journalctl -u collector -n 20")}


@pytest.mark.parametrize("text, kind, fragment", [
    ("It failed with ConnectionResetError: [Errno 104] reset by peer", "error",
     "ConnectionResetError: [Errno 104]"),
    ("报错：连接数据库失败，超过最大连接数", "error", "连接数据库失败"),
    ("We decided to keep SQLite for the session store.", "decision", "keep SQLite"),
    ("Let's use Redis for the cache.", "decision", "Redis for the cache"),
    ("我们决定用 PostgreSQL 作为主数据库。", "decision", "PostgreSQL 作为主数据库"),
    ("The reviewer is named Alice Chen.", "name", "Alice Chen"),
    ("联系人叫王小明，负责这个模块。", "name", "王小明"),
])
def test_errors_decisions_and_names(text, kind, fragment):
    assert any(k == kind and fragment in t for k, t in found(text)), found(text)


@pytest.mark.parametrize("text", ["I had a nice walk today and the weather was lovely.",
                                  "今天天气不错，我们聊聊别的吧。", "Thanks, that helps a lot!"])
def test_ordinary_prose_has_no_details(text):
    assert extract(text) == []


def test_details_of_messages_keep_the_first_mention_and_its_message():
    messages = [Message("user", "Config at /etc/app.yaml, port 8443", id=1),
                Message("assistant", "Noted: /etc/app.yaml and port 8443.", id=2)]
    got = details_of(messages)
    assert [(d.kind, d.text, d.message_id) for d in got] == [
        ("path", "/etc/app.yaml", 1), ("number", "8443", 1)]


def test_omitted_are_the_details_a_summary_does_not_state():
    details = [Detail("path", "/etc/app.yaml", ""), Detail("number", "4,200 euros", ""),
               Detail("number", "8443", ""), Detail("decision", "我们决定用 PostgreSQL", "")]
    summary = "The user moved the config to /ETC/app.yaml; the budget is 4200 euros. 数据库待定。"
    assert [d.text for d in omitted(details, summary)] == ["8443", "我们决定用 PostgreSQL"]


def test_an_error_and_a_decision_on_one_line_are_both_found():
    found = extract("支付任务报错：回调签名验证失败 支付那块就用RocketMQ吧，定了。")
    assert {d.kind for d in found} >= {"error", "decision"}
    found = extract("The job failed with TimeoutError, so we decided to use a queue instead.")
    assert {d.kind for d in found} >= {"error", "decision"}


def test_an_error_on_a_long_line_is_kept_around_its_word_not_the_whole_line():
    # A pasted log on one line: the detail is the part around the error, not 20 KB of it.
    line = "x=1 " * 3000 + "TimeoutError: shard 3 did not answer " + "y=2 " * 3000
    errors = [d for d in extract(line) if d.kind == "error"]
    assert len(errors) == 1 and "TimeoutError: shard 3 did not answer" in errors[0].text
    assert len(errors[0].text) <= 2 * SENTENCE_CHARS + len("TimeoutError")


def test_a_numbers_context_is_whole_words():
    [port] = [d for d in extract("The collector config lives at /etc/collector.yaml and "
                                 "listens on port 8443.") if d.kind == "number"]
    assert port.context == "and listens on port 8443."
    [latency] = [d for d in extract("压测时报表接口的延迟是80毫秒，比上周快了不少。")
                 if d.kind == "number"]
    assert "延迟是80毫秒" in latency.context  # no spaces: characters, as before


@pytest.mark.parametrize("text, expected", [
    ("Flight CA1234 leaves tomorrow", "CA1234"),
    ("我周四坐 CA1502 去北京", "CA1502"),
    ("see JIRA-4821 and the request trace-5d2a9c7e81", "JIRA-4821"),
    ("see JIRA-4821 and the request trace-5d2a9c7e81", "trace-5d2a9c7e81"),
    ("The tenant with the problem is acme-logistics-eu.", "acme-logistics-eu"),
])
def test_ids_one_thing_of_many_is_named_by(text, expected):
    assert ("id", expected) in found(text)
    assert not any(kind == "id" for kind, _ in found("a state-of-the-art, up-to-date design"))


@pytest.mark.parametrize("text, expected", [
    ("Ping Priya Raman before you merge.", "Priya Raman"),
    ("Tomás owns the importer now.", "Tomás"),
    ("The importer is owned by Kenji Sato.", "Kenji Sato"),
    ("找王磊确认一下。", "王磊"),
    ("李娜负责这块，有问题问她。", "李娜"),
    ("出问题的商户是杭州云栖贸易有限公司。", "杭州云栖贸易有限公司"),
])
def test_who_someone_is_by_what_they_do(text, expected):
    assert ("name", expected) in found(text)


@pytest.mark.parametrize("text", [
    "Monday will be busy.", "This is handled by the infra team.", "这个方案是我们定的。",
    "近期有不法分子冒充我公司，要求您提供银行账号。", "住宿费按照公司标准报销。",
])
def test_days_pronouns_and_ordinary_chinese_are_no_names(text):
    assert not [t for kind, t in found(text) if kind == "name"]
