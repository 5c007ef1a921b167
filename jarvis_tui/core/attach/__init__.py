"""Files and images the user attaches: read and checked (read.py), a folder as its listing
(listing.py), what they cost (cost.py), and how they go into the message (message.py).

An attachment is read once, when it is attached, and sent as it was read: a later edit of the
file changes nothing of what the conversation holds. What cannot be attached is refused with
the fact that stops it (refusal.py); the words are the texts' (jarvis_tui/texts).
"""
