"""The files of a model directory: checked before a model is loaded, and named in the one
line that says why one cannot be read (``MODELDIR/model.pkl: cannot be read (...)``).

A Hugging Face model directory (a ``--base``, a student, the window of ``teach
--window-of``) needs ``config.json``, a tokenizer's vocabulary and, to be loaded as a
model, its weights. Without the vocabulary ``transformers`` quietly builds a tokenizer
that knows only its special tokens, and a student trained with it learns nothing.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CONFIG_FILE = "config.json"
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
"""A tokenizer's vocabulary, one of which a model directory must hold (``transformers``
reads the first it knows for the model's tokenizer class)."""
SAFETENSORS = "model.safetensors"
WEIGHT_FILES = (
    SAFETENSORS,
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


class ModelFileError(ValueError):
    """A model file that is missing, damaged or not what it should be; the message names
    the file (or the directory and what it lacks)."""


def unreadable(path: str | Path, reason: BaseException | str) -> ModelFileError:
    """``PATH: cannot be read (REASON)``, the reason on one line."""
    text = " ".join(str(reason).split())
    if isinstance(reason, BaseException) and not isinstance(reason, ValueError | OSError):
        text = f"{type(reason).__name__}: {text}" if text else type(reason).__name__
    return ModelFileError(f"{path}: cannot be read ({text or 'unknown error'})")


def read_json_object(path: str | Path) -> dict[str, Any]:
    """The JSON object in ``path``; :class:`ModelFileError` naming the file when it cannot
    be read, is not JSON or holds something else than an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError too
        raise unreadable(path, exc) from None
    if not isinstance(data, dict):
        raise unreadable(path, f"a JSON object was expected, not {type(data).__name__}")
    return data


def _one_of(names: Sequence[str]) -> str:
    return f"{', '.join(names[:-1])} or {names[-1]}"


def check_model_directory(path: str | Path, weights: bool = True) -> Path:
    """``path`` when it holds a Hugging Face model: ``config.json``, a tokenizer's
    vocabulary and (``weights``) intact weights; else :class:`ModelFileError` naming the
    directory and the files it lacks, or the damaged file."""
    where = Path(path)
    if not (where / CONFIG_FILE).is_file():
        raise ModelFileError(f"{where}: not a Hugging Face model directory (no {CONFIG_FILE})")
    read_json_object(where / CONFIG_FILE)
    if not any((where / name).is_file() for name in TOKENIZER_FILES):
        raise ModelFileError(
            f"{where}: no tokenizer files (none of {_one_of(TOKENIZER_FILES)}):"
            " copy the model's tokenizer beside its config.json"
        )
    if weights:
        if not any((where / name).is_file() for name in WEIGHT_FILES):
            raise ModelFileError(f"{where}: no model weights (none of {_one_of(WEIGHT_FILES)})")
        if (where / SAFETENSORS).is_file():
            check_safetensors(where / SAFETENSORS)
    return where


def weights_file(path: str | Path) -> Path:
    """The weights file of a model directory, to name in an error (the directory itself
    when it has none)."""
    where = Path(path)
    return next((where / n for n in WEIGHT_FILES if (where / n).is_file()), where)


def tokenizer_file(path: str | Path) -> Path:
    """The tokenizer's vocabulary file of a model directory, to name in an error (the
    directory itself when it has none)."""
    where = Path(path)
    return next((where / n for n in TOKENIZER_FILES if (where / n).is_file()), where)


MAX_HEADER_BYTES = 100_000_000
"""The longest header the safetensors format allows."""


def check_safetensors(path: Path) -> None:
    """:class:`ModelFileError` unless ``path`` is a whole safetensors file: its header
    reads, and the file is as long as the tensors the header lists (a truncated copy is
    caught here, before any training starts). Reads the header only."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise unreadable(path, f"{size} bytes, too short for a safetensors file")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES:  # the format caps it: these bytes are no length
                raise unreadable(path, "corrupt: it does not start with a safetensors header")
            if length > size - 8:
                raise unreadable(path, f"truncated: {size:,} bytes, the header alone says more")
            header = json.loads(handle.read(length))
    except (OSError, ValueError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        raise unreadable(path, exc) from None
    if not isinstance(header, dict):
        raise unreadable(path, "its header is not a JSON object")
    offsets = [t.get("data_offsets") for t in header.values() if isinstance(t, dict)]
    ends = [o[1] for o in offsets if isinstance(o, list) and len(o) == 2 and isinstance(o[1], int)]
    expected = 8 + length + max(ends, default=0)
    if size < expected:
        raise unreadable(path, f"truncated: {size:,} of {expected:,} bytes")
