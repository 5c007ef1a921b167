"""Tests of core/engine/."""
