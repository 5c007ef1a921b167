"""The session database: conversations, messages and branches, summaries, usage, search."""
