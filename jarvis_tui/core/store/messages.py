"""What is in a session: its messages, and the tree they form (a regenerated reply or an edited
question starts a branch beside the old one; the session shows one branch, its head). A reply is
saved while it streams by appending only its new text. A fork copies one branch into a new
session, so it writes a conversation too.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jarvis_tui.core.messages import ROOT, Message
from jarvis_tui.core.pasted import Spans, tidy
from jarvis_tui.core.safety.redact import redact, redact_title
from jarvis_tui.core.safety.textsafe import valid_unicode
from jarvis_tui.core.store.attachments import copy_attachments, load_attachments, write_attachments
from jarvis_tui.core.store.db import Db, dump_json, load_json, storable
from jarvis_tui.core.store.records import SessionInfo, StoreError, Summary, Unreadable

TITLE_CHARS = 60
STATUSES = ("complete", "partial", "failed")


# Read of a message for its title: enough that a key starting in the title's room is seen whole.
TITLE_READ = 2000


def make_title(text: str) -> str:
    """A single-line title from the first user message, with no credential in it: a title is
    shown in every list and recall label, and a message that starts with a token would make it
    the token."""
    line = redact(" ".join(text[:TITLE_READ * 2].split())[:TITLE_READ])
    return redact_title(line if len(line) <= TITLE_CHARS
                        else line[: TITLE_CHARS - 1].rstrip() + "…")


class Messages(Db):
    def add_message(self, conv_id: int, msg: Message, *, wait: float | None = None) -> Message:
        """Store `msg` after the branch shown (or after its parent), with its attachments and
        what their blocks do not hold (store/attachments.py)."""
        if msg.id is not None:
            raise ValueError(f"message {msg.id} is already stored")
        if msg.status not in STATUSES:
            raise ValueError(f"unknown message status {msg.status!r}")
        # Text that is not valid Unicode cannot be encoded for SQLite; one bad character must
        # not lose a message.
        msg.pasted = _pasted_after(msg, valid_unicode(msg.content))
        msg.content = valid_unicode(msg.content)
        with self._write("save a message to", wait=wait) as db:
            self._require_conversation(db, conv_id)
            seq = db.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = ?",
                (conv_id,),
            ).fetchone()[0]
            parent = self._head(db, conv_id) if msg.parent_id is None else msg.parent_id
            cur = db.execute(
                "INSERT INTO messages (conversation_id, seq, role, content, tool_calls, "
                "tool_call_id, name, status, pinned, summary_id, created_at, parent_id, "
                "excluded, pasted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conv_id, seq, msg.role, msg.content, dump_json(msg.tool_calls),
                    msg.tool_call_id, msg.name, msg.status, int(msg.pinned), msg.summary_id,
                    msg.created_at, parent or None, int(msg.excluded), _dump_spans(msg.pasted),
                ),
            )
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?",
                       (cur.lastrowid, conv_id))
            if msg.attachments:
                write_attachments(db, cur.lastrowid, msg.attachments)
            if msg.role == "user" and msg.content.strip():
                db.execute(
                    "UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                    (make_title(_titled(msg)), conv_id),
                )
            self._touch(db, conv_id)
        msg.id = cur.lastrowid
        msg.parent_id = parent or ROOT
        return msg

    def _head(self, db: sqlite3.Connection, conv_id: int) -> int:
        """The tip of the branch shown: what a new message follows (ROOT in an empty session)."""
        row = db.execute(
            "SELECT coalesce(c.head_id, (SELECT id FROM messages WHERE conversation_id = c.id "
            "ORDER BY seq DESC LIMIT 1)) FROM conversations c WHERE c.id = ?",
            (conv_id,)).fetchone()
        return row[0] if row and row[0] else ROOT

    def head(self, conv_id: int) -> int:
        """The id of the last message of the branch shown (ROOT: none)."""
        if not storable(conv_id):
            return ROOT
        with self._guard("read"):
            return self._head(self._db, conv_id)

    def set_head(self, conv_id: int, message_id: int) -> None:
        """Show (and continue) the branch ending at `message_id`; ROOT: an empty branch."""
        with self._write("switch branches in") as db:
            self._require_conversation(db, conv_id)
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?",
                       (message_id or None, conv_id))

    def fork(self, conv_id: int, branch: list[Message], title: str, summary: Summary | None,
             *, model: str = "") -> SessionInfo:
        """A new session holding copies of `branch` (stored messages of `conv_id`, in order),
        all at once: a fork half written would be a session missing turns. With `summary`, it
        is copied too and covers the copies of what it covered; without, nothing is covered."""
        now = self._now()
        with self._write("fork a session in") as db:
            self._require_conversation(db, conv_id)
            newest = db.execute("SELECT max(updated_at) FROM conversations").fetchone()[0] or 0.0
            now = max(now, newest + 1e-6)
            new_id = db.execute(
                "INSERT INTO conversations (title, created_at, updated_at, model, meta) "
                "VALUES (?, ?, ?, ?, ?)",
                (title, now, now, model, dump_json({"forked_from": {
                    "conversation_id": conv_id, "message_id": branch[-1].id if branch else None,
                }})),
            ).lastrowid
            sid = None
            if summary is not None:
                sid = db.execute(
                    "INSERT INTO summaries (conversation_id, content, covered_count, kind, "
                    "focus, model, created_at) VALUES (?, ?, 0, ?, ?, ?, ?)",
                    (new_id, summary.content, summary.kind, summary.focus, summary.model, now),
                ).lastrowid
            parent = None
            first = last = None
            for seq, msg in enumerate(branch, 1):
                covered = sid if msg.covered and sid is not None else None
                parent = db.execute(
                    "INSERT INTO messages (conversation_id, seq, role, content, tool_calls, "
                    "tool_call_id, name, status, pinned, summary_id, created_at, parent_id, "
                    "excluded, pasted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (new_id, seq, msg.role, msg.content, dump_json(msg.tool_calls),
                     msg.tool_call_id, msg.name, msg.status, int(msg.pinned), covered,
                     msg.created_at, parent, int(msg.excluded), _dump_spans(msg.pasted)),
                ).lastrowid
                if msg.attachments and msg.id is not None:
                    copy_attachments(db, msg.id, parent)
                if covered is not None:
                    first, last = first or parent, parent
            db.execute("UPDATE conversations SET head_id = ? WHERE id = ?", (parent, new_id))
            if sid is not None:
                count = db.execute("SELECT count(*) FROM messages WHERE summary_id = ?",
                                   (sid,)).fetchone()[0]
                db.execute("UPDATE summaries SET first_message_id = ?, last_message_id = ?, "
                           "covered_count = ? WHERE id = ?", (first, last, count, sid))
        return SessionInfo(new_id or 0, title, now, now, model, len(branch))

    def update_message(self, msg: Message, *, wait: float | None = None) -> None:
        """Write the message as it is now; pieces appended while it streamed are folded in."""
        if msg.id is None:
            raise ValueError("message is not stored yet; use add_message")
        if msg.status not in STATUSES:
            raise ValueError(f"unknown message status {msg.status!r}")
        msg.pasted = _pasted_after(msg, valid_unicode(msg.content))
        msg.content = valid_unicode(msg.content)
        with self._write("update a message in", wait=wait) as db:
            row = db.execute(
                "SELECT conversation_id FROM messages WHERE id = ?", (msg.id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: message {msg.id} does not exist.")
            db.execute(
                "UPDATE messages SET content = ?, status = ?, pinned = ?, summary_id = ?, "
                "tool_calls = ?, excluded = ?, pasted = ? WHERE id = ?",
                (msg.content, msg.status, int(msg.pinned), msg.summary_id,
                 dump_json(msg.tool_calls), int(msg.excluded), _dump_spans(msg.pasted), msg.id),
            )
            db.execute("DELETE FROM message_parts WHERE message_id = ?", (msg.id,))
            self._touch(db, row[0])

    def append_text(self, msg: Message, text: str, *, wait: float | None = None) -> None:
        """Add `text` to the end of a stored message, writing only `text` (a reply saved as
        it streams); `msg.content` in memory is the caller's to extend."""
        if msg.id is None:
            raise ValueError("message is not stored yet; use add_message")
        with self._write("save a reply to", wait=wait) as db:
            row = db.execute(
                "SELECT conversation_id FROM messages WHERE id = ?", (msg.id,)).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: message {msg.id} does not exist.")
            db.execute(
                "INSERT INTO message_parts (message_id, seq, text) VALUES (?, (SELECT "
                "coalesce(max(seq), 0) + 1 FROM message_parts WHERE message_id = ?), ?)",
                (msg.id, msg.id, valid_unicode(text)))
            self._touch(db, row[0])

    def sent_prompts(self, conv_id: int | None, limit: int = 500) -> list[str]:
        """What the user sent in `conv_id` (None: in every session), newest first, for the
        prompt's history: blank messages left out, one sent again right after itself listed
        once (as a shell keeps its history)."""
        return [text for text, _ in self.sent_prompts_pasted(conv_id, limit)]

    def sent_prompts_pasted(self, conv_id: int | None,
                            limit: int = 500) -> list[tuple[str, Spans]]:
        """sent_prompts, each with the spans of it that were pasted: sent again from the
        prompt's history, a pasted text is still pasted."""
        if conv_id is not None and not storable(conv_id):
            return []
        if conv_id is None:
            query = ("SELECT content, pasted FROM messages WHERE role = 'user' "
                     "ORDER BY created_at DESC, id DESC")
            args: tuple[int, ...] = ()
        else:
            query = ("SELECT content, pasted FROM messages WHERE role = 'user' "
                     "AND conversation_id = ? ORDER BY seq DESC")
            args = (conv_id,)
        texts: list[tuple[str, Spans]] = []
        with self._guard("read"):
            # Read row by row: the limit counts what is listed, after blanks and repeats.
            for text, pasted in self._db.execute(query, args):
                if len(texts) >= limit:
                    break
                if text.strip() and (not texts or texts[-1][0] != text):
                    texts.append((text, _load_spans(pasted, len(text))))
        return texts

    def stamp(self, conv_id: int) -> tuple[int, int, int, int]:
        """(messages, newest message id, newest summary id, branch shown) of a session: what
        changes when anyone adds to it or switches its branch, so a process can tell another
        one did."""
        with self._guard("read"):
            count, newest = self._db.execute(
                "SELECT count(*), coalesce(max(id), 0) FROM messages WHERE conversation_id = ?",
                (conv_id,)).fetchone()
            summary = self._db.execute(
                "SELECT coalesce(max(id), 0) FROM summaries WHERE conversation_id = ?",
                (conv_id,)).fetchone()[0]
            head = self._head(self._db, conv_id)
        return count, newest, summary, head

    def messages(self, conv_id: int) -> list[Message]:
        """Every message of `conv_id` in order; one whose tool calls cannot be read has none
        (and the user is told)."""
        msgs, unreadable = self._messages(conv_id)
        self._report(unreadable)
        return msgs

    def messages_by_id(self, conv_id: int, ids: list[int]) -> list[Message]:
        """The messages of `conv_id` among `ids`, in order (a few turns of another session,
        without reading all of it)."""
        msgs, unreadable = self._messages(conv_id, ids)
        self._report(unreadable)
        return msgs

    def branch_outline(self, conv_id: int) -> list[tuple[int, str]]:
        """(id, role) of each message of the branch shown, oldest first: where the turns of a
        session begin and end, read without the messages' text (a session may be huge)."""
        if not storable(conv_id):
            return []
        with self._guard("read"):
            rows = self._db.execute("SELECT id, parent_id, role FROM messages WHERE "
                                    "conversation_id = ? ORDER BY seq", (conv_id,)).fetchall()
            head = self._head(self._db, conv_id)
        by_id = {mid: (parent, role) for mid, parent, role in rows}
        mid = head if head in by_id else (rows[-1][0] if rows else None)
        out: list[tuple[int, str]] = []
        while mid is not None and mid in by_id and len(out) <= len(rows):  # a loop ends too
            parent, role = by_id[mid]
            out.append((mid, role))
            mid = parent
        out.reverse()
        return out

    def _messages(self, conv_id: int,
                  ids: list[int] | None = None) -> tuple[list[Message], list[Unreadable]]:
        if not storable(conv_id):
            return [], []
        only = f" AND id IN ({', '.join('?' * len(ids))})" if ids is not None else ""
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT id, role, content, tool_calls, tool_call_id, name, status, pinned, "
                f"summary_id, created_at, parent_id, excluded, pasted FROM messages "
                f"WHERE conversation_id = ?{only} ORDER BY seq",
                (conv_id, *(ids or ())),
            ).fetchall()
            # A reply still streaming, or cut off by a killed process, has pieces not yet folded.
            parts: dict[int, list[str]] = {}
            for mid, text in self._db.execute(
                    "SELECT p.message_id, p.text FROM message_parts p JOIN messages m "
                    "ON m.id = p.message_id WHERE m.conversation_id = ? "
                    "ORDER BY p.message_id, p.seq", (conv_id,)):
                parts.setdefault(mid, []).append(text)
            attached = load_attachments(self._db, conv_id)
        msgs, unreadable = [], []
        for (mid, role, content, stored, call_id, name, status, pinned, summary_id, created,
             parent, excluded, pasted) in rows:
            calls, problem = load_json(stored, list)
            if problem:
                unreadable.append(Unreadable(conv_id, mid, "tool_calls", problem, stored))
            if mid in parts:
                content += "".join(parts[mid])
            msgs.append(Message(
                role=role, content=content, id=mid, tool_calls=calls, tool_call_id=call_id,
                name=name, status=status, pinned=bool(pinned), summary_id=summary_id,
                created_at=created, parent_id=parent or ROOT, excluded=bool(excluded),
                pasted=_load_spans(pasted, len(content)), attachments=attached.get(mid, ()),
            ))
        return msgs, unreadable


def _dump_spans(spans: Spans) -> str | None:
    return dump_json([list(span) for span in spans]) if spans else None


def _load_spans(stored: str | None, length: int) -> Spans:
    """The pasted spans of a stored message. A field that cannot be read marks the whole
    message pasted: a suggestion missed costs one /remember, a pasted line offered as the
    user's own could become every session's instruction."""
    spans, problem = load_json(stored, list)
    if problem:
        return ((0, length),) if length else ()
    return tidy(spans or (), length)


def _pasted_after(msg: Message, stored: str) -> Spans:
    """The message's pasted spans for its text as stored: when making it valid Unicode changed
    the text, the offsets may be off, so a message with any paste counts as all pasted."""
    if not msg.pasted or stored == msg.content:
        return tidy(msg.pasted, len(stored))
    return ((0, len(stored)),)


def _titled(msg: Message) -> str:
    """What a session's title is made from: the words the user typed, not the blocks of the
    files before them (a title of "Attached file app.log (2,000 lines…" says nothing); the
    files' names when nothing was typed."""
    if not msg.attachments:
        return msg.content
    typed = msg.content[max(a.end for a in msg.attachments):].strip()
    return typed or " ".join(Path(a.path).name for a in msg.attachments)
