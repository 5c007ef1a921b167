"""Folded turns brought back: recall before a request and the model's own search, one index."""
