"""Tests of core/details/."""
