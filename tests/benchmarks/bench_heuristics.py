"""Speed and quality of the heuristic labeler (``heuristics@1``) next to ``keyword@1``.

Usage (from the repository root)::

    python tests/benchmarks/bench_heuristics.py [--quick] [--data DIR]

Labels the messages of train, extra and test (``shared/data/perf-commit-messages``
beside the checkout unless ``--data`` says otherwise) with both labelers in the same
run and prints messages per second and their ratio (keyword@1 is the baseline). Then
precision, recall, F1 and FPR of the perf class and accuracy on test.jsonl, for the
label model, a plain majority vote of the same functions, and keyword@1. Fitting used
only train and extra (without their labels); test is held out. ``--quick`` uses a few
built-in messages when the data is absent and 200 messages when present.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engines.labelers.base import PERF  # noqa: E402
from engines.labelers.heuristics import (  # noqa: E402
    LABELING_FUNCTIONS,
    HeuristicLabeler,
    fired,
    majority_vote,
)
from engines.labelers.keyword import KeywordLabeler  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "perf-commit-messages"
BUILT_IN = [
    ("Make the parser 3x faster by caching tokens", 1),
    ("Fix typo in README", 0),
    ("Avoid unnecessary allocations in the hot loop", 1),
    ("Bump version to 2.1", 0),
]


def read(path: Path) -> list[tuple[str, int]]:
    return [
        (r["commit_message"], int(r["target"]))
        for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def rate(labeler: KeywordLabeler | HeuristicLabeler, texts: list[str]) -> float:
    start = time.perf_counter()
    labeler.predict(texts)
    return len(texts) / (time.perf_counter() - start)


def scores(rows: list[tuple[str, int]], labels: list[str]) -> str:
    tp = sum(1 for (_, t), p in zip(rows, labels, strict=True) if t and p == PERF)
    fp = sum(1 for (_, t), p in zip(rows, labels, strict=True) if not t and p == PERF)
    fn = sum(1 for (_, t), p in zip(rows, labels, strict=True) if t and p != PERF)
    tn = len(rows) - tp - fp - fn
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    return (
        f"P {precision:.3f}  R {recall:.3f}  F1 {f1:.3f}  FPR {fp / max(fp + tn, 1):.3f}"
        f"  accuracy {(tp + tn) / len(rows):.3f}  (n={len(rows)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    have_data = (args.data / "test.jsonl").exists()
    if have_data:
        everything = [m for f in ("train", "extra", "test") for m in read(args.data / f"{f}.jsonl")]
        test = read(args.data / "test.jsonl")
    else:
        everything, test = BUILT_IN * 50, BUILT_IN
        print(f"no data at {args.data}: timing built-in messages only")
    texts = [m for m, _ in everything][: 200 if args.quick else None]
    heuristics, keyword = HeuristicLabeler(), KeywordLabeler()
    keyword_rate, heuristics_rate = rate(keyword, texts), rate(heuristics, texts)
    print(f"{len(texts)} messages")
    print(f"keyword@1 (baseline): {keyword_rate:,.0f} messages/s")
    print(f"{heuristics.name}: {heuristics_rate:,.0f} messages/s")
    print(f"ratio vs keyword@1: {heuristics_rate / keyword_rate:.2f}x")
    messages = [m for m, _ in test]
    print(f"test set, perf class ({'test.jsonl' if have_data else 'built-in'}):")
    print(f"  {heuristics.name:14s}", scores(test, [p.label for p in heuristics.predict(messages)]))
    votes = [majority_vote(fired(m), LABELING_FUNCTIONS) or "non-perf" for m in messages]
    print(f"  {'majority vote':14s}", scores(test, votes))
    print(f"  {keyword.name:14s}", scores(test, [p.label for p in keyword.predict(messages)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
