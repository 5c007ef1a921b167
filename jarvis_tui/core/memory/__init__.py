"""The user's memory: the entries every request carries, and the suggestions to review."""
