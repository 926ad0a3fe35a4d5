"""Scoring a labeler against a set's final labels: per-class precision, recall, F1 and
false-positive rate, accuracy, the confusion matrix, and the items it never labeled;
over the whole set or per group of items (one repository, one language)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ClassScores:
    label: str
    support: int
    precision: float | None
    recall: float | None
    f1: float | None
    fpr: float | None


@dataclass(frozen=True)
class Evaluation:
    labeler: str
    items: int
    predicted: int
    missing: int
    accuracy: float | None
    classes: list[ClassScores]
    confusion: dict[str, dict[str, int]]

    def as_json(self) -> dict[str, object]:
        return {
            "labeler": self.labeler,
            "items_with_final_label": self.items,
            "items_predicted": self.predicted,
            "items_missing_prediction": self.missing,
            "accuracy": self.accuracy,
            "per_class": {
                c.label: {
                    "support": c.support,
                    "precision": c.precision,
                    "recall": c.recall,
                    "f1": c.f1,
                    "fpr": c.fpr,
                }
                for c in self.classes
            },
            "confusion": self.confusion,
        }


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def evaluate(
    labeler: str,
    truth: Mapping[int, str],
    predictions: Mapping[int, str],
    labels: Sequence[str],
) -> Evaluation:
    """Compare predictions with the true labels of the same items.

    Items without a prediction are counted as missing and left out of the scores;
    predicted labels outside ``labels`` still count as errors (a column of their own in
    the confusion matrix)."""
    pairs = [(truth[i], predictions[i]) for i in sorted(truth) if i in predictions]
    missing = len(truth) - len(pairs)
    confusion_counts = Counter(pairs)
    predicted_labels = sorted({p for _, p in pairs} - set(labels))
    columns = [*labels, *predicted_labels]
    confusion = {t: {p: confusion_counts.get((t, p), 0) for p in columns} for t in labels}
    classes = []
    for label in labels:
        tp = confusion_counts.get((label, label), 0)
        fp = sum(n for (t, p), n in confusion_counts.items() if p == label and t != label)
        fn = sum(n for (t, p), n in confusion_counts.items() if t == label and p != label)
        tn = len(pairs) - tp - fp - fn
        precision = _ratio(tp, tp + fp)
        recall = _ratio(tp, tp + fn)
        # 2TP / (2TP + FP + FN): 0 for a labeler that never names a class the set holds
        # (precision undefined, recall 0), undefined only when neither side names it
        f1 = _ratio(2 * tp, 2 * tp + fp + fn)
        classes.append(ClassScores(label, tp + fn, precision, recall, f1, _ratio(fp, fp + tn)))
    accuracy = _ratio(sum(1 for t, p in pairs if t == p), len(pairs))
    return Evaluation(labeler, len(truth), len(pairs), missing, accuracy, classes, confusion)


def evaluate_groups(
    labeler: str,
    truth: Mapping[int, str],
    predictions: Mapping[int, str],
    labels: Sequence[str],
    group_of: Mapping[int, str],
) -> dict[str, Evaluation]:
    """:func:`evaluate` on each group of items, by group name in sorted order; an item
    ``group_of`` does not name falls in the group ``unknown``."""
    members: dict[str, list[int]] = {}
    for item in truth:
        members.setdefault(group_of.get(item) or "unknown", []).append(item)
    return {
        group: evaluate(
            labeler,
            {i: truth[i] for i in items},
            {i: predictions[i] for i in items if i in predictions},
            labels,
        )
        for group, items in sorted(members.items())
    }
