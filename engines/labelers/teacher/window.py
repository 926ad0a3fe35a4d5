"""The student's window for the teacher: cut a text exactly where a student's tokenizer
truncates it, so the teacher judges the very text the student will be trained on.

A student directory (``curator_student.json`` beside the weights) gives its tokenizer
and ``max_length``; any local Hugging Face model directory gives a tokenizer, with the
length passed in. The cut uses the tokenizer's character offsets: the text is kept up
to the end of the last token the student sees (special tokens count against the
length, as they do in training and inference).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engines.labelers.model_files import (
    check_model_directory,
    read_json_object,
    tokenizer_file,
    unreadable,
)

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
    ``max_length`` is given). Raises ``ValueError`` for a directory that is no model,
    has no tokenizer or whose files cannot be read, naming the file."""
    where = check_model_directory(path, weights=False)
    length = max_length
    meta = where / STUDENT_META
    if length is None and meta.is_file():
        recorded = read_json_object(meta).get("max_length", 0)
        if not isinstance(recorded, int) or isinstance(recorded, bool) or recorded < 0:
            raise unreadable(meta, f"max_length must be a whole number, not {recorded!r}")
        length = recorded or None
    length = length or DEFAULT_LENGTH
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(where))
    except Exception as exc:  # a damaged vocabulary raises whatever its reader raises
        raise unreadable(tokenizer_file(where), exc) from None
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{where}: the tokenizer has no fast version (offsets are needed)")
    return window_cut(tokenizer, length), length
