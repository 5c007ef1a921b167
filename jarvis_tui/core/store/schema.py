"""The session database's tables, as the list of steps that built them.

Kept apart from the code that reads and writes them so the whole schema, and how each version
grew from the one before, reads in one place; each part of the store reads only the tables it
needs. A store opened on an older database runs the steps it lacks (store/db.py).
"""

from __future__ import annotations

# Index i upgrades a database from user_version i to i + 1. Append, never edit.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE summaries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        content TEXT NOT NULL,
        first_message_id INTEGER,
        last_message_id INTEGER,
        covered_count INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('auto', 'manual', 'edited')),
        focus TEXT,
        model TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        replaces_id INTEGER REFERENCES summaries(id)
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        status TEXT NOT NULL DEFAULT 'complete'
            CHECK (status IN ('complete', 'partial', 'failed')),
        pinned INTEGER NOT NULL DEFAULT 0,
        summary_id INTEGER REFERENCES summaries(id),
        created_at REAL NOT NULL,
        UNIQUE (conversation_id, seq)
    );
    CREATE INDEX summaries_by_conversation ON summaries(conversation_id, id);
    CREATE INDEX conversations_by_update ON conversations(updated_at);
    """,
    # A reply is saved while it streams by appending its new text here, so each save writes only
    # what is new: rewriting (and re-indexing) the whole reply every half second made a 30 MB
    # reply quadratic. The pieces are folded into messages.content when the reply is updated.
    """
    CREATE TABLE message_parts (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (message_id, seq)
    ) WITHOUT ROWID;
    """,
    # What each request cost, as the server counted it: a chat request against the reply it
    # brought, a summary request against the summary. Kept apart from the messages so a reply
    # saved by an older jarvis-tui, or one whose server said nothing, simply has no row.
    """
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        summary_id INTEGER REFERENCES summaries(id) ON DELETE SET NULL,
        kind TEXT NOT NULL CHECK (kind IN ('chat', 'summary')),
        model TEXT NOT NULL DEFAULT '',
        prompt_tokens INTEGER NOT NULL,
        cached_tokens INTEGER,
        cache_write_tokens INTEGER,
        completion_tokens INTEGER NOT NULL,
        freed_tokens INTEGER,
        created_at REAL NOT NULL
    );
    CREATE INDEX usage_by_conversation ON usage(conversation_id, id);
    """,
    # A session is a tree: a regenerated reply or an edited question starts a branch beside
    # the old one, which stays (nothing is deleted). Each message names the one it follows
    # (NULL: the top), the session the tip of the branch shown; before this, a session was
    # one line, so each message follows the one before it. `excluded`: taken out of requests
    # by the user (/forget), kept here.
    """
    ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id);
    ALTER TABLE messages ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN head_id INTEGER;
    UPDATE messages SET parent_id = (
        SELECT p.id FROM messages p WHERE p.conversation_id = messages.conversation_id
        AND p.seq < messages.seq ORDER BY p.seq DESC LIMIT 1);
    CREATE INDEX messages_by_parent ON messages(parent_id);
    """,
    # The user's memory: short entries every session's requests carry, each with the session
    # and message it came from (kept when those are deleted: the entry is the user's). Not per
    # conversation: a memory is for all of them. "suggested" entries wait for the user's yes;
    # "dismissed" ones are kept so the same suggestion never comes back.
    """
    CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        text TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'fact'
            CHECK (kind IN ('fact', 'preference', 'instruction', 'person', 'decision')),
        state TEXT NOT NULL DEFAULT 'active'
            CHECK (state IN ('active', 'suggested', 'dismissed')),
        pinned INTEGER NOT NULL DEFAULT 0,
        conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
        message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX memories_by_state ON memories(state, pinned, created_at);
    """,
    # Where a memory suggestion may come from (issue 39): only what the user typed. `pasted`
    # holds the [start, end) spans of a message the user pasted (JSON; NULL: all typed), never
    # read for suggestions. `origin` says how an entry came: "suggested" (a compaction found it
    # in what the user typed), "remember" (/remember or F6), "message" (M on a message), "cli"
    # (`memory add`), "import"; NULL: before this was kept. A suggestion whose message is taken
    # out of the requests (/forget) or deleted, or whose session is deleted, is withdrawn with
    # it, whoever does it: it must not wait in the inbox, ready to accept. What a user's message
    # stored before this held is not known to be typed: one not folded yet counts as pasted
    # (a suggestion missed costs one /remember; a pasted line offered costs far more).
    """
    ALTER TABLE messages ADD COLUMN pasted TEXT;
    ALTER TABLE memories ADD COLUMN origin TEXT;
    CREATE INDEX memories_by_message ON memories(message_id);
    CREATE TRIGGER memories_withdrawn_when_excluded AFTER UPDATE OF excluded ON messages
    WHEN new.excluded = 1 BEGIN
        DELETE FROM memories WHERE message_id = new.id AND state = 'suggested';
    END;
    CREATE TRIGGER memories_withdrawn_with_message BEFORE DELETE ON messages BEGIN
        DELETE FROM memories WHERE message_id = old.id AND state = 'suggested';
    END;
    CREATE TRIGGER memories_withdrawn_with_session BEFORE DELETE ON conversations BEGIN
        DELETE FROM memories WHERE conversation_id = old.id AND state = 'suggested';
    END;
    DELETE FROM memories WHERE state = 'suggested' AND message_id IN (
        SELECT id FROM messages WHERE excluded = 1);
    UPDATE messages SET pasted = json_array(json_array(0, length(content)))
        WHERE role = 'user' AND summary_id IS NULL AND content != '';
    """,
    # What a message means, for recall (issue 40): one unit vector per message and embedding
    # model (core/embed/model.py), float16 bytes, written by a worker after the message is
    # stored. A vector is of the text it was made from: an edit takes it away (the worker makes
    # the new one), and so does the message's deletion.
    """
    CREATE TABLE embeddings (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (message_id, model)
    ) WITHOUT ROWID;
    CREATE TRIGGER embeddings_stale_on_edit AFTER UPDATE OF content ON messages
    WHEN new.content IS NOT old.content BEGIN
        DELETE FROM embeddings WHERE message_id = new.id;
    END;
    """,
    # Counting a model's vectors (the check recall makes for deleted ones before it ranks)
    # read every 1 KB vector of the table: 9 ms a question at 10,000 turns; the index is small.
    """
    CREATE INDEX embeddings_by_model ON embeddings(model);
    """,
    # The files a message carries (issue 42), as they were when sent: where each came from,
    # its digest and times, and its block's span in the message. `body`: what the block does
    # not hold (a file sent as a part or a digest, read on through read_attachment; an image's
    # bytes), NULL when the block holds it all. Copied with the message by a fork.
    """
    CREATE TABLE attachments (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        span_start INTEGER NOT NULL,
        span_end INTEGER NOT NULL,
        how TEXT NOT NULL DEFAULT 'whole',
        first_line INTEGER NOT NULL DEFAULT 1,
        last_line INTEGER NOT NULL DEFAULT 0,
        media_type TEXT NOT NULL DEFAULT 'text/plain',
        width INTEGER NOT NULL DEFAULT 0,
        height INTEGER NOT NULL DEFAULT 0,
        body BLOB,
        PRIMARY KEY (message_id, position)
    ) WITHOUT ROWID;
    CREATE INDEX attachments_by_path ON attachments(path);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)
