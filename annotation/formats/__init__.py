"""Other annotation tools' file formats: Prodigy JSONL tasks and Label Studio JSON tasks,
mapped onto sets, labels, categories and votes (see docs/interop.md)."""
