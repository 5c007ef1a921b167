"""The files a message carries, in the SQLite file: written with the message, read back with
it, copied by a fork, listed by the export; a body read only on demand."""

from __future__ import annotations

from pathlib import Path

from jarvis_tui.core.attach.message import DIGEST, Sending, message_with
from jarvis_tui.core.attach.read import read_path
from jarvis_tui.core.messages import Message
from jarvis_tui.core.store.store import Store


def attached_message(tmp_path: Path) -> tuple[Message, bytes]:
    (tmp_path / "deploy.log").write_text("line\n" * 40, encoding="utf-8")
    att = read_path("deploy.log", tmp_path)
    return message_with("what failed?", [Sending(att, DIGEST)]), att.text.encode()


def test_attachments_are_kept_with_their_message(db_path: Path, tmp_path: Path) -> None:
    msg, body = attached_message(tmp_path)
    with Store(db_path) as store:
        conv = store.create_conversation()
        store.add_message(conv.id, msg)
        (tmp_path / "deploy.log").write_text("changed on disk\n", encoding="utf-8")
    with Store(db_path) as store:
        again = store.messages(conv.id)[0]
        assert again.attachments == msg.attachments
        record = again.attachments[0]
        assert again.content[record.start:record.end].startswith("Attached file (digest only")
        assert store.attachment_body(again.id, 0) == body  # as sent, not as the disk has it now
        assert store.attachment_body(again.id, 1) is None
        assert store.last_sent(conv.id, record.path) == record
        assert store.last_sent(conv.id, "/elsewhere") is None
        exported = store.export(conv.id)["messages"][0]["attachments"]
        assert exported[0]["sha256"] == record.sha256 and exported[0]["how"] == DIGEST
        fork = store.fork(conv.id, [again], "fork", None)
        copied = store.messages(fork.id)[0]
        assert copied.attachments == msg.attachments
        assert store.attachment_body(copied.id, 0) == body
        # The title is what the user typed, not the file's block.
        assert store.get_conversation(conv.id).title == "what failed?"
