"""Tests of core/compaction/."""
