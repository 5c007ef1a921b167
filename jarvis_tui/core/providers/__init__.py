"""Wire protocols: one module per provider API, plus error classification."""
