"""Tests of core/providers/."""
