"""How an attachment goes into the message, and what it is said to cost before it is sent."""

from __future__ import annotations

import pytest

from jarvis_tui.core.attach.cost import ANTHROPIC, OLLAMA, OPENAI, image_cost, sending_tokens
from jarvis_tui.core.attach.message import (
    DIGEST,
    PART,
    WHOLE,
    Sending,
    block,
    fence_for,
    message_with,
    sending_of,
    with_attachments,
)
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.attach.refusal import BAD_RANGE, REASONS, AttachRefused
from jarvis_tui.core.pasted import typed_text
from jarvis_tui.core.window.tokens import TokenCounter
from jarvis_tui.texts.attach_texts import refusal_line

CODE = '''import os


def deploy(port: int) -> None:
    """Ship it."""
    print("```not the end```")
    os.system(f"serve --port {port}")


class Server:
    pass
'''


def test_a_file_goes_fenced_before_what_was_typed(tmp_path):
    (tmp_path / "deploy.py").write_text(CODE, encoding="utf-8")
    att = read_path("deploy.py", tmp_path)
    text, spans = with_attachments("why does it fail?", [Sending(att)])
    assert text.endswith("\n\nwhy does it fail?")
    head = text[:spans[0][1]]
    assert head.startswith("Attached file deploy.py (11 lines, ")
    # The file holds a run of three backticks: its fence is longer, so nothing ends it early.
    assert "\n````python\n" in head and head.endswith("\n````") and CODE.rstrip() in head
    assert fence_for("a ````` b") == "``````"


def test_a_part_and_a_digest(tmp_path):
    (tmp_path / "deploy.py").write_text(CODE, encoding="utf-8")
    att = read_path("deploy.py", tmp_path)
    part = block(Sending(att, PART, 4, 7))
    assert part.startswith("Attached file deploy.py, lines 4-7 of 11:\n````python\ndef deploy")
    assert "class Server" not in part
    digest = block(Sending(att, DIGEST))
    assert "deploy.py: python, 11 lines (deploy, Server)" in digest
    assert 'read_attachment tool (path "deploy.py"' in digest and "os.system" not in digest


@pytest.mark.parametrize(("protocol", "size", "sent", "tokens"), [
    (OPENAI, (1024, 1024), (768, 768), 765),  # the worked example OpenAI publishes
    (OPENAI, (2048, 4096), (768, 1536), 1105),
    (OPENAI, (300, 200), (300, 200), 255),
    (ANTHROPIC, (1000, 1000), (1000, 1000), 1334),
    (ANTHROPIC, (4000, 3000), (1264, 948), 1598),  # scaled to about 1.15 megapixels
    (OLLAMA, (4000, 3000), (1024, 768), 1036),
])
def test_image_costs_by_each_providers_formula(protocol, size, sent, tokens):
    cost = image_cost(protocol, *size)
    assert ((cost.width, cost.height), cost.tokens) == (sent, tokens)
    assert cost.scaled_from(*size) == (sent != size)


def test_a_text_attachment_costs_what_its_block_counts(tmp_path):
    (tmp_path / "notes.md").write_text("部署在 /srv/app。\n" * 50, encoding="utf-8")
    att = read_path("notes.md", tmp_path)
    counter = TokenCounter()
    text, _ = with_attachments("", [Sending(att)])
    assert sending_tokens(Sending(att), counter, OPENAI) == counter.text(text)


FACTS = {"path": "a/b.txt", "what": "fifo", "size": 2 * 1024**3, "limit": 16 * 1024**2,
         "encoding": "GB18030", "shown": "evil<U+202E>txt", "claimed": "PNG", "found": "text",
         "why": "truncated", "width": 9000, "height": 9000, "model": "qwen", "lines": 11,
         "first": 20, "last": 30}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("reason", REASONS)
def test_every_refusal_has_one_line_in_both_languages(lang, reason):
    line = refusal_line(lang, AttachRefused(reason, **FACTS))
    assert "\n" not in line and "{" not in line
    assert ("未" in line) == (lang == "zh")
    if reason == "too_big":
        assert "2.0 GB" in line and "16.0 MB" in line


def test_a_range_after_the_path_and_a_colon_in_a_name(tmp_path):
    (tmp_path / "deploy.py").write_text(CODE, encoding="utf-8")
    part = sending_of("deploy.py:4-7", tmp_path)
    assert (part.how, part.first, part.last) == (PART, 4, 7)
    rest = sending_of("deploy.py:9-", tmp_path)
    assert (rest.how, rest.first, rest.last) == (PART, 9, 0)
    (tmp_path / "notes:1-2").write_text("a colon in the name", encoding="utf-8")
    assert sending_of("notes:1-2", tmp_path).how == WHOLE
    with pytest.raises(AttachRefused) as caught:
        sending_of("deploy.py:20-30", tmp_path)
    assert caught.value.reason == BAD_RANGE and caught.value.facts["lines"] == 11


def test_the_message_carries_its_files_and_what_was_typed_stays_typed(tmp_path):
    (tmp_path / "deploy.py").write_text(CODE, encoding="utf-8")
    msg = message_with("为什么 deploy 失败？ pasted part", [sending_of("deploy.py", tmp_path)],
                       typed_pasted=((15, 26),))
    record = msg.attachments[0]
    assert msg.content[record.start:record.end].startswith("Attached file deploy.py")
    assert (record.path, record.how, record.size) == (str(tmp_path / "deploy.py"), WHOLE,
                                                       len(CODE.encode()))
    # Only what the user typed is read for memory suggestions: not the file, not the paste.
    assert typed_text(msg.content, msg.pasted).strip() == "为什么 deploy 失败？"


def test_the_fence_names_the_language_the_file_name_says(tmp_path):
    (tmp_path / "README.md").write_text("# Setup\n\nSELECT * FROM users;\nUPDATE t SET a = 1;\n"
                                        "DELETE FROM t;\n", encoding="utf-8")
    (tmp_path / "notes").write_text("def f():\n    return 1\n\n\ndef g():\n    pass\n",
                                    encoding="utf-8")
    assert "\n```markdown\n# Setup" in block(sending_of("README.md:1-3", tmp_path))
    assert "\n```python\ndef f" in block(sending_of("notes", tmp_path))  # no suffix: its text
