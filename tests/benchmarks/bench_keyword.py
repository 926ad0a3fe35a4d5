"""Throughput and quality of the keyword baseline labeler.

Usage (from the repository root)::

    python tests/benchmarks/bench_keyword.py [--quick] [--data DIR] [--rounds N]

Times ``KeywordLabeler.predict`` over the messages of train.jsonl, test.jsonl and
extra.jsonl and, in the same run, two naive labelers built from the same term list with
one compiled regex per term:

* naive, same output: every term's regex runs ``finditer`` over the message and the
  matches are merged left to right (what ``predict`` must report: all spans);
* naive, first hit: terms are tried in turn and the loop stops at the first ``search``
  hit (labels only, no spans: the cheapest thing a per-term loop can do).

It then prints precision, recall, F1 (perf class) and accuracy on test.jsonl and
gold500.csv. The data lives in the ``shared/data/perf-commit-messages`` folder beside the
repository checkout unless ``--data`` points elsewhere.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engines.labelers.base import NON_PERF, PERF, Prediction  # noqa: E402
from engines.labelers.keyword import (  # noqa: E402
    KeywordLabeler,
    TermList,
    load_terms,
    packaged_terms,
)

DEFAULT_DATA = REPO.parent / "shared" / "data" / "perf-commit-messages"
Example = tuple[str, int]


def read_jsonl(path: Path) -> tuple[list[Example], int]:
    """(message, target) pairs whose target is 0 or 1, and how many rows were skipped."""
    rows: list[Example] = []
    skipped = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("target") in (0, 1):
                rows.append((str(record["commit_message"]), int(record["target"])))
            else:
                skipped += 1
    return rows, skipped


def read_gold(path: Path) -> tuple[list[Example], int]:
    """The same pairs from gold500.csv (columns idx, commit_message, target, ...)."""
    rows: list[Example] = []
    skipped = 0
    with path.open(encoding="utf-8", newline="") as handle:
        for record in csv.DictReader(handle):
            target = (record.get("target") or "").strip()
            if target in ("0", "1"):
                rows.append((record["commit_message"], int(target)))
            else:
                skipped += 1
    return rows, skipped


class NaiveKeywordLabeler:
    """One compiled regex per term; the baseline the combined alternation is measured on."""

    def __init__(self, terms: TermList) -> None:
        self.name = f"naive-keyword@{terms.version}"
        rules = [(None, e.pattern) for e in terms.excludes]
        rules += [(t.name, t.pattern) for t in terms.terms]
        self.rules: list[tuple[str | None, re.Pattern[str]]] = [
            (name, re.compile(rf"(?<!\w)(?:{pattern})(?!\w)", re.IGNORECASE))
            for name, pattern in rules
        ]

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        """Same labels and spans as ``KeywordLabeler.predict`` (up to rare overlaps)."""
        predictions: list[Prediction] = []
        for text in texts:
            found: list[tuple[int, int, int, str | None]] = []
            for priority, (name, regex) in enumerate(self.rules):
                for match in regex.finditer(text):
                    found.append((match.start(), priority, match.end(), name))
            found.sort()
            matches: list[dict[str, object]] = []
            position = 0
            for start, _, end, name in found:
                if start < position:
                    continue
                position = end
                if name is not None:
                    matches.append({"term": name, "start": start, "end": end})
            label = PERF if matches else NON_PERF
            predictions.append(Prediction(label, 1.0, {"matches": matches}))
        return predictions

    def predict_first_hit(self, texts: Sequence[str]) -> list[str]:
        """Labels only: stop at the first term that matches (exclusions ignored)."""
        rules = [regex for name, regex in self.rules if name is not None]
        return [PERF if any(r.search(text) for r in rules) else NON_PERF for text in texts]


def best_rate(run: Callable[[], object], count: int, rounds: int) -> float:
    """Messages per second of the fastest of ``rounds`` runs."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return count / best


def scores(labels: Sequence[str], rows: Sequence[Example]) -> dict[str, float]:
    """Precision, recall and F1 of the perf class, accuracy, and the confusion counts."""
    tp = fp = fn = tn = 0
    for label, (_, target) in zip(labels, rows, strict=True):
        flagged = label == PERF
        if flagged and target == 1:
            tp += 1
        elif flagged:
            fp += 1
        elif target == 1:
            fn += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = (tp + tn) / len(rows) if rows else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": accuracy,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def report(name: str, labeler: KeywordLabeler, rows: list[Example], skipped: int) -> None:
    """Print one quality line."""
    s = scores([p.label for p in labeler.predict([m for m, _ in rows])], rows)
    positives = sum(t for _, t in rows)
    note = f", {skipped} row(s) without a 0/1 target skipped" if skipped else ""
    print(
        f"  {name:<10} n={len(rows)} (perf {positives}{note})\n"
        f"             P={s['precision']:.3f} R={s['recall']:.3f} F1={s['f1']:.3f} "
        f"acc={s['accuracy']:.3f}  tp={s['tp']} fp={s['fp']} fn={s['fn']} tn={s['tn']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns a process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (< 3 s)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="data folder")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per labeler")
    parser.add_argument(
        "--version", type=int, default=None, help="a packaged older list (default: the current)"
    )
    args = parser.parse_args(argv)

    data: Path = args.data
    if not (data / "test.jsonl").is_file():
        print(f"no labeled data under {data} (pass --data DIR)", file=sys.stderr)
        return 2

    terms = load_terms() if args.version is None else packaged_terms(args.version)
    labeler = KeywordLabeler(terms)
    naive = NaiveKeywordLabeler(terms)

    corpus: list[str] = []
    for split in ("train", "test", "extra"):
        path = data / f"{split}.jsonl"
        if path.is_file():
            corpus.extend(m for m, _ in read_jsonl(path)[0])
    if args.quick:
        corpus = corpus[:500]
    rounds = args.rounds or (2 if args.quick else 3)
    chars = sum(len(m) for m in corpus)

    ours = labeler.predict(corpus)
    theirs = naive.predict(corpus)
    same_labels = sum(a.label == b.label for a, b in zip(ours, theirs, strict=True))
    same_spans = sum(a.details == b.details for a, b in zip(ours, theirs, strict=True))

    rate = best_rate(lambda: labeler.predict(corpus), len(corpus), rounds)
    naive_rate = best_rate(lambda: naive.predict(corpus), len(corpus), rounds)
    first_hit_rate = best_rate(lambda: naive.predict_first_hit(corpus), len(corpus), rounds)

    print(f"keyword labeler benchmark ({labeler.name}, {len(terms.terms)} terms)")
    print(
        f"  machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{_cpu_count()} CPU(s) visible; single-threaded"
    )
    print(
        f"  corpus: {len(corpus)} messages, {chars / max(1, len(corpus)):.0f} chars on "
        f"average; best of {rounds} round(s)"
    )
    print(f"  combined alternation (predict): {rate:10,.0f} msg/s")
    print(f"  naive per-term, same output:    {naive_rate:10,.0f} msg/s")
    print(f"  naive per-term, first hit only: {first_hit_rate:10,.0f} msg/s  (labels only)")
    print(f"  speed-up vs same-output naive:  {rate / naive_rate:.2f}x")
    print(f"  speed-up vs first-hit naive:    {rate / first_hit_rate:.2f}x")
    print(
        f"  agreement with naive: labels {same_labels}/{len(corpus)}, "
        f"spans {same_spans}/{len(corpus)}"
    )

    print("quality (perf class)")
    test_rows, test_skipped = read_jsonl(data / "test.jsonl")
    report("test.jsonl", labeler, test_rows, test_skipped)
    gold = data / "gold500.csv"
    if gold.is_file():
        gold_rows, gold_skipped = read_gold(gold)
        report("gold500", labeler, gold_rows, gold_skipped)
    return 0


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
