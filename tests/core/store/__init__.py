"""Tests of core/store/."""
