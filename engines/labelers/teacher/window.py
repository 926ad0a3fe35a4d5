"""The student's window for the teacher: cut a text exactly where a student's tokenizer
truncates it, so the teacher judges the very text the student will be trained on.

A student directory (``curator_student.json`` beside the weights) gives its tokenizer
and ``max_length``; any local Hugging Face model directory gives a tokenizer, with the
length passed in. The cut uses the tokenizer's character offsets: the text is kept up
to the end of the last token the student sees (special tokens count against the
length, as they do in training and inference).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

STUDENT_META = "curator_student.json"
DEFAULT_LENGTH = 128


def window_cut(tokenizer: Any, max_length: int) -> Callable[[str], str]:
    """A function that returns the prefix of a text ``tokenizer`` keeps at ``max_length``."""

    def cut(text: str) -> str:
        encoded = tokenizer(
            text, truncation=True, max_length=max_length, return_offsets_mapping=True
        )
        ends = [end for start, end in encoded["offset_mapping"] if end > start]
        return text[: max(ends)] if ends else ""

    return cut


def load_window(
    path: str | Path, max_length: int | None = None
) -> tuple[Callable[[str], str], int]:
    """The cut of the model at ``path`` and the length it uses (the student's own, unless
    ``max_length`` is given). Raises ``ValueError`` for a directory that is no model."""
    where = Path(path)
    if not (where / "config.json").is_file():
        raise ValueError(f"{where}: not a Hugging Face model directory (no config.json)")
    length = max_length
    meta = where / STUDENT_META
    if length is None and meta.is_file():
        length = int(json.loads(meta.read_text(encoding="utf-8")).get("max_length", 0)) or None
    length = length or DEFAULT_LENGTH
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(where))
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{where}: the tokenizer has no fast version (offsets are needed)")
    return window_cut(tokenizer, length), length
