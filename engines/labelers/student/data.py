"""Training examples for the student, and the batching and padding both training and
inference use.

An example carries a hard label and the probability of the positive class: equal to the
label for human votes and hard teacher labels, the teacher's belief for soft labels.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engines.labelers.base import NON_PERF, PERF

if TYPE_CHECKING:
    import numpy as np

LABELS: tuple[str, str] = (NON_PERF, PERF)
"""Class index -> label: 0 non-perf, 1 perf."""


@dataclass(frozen=True)
class Example:
    """One text to learn from: ``label`` is 0 or 1; ``target`` is P(positive) in 0..1;
    ``weight`` scales its share of the loss (human votes 1, weak labels less).

    ``message`` is the same commit's text without its diff, set only when ``text`` is
    message || diff and the diff is not empty: diff dropout shows it instead of ``text``
    in some epochs, so one model learns to read both."""

    text: str
    label: int
    target: float
    source: str = ""
    item_id: int | None = None
    origin: str = "human"
    message: str | None = None
    weight: float = 1.0


def hard_example(
    text: str, label: int, source: str = "", item_id: int | None = None, origin: str = "human"
) -> Example:
    if label not in (0, 1):
        raise ValueError(f"label must be 0 or 1, not {label!r}")
    return Example(text, label, float(label), source, item_id, origin)


MIN_HOLDOUT_EXAMPLES = 20
"""Below this many training examples no dev slice is held out: too few to spare."""


def stratified_holdout(
    examples: Sequence[Example], fraction: float, seed: int = 0
) -> tuple[list[Example], list[Example]]:
    """(train, held out): ``fraction`` of each class's examples (at least one), drawn
    with ``seed``, in their original order. Nothing is held out when ``fraction`` is 0,
    when there are fewer than :data:`MIN_HOLDOUT_EXAMPLES` examples, or when a class
    could not keep one example on each side."""
    if fraction <= 0 or len(examples) < MIN_HOLDOUT_EXAMPLES:
        return list(examples), []
    rng = random.Random(seed)
    held: set[int] = set()
    for label in (0, 1):
        members = [i for i, e in enumerate(examples) if e.label == label]
        k = max(1, round(len(members) * fraction))
        if len(members) - k < 1:
            return list(examples), []
        held.update(rng.sample(members, k))
    return (
        [e for i, e in enumerate(examples) if i not in held],
        [e for i, e in enumerate(examples) if i in held],
    )


def overlapping_sources(train: Iterable[Example], held_out: Iterable[Example]) -> set[str]:
    """Repositories that hold both training and held-out examples (a leak)."""
    return {e.source for e in train if e.source} & {e.source for e in held_out if e.source}


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first), so padding is small."""
    if batch_size < 1:
        raise ValueError("batch size must be at least 1")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def shuffled_length_batches(
    lengths: Sequence[int], batch_size: int, rng: random.Random, window: int = 50
) -> list[list[int]]:
    """Training batches: shuffled, then sorted by length inside windows of ``window``
    batches, then the batches shuffled; close to random order with little padding."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    span = batch_size * window
    batches: list[list[int]] = []
    for start in range(0, len(order), span):
        chunk = sorted(order[start : start + span], key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def binary_f1(truth: Sequence[int], predicted: Sequence[int]) -> float:
    """F1 of the positive class (0.0 when it is never predicted or never true)."""
    tp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == 1 and p == 1)
    fp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == 0 and p == 1)
    fn = sum(1 for t, p in zip(truth, predicted, strict=True) if t == 1 and p == 0)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def padded(ids: Sequence[Sequence[int]], pad_id: int) -> dict[str, np.ndarray]:
    """Input ids and attention mask for one batch, padded to its longest member rounded
    up to a multiple of 8 (it keeps the matrix kernels on their fast paths and gives a
    compiled model fewer shapes); the mask hides the extra columns."""
    import numpy as np  # here, not at import: the app and the CLI start without it

    width = -(-max(len(x) for x in ids) // 8) * 8
    input_ids = np.full((len(ids), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return {"input_ids": input_ids, "attention_mask": mask}


def pad_id_of(tokenizer: object) -> int:
    """The tokenizer's padding id (0 when it has none)."""
    pad = getattr(tokenizer, "pad_token_id", None)
    return 0 if pad is None else int(pad)
