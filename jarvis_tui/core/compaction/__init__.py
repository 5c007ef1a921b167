"""Layer 2: the summary request, its size, and a compaction proposed but not yet committed."""
