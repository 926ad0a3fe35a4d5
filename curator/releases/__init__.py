"""Releases: versioned JSONL exports with a manifest, a datasheet, validation and import."""
