"""Chat phrases are not details: a command is a command line, not an English or Chinese sentence
that starts with a program's name, and cheering on ("let's keep going!") or a question decides
nothing. On long everyday chats (LoCoMo) the ledger was full of "command: make a difference!"
and "decision: Let's keep spreading the love"."""

from __future__ import annotations

import pytest

from jarvis_tui.core.details.extract import extract


def commands(text: str) -> list[str]:
    return [d.text for d in extract(text) if d.kind == "command"]


@pytest.mark.parametrize("text", [
    "make your dreams a reality!",
    "keep going!",
    "let's do it",
    "加油！",
    "一起去吧",
    "Caroline: You'll make it, go for it! Make sure to spread the word about it.",
    "I want to make a difference. Do you go to that yoga class often?",
    "Everywhere you go there's something new, it's a must-visit!",
    "We could go get some food after the game",
    "Moments like that make me love sports.",
    "`make your dreams a reality!`",
    "`加油！`",
    "明天一起去吧，go go go！",
    "我们 make 一下计划吧",
])
def test_chat_phrases_are_not_commands(text):
    assert commands(text) == []


@pytest.mark.parametrize("text, command", [
    ("pip install -e .", "pip install -e ."),
    ("git rebase -i HEAD~3", "git rebase -i HEAD~3"),
    ("kubectl get pods -n prod", "kubectl get pods -n prod"),
    ("npm run build", "npm run build"),
    ("Then run make test. It takes a minute.", "make test"),
    ("go build ./... fails on the CI box", "go build ./... fails on the CI box"),
    ("make newsletter-restart ENV=staging", "make newsletter-restart ENV=staging"),
    ("helm rollback report 3", "helm rollback report 3"),
    ("ssh bastion-2", "ssh bastion-2"),
    ("先执行 kubectl get pods -n prod 看一下状态", "kubectl get pods -n prod"),
    ("用 `docker compose up -d` 启动", "docker compose up -d"),
    ('git commit -m "fix it. now" && git push', 'git commit -m "fix it. now" && git push'),
])
def test_real_command_lines_still_are(text, command):
    assert commands(text) == [command]


def test_a_command_after_a_chat_phrase_with_a_program_s_name_is_found():
    # The phrase "make it happen" is read past, not swallowed with the command after it.
    assert commands("Let's make it happen, then git push origin main.") == [
        "git push origin main"]
    assert commands("一起加油！然后跑 npm run build 就行") == ["npm run build"]


@pytest.mark.parametrize("text", [
    "Let's keep going and making great things happen!", "let's keep it up",
    "Yep, let's keep supporting each other.", "What sparked your decision to start this?",
    "我们决定用 PostgreSQL 吗？",
])
def test_cheering_on_and_questions_are_not_decisions(text):
    assert [d for d in extract(text) if d.kind == "decision"] == []


@pytest.mark.parametrize("text", [
    "Let's keep using SQLite for now.", "let's keep the retry budget at 3.",
    "Let's use Redis for the cache.", "我们决定用 PostgreSQL 作为主数据库。",
])
def test_decisions_still_are(text):
    assert [d.kind for d in extract(text)].count("decision") == 1
