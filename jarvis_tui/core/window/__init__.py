"""Layer 1: token counts, calibration against the server, and what fits in a request."""
