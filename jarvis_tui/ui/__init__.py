"""The Textual shell around the core."""
