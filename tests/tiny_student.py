"""A student that costs seconds to make: the packaged encoder cut to one layer with a
seeded, untrained head, saved as a model directory (for inference tests, not quality)."""

from __future__ import annotations

import json
from pathlib import Path

from engines.labelers.student.infer import META_FILE, default_base, keep_layers, load_encoder


def save_tiny_student(where: Path) -> Path:
    """Write the one-layer student to ``where`` (reads messages, 64 tokens); returns it."""
    import torch

    torch.manual_seed(0)
    tokenizer, model = load_encoder(default_base())
    keep_layers(model, 1)
    model.save_pretrained(str(where))
    tokenizer.save_pretrained(str(where))
    meta = {"format": 1, "base": default_base(), "input_field": "message", "max_length": 64}
    (where / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return where
