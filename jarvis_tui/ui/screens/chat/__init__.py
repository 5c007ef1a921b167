"""The chat screen, in parts: base.py what they share, then one file a part (commands,
compaction, tools, branches), none importing another, and screen.py, which puts them together."""
