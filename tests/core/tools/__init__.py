"""Tests of core/tools/."""
