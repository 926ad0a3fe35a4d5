"""Accuracy of the commit labelers on the PerfCurator authors' hand-labeled messages.

Usage (from the repository root)::

    python tests/benchmarks/accuracy_perf_messages.py [--data DIR] [--epochs N] [--json OUT]

Trains on ``train.jsonl`` (human labels), tunes on ``extra.jsonl`` (early stopping for
the student, the only tuning done) and reports on ``test.jsonl``: keyword@1, TF-IDF +
logistic regression, TF-IDF + linear SVM, the student, and the student with dynamic
int8 quantization, in bfloat16 and on OpenVINO, one table of perf-class precision,
recall, F1 and accuracy.

The labelers are driven through the engines' own APIs (the same ones ``curator train``
calls); the data stays where it is and is read, never copied into the project.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engines.labelers import tfidf  # noqa: E402
from engines.labelers.base import PERF  # noqa: E402
from engines.labelers.keyword import KeywordLabeler  # noqa: E402
from engines.labelers.student import (  # noqa: E402
    StudentLabeler,
    TrainConfig,
    hard_example,
    train_student,
)
from engines.labelers.student.openvino import openvino_available  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "perf-commit-messages"


def read(path: Path, limit: int | None = None) -> tuple[list[str], list[int]]:
    texts: list[str] = []
    labels: list[int] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("target") in (0, 1):
                texts.append(str(record["commit_message"]))
                labels.append(int(record["target"]))
            if limit is not None and len(texts) >= limit:
                break
    return texts, labels


def scores(truth: Sequence[int], predicted: Sequence[int]) -> dict[str, float]:
    tp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == p == 1)
    fp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == 0 and p == 1)
    fn = sum(1 for t, p in zip(truth, predicted, strict=True) if t == 1 and p == 0)
    correct = sum(1 for t, p in zip(truth, predicted, strict=True) if t == p)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": correct / len(truth) if truth else 0.0,
    }


def run(
    data: Path,
    epochs: int = 4,
    lr: float = 5e-5,
    batch: int = 16,
    max_length: int = 128,
    limit: int | None = None,
    seed: int = 0,
    patience: int = 1,
    layers: int | None = None,
) -> dict[str, object]:
    train_x, train_y = read(data / "train.jsonl", limit)
    dev_x, dev_y = read(data / "extra.jsonl", limit)
    test_x, test_y = read(data / "test.jsonl", limit)
    rows: dict[str, dict[str, float]] = {}
    timing: dict[str, float] = {}

    keyword = KeywordLabeler()
    rows[keyword.name] = scores(test_y, [int(p.label == PERF) for p in keyword.predict(test_x)])

    for kind in tfidf.KINDS:
        started = time.perf_counter()
        model = tfidf.fit(kind, train_x, train_y, seed)
        timing[tfidf.family(kind)] = time.perf_counter() - started
        predicted = [int(p >= 0.5) for p in tfidf.positive_scores(model, test_x)]
        rows[tfidf.family(kind)] = scores(test_y, predicted)

    config = TrainConfig(
        epochs=epochs,
        batch_size=batch,
        lr=lr,
        max_length=max_length,
        seed=seed,
        patience=patience,
        layers=layers,
    )
    train = [hard_example(x, y) for x, y in zip(train_x, train_y, strict=True)]
    dev = [hard_example(x, y) for x, y in zip(dev_x, dev_y, strict=True)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "student"

        def report(p: object) -> None:
            step = getattr(p, "step", 0)
            if getattr(p, "phase", "") == "epoch" or step % 20 == 0:
                print(
                    f"  epoch {p.epoch}/{p.epochs} step {step}/{p.steps}"  # type: ignore[attr-defined]
                    f" loss {p.loss:.4f} dev F1 {p.dev_f1}",  # type: ignore[attr-defined]
                    file=sys.stderr,
                    flush=True,
                )

        started = time.perf_counter()
        result = train_student(config, train, dev, out, report)
        timing["student_training"] = time.perf_counter() - started
        variants = (
            ("student", {}),
            ("student-int8", {"quantized": True}),
            ("student-bf16", {"bf16": True}),
            *((("student-openvino", {"openvino": True}),) if openvino_available() else ()),
        )
        for name, options in variants:
            labeler = StudentLabeler(out, name, **options)
            started = time.perf_counter()
            probs = labeler.probabilities(test_x)
            timing[f"{name}_test_inference"] = time.perf_counter() - started
            rows[name] = scores(test_y, [int(p >= 0.5) for p in probs])
    return {
        "data": str(data),
        "sizes": {"train": len(train_x), "dev": len(dev_x), "test": len(test_x)},
        "student": {
            "config": {
                "epochs": epochs,
                "lr": lr,
                "batch": batch,
                "max_length": max_length,
                "patience": patience,
            },
            "best_epoch": result.best_epoch,
            "best_dev_f1": result.best_dev_f1,
            "history": result.history,
        },
        "test": rows,
        "seconds": timing,
    }


def print_table(result: dict[str, object]) -> None:
    print(f"sizes: {result['sizes']}")
    print("| labeler | P (perf) | R (perf) | F1 (perf) | accuracy |")
    print("|---|---:|---:|---:|---:|")
    for name, s in result["test"].items():  # type: ignore[union-attr]
        print(
            f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f}"
            f" | {s['accuracy']:.3f} |"
        )
    test = result["test"]
    delta = test["student-int8"]["f1"] - test["student"]["f1"]  # type: ignore[index]
    print(f"int8 quantization changes perf F1 by {delta:+.3f}")
    delta = test["student-bf16"]["f1"] - test["student"]["f1"]  # type: ignore[index]
    print(f"bf16 weights change perf F1 by {delta:+.3f}")
    if "student-openvino" in test:  # type: ignore[operator]
        delta = test["student-openvino"]["f1"] - test["student"]["f1"]  # type: ignore[index]
        print(f"OpenVINO changes perf F1 by {delta:+.3f}")
    print(f"student: {result['student']}")
    print(f"seconds: {result['seconds']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--patience", type=int, default=1, help="Epochs without dev gain.")
    parser.add_argument("--limit", type=int, default=None, help="Rows per file (quick runs).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the result here.")
    parser.add_argument("--layers", type=int, default=None, help="Student keeps N layers.")
    args = parser.parse_args(argv)
    if not (args.data / "train.jsonl").is_file():
        print(f"error: no train.jsonl in {args.data}", file=sys.stderr)
        return 1
    result = run(
        args.data,
        args.epochs,
        args.lr,
        args.batch,
        args.max_length,
        args.limit,
        patience=args.patience,
        layers=args.layers,
    )
    print_table(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
