"""What the user reads, in English and Chinese: the notices for the engine's events, and the
app's and chat screen's words. The core returns facts (events, figures); the UI and the command
line put them in words here. Plain Python: no Textual, no Rich, and the core never imports it."""
