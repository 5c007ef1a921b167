"""The pure-Python context engine: no Textual, no Rich."""
