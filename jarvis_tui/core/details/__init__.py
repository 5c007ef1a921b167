"""Details a summary drops, kept word for word: extraction by shape and salience, the ledger."""
