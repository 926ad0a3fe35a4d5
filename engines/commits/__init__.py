"""Git commit mining: PyDriller traversal, cheap filters, representation and dedup hashes."""
