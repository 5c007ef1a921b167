"""The command line as real processes."""
