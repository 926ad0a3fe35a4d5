"""`curator predict`'s store side: predictions written per second over a large store.

Usage (from the repository root)::

    python tests/benchmarks/bench_predict_store.py [--quick] [--items N] [--json OUT]

A synthetic store of ``N`` commits (default 1,000,000; short generated messages) is
written with the bulk loader, then :func:`curator.prediction.predict_items` runs over all
of it with a labeler that costs nothing (a fixed verdict from each text's length), so
what is timed is the store layer: finding the items not yet labeled, reading their texts
and writing the predictions, one transaction per chunk. In the same run, on a copy of the
same store, the baseline is the path before batched writes: chunks of 512 items, each
read with ``commit_texts`` and written with ``add_predictions``.

This is a benchmark, not a test: the fake labeler stands in for the student only to
measure the write path (the student's own rate is ``bench_student.py``'s).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from curator.prediction import PredictSummary, items_to_predict, predict_items  # noqa: E402
from engines.labelers.base import NON_PERF, PERF, Prediction  # noqa: E402
from engines.labelers.storing import predict_stored  # noqa: E402
from store import Store, open_store  # noqa: E402
from store.bulk import bulk_insert_commits  # noqa: E402
from store.connection import utc_now  # noqa: E402
from store.labeling_inputs import commit_item_ids  # noqa: E402
from tests import raw_sql  # noqa: E402
from tests.synthetic_commits import WORDS, minimal_commit  # noqa: E402


class InstantLabeler:
    """A labeler that costs nothing: perf when the text has an even length."""

    name = "instant@1"
    input_field = "message"

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        perf = Prediction(PERF, 0.9, {"p_perf": 0.9})
        other = Prediction(NON_PERF, 0.8, {"p_perf": 0.2})
        return [perf if len(t) % 2 == 0 else other for t in texts]


def build(path: Path, n: int) -> Path:
    """A store of ``n`` synthetic commits (the search triggers dropped: predict does not
    read the index, and the build is then quicker)."""
    rng = random.Random(0)
    with open_store(path) as store:
        conn = raw_sql.connection(store)
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            conn.execute(f"DROP TRIGGER [{name}]")
        rows = (
            minimal_commit(
                i,
                " ".join(rng.choices(WORDS, k=rng.randint(4, 14))),
                source=f"https://example.org/r{i % 997}",
                file=f"src/m{i % 50}.py",
            )
            for i in range(n)
        )
        bulk_insert_commits(store, rows, batch=20_000)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def old_predict(store: Store, labeler: InstantLabeler, todo: Sequence[int]) -> Counter[str]:
    """The write path before batched reads and writes: chunks of 512."""
    labels: Counter[str] = Counter()
    for start in range(0, len(todo), 512):
        chunk = list(todo[start : start + 512])
        found = predict_stored(store, labeler, chunk)
        stamp = utc_now()
        with store.transaction() as conn:  # add_predictions as it was: dumps per row
            conn.executemany(
                "INSERT INTO predictions (item_id, labeler, label, score, details, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        i,
                        labeler.name,
                        v.label,
                        v.score,
                        json.dumps(v.details, sort_keys=True),
                        stamp,
                    )
                    for i, v in found
                ],
            )
        labels.update(v.label for _, v in found)
    return labels


def _copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def run(n: int) -> dict[str, Any]:
    labeler = InstantLabeler()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        base = build(Path(tmp) / "base.db", n)
        build_s = time.perf_counter() - started
        rows: dict[str, dict[str, Any]] = {}

        with open_store(_copy(base, Path(tmp) / "old.db")) as store:
            started = time.perf_counter()
            ids = commit_item_ids(store)
            todo, _ = items_to_predict(store, labeler, ids)
            old_labels = old_predict(store, labeler, todo)
            seconds = time.perf_counter() - started
        rows["chunks of 512 (before)"] = {"seconds": seconds, "per_s": n / seconds}

        with open_store(_copy(base, Path(tmp) / "new.db")) as store:
            started = time.perf_counter()
            ids = commit_item_ids(store)
            todo, done = items_to_predict(store, labeler, ids)
            summary = predict_items(store, labeler, todo, PredictSummary(labeler.name, n, done))
            seconds = time.perf_counter() - started
            written = raw_sql.scalar(store, "SELECT COUNT(*) FROM predictions")
        rows["curator predict_items"] = {"seconds": seconds, "per_s": n / seconds}
        if summary.labels != old_labels or written != n:
            raise SystemExit(f"the two paths disagree: {summary.labels} vs {old_labels}")
    base_rate = rows["chunks of 512 (before)"]["per_s"]
    for row in rows.values():
        row["vs_before"] = row["per_s"] / base_rate
    return {"items": n, "build_s": build_s, "rows": rows}


def print_report(result: dict[str, Any]) -> None:
    print(f"store: {result['items']:,} synthetic commits (built in {result['build_s']:.1f} s)")
    print("| path | seconds | predictions written/s | vs before |")
    print("|---|---:|---:|---:|")
    for name, r in result["rows"].items():
        print(f"| {name} | {r['seconds']:.2f} | {r['per_s']:,.0f} | {r['vs_before']:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 commits.")
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(20_000 if args.quick else args.items)
    print_report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
