"""Tests of core/recall/."""
