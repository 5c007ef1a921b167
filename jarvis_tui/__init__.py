"""jarvis-tui: a terminal LLM chat client that manages its context window visibly."""

__version__ = "0.1.0"
