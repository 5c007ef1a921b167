"""Tests of core/window/."""
