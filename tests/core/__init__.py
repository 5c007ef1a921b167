"""Tests of the pure core, one folder per part."""
