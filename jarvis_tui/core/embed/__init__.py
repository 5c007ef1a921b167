"""The embedding model and the vectors of stored messages (recall by meaning)."""
