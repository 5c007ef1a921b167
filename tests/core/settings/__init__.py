"""Tests of core/settings/."""
