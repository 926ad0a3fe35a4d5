"""Active learning with a simulated annotator: F1 on a held-out test set against the
number of votes, for three ways of ordering the queue.

The pool (``train.jsonl`` of the PerfCurator authors' labeled commit messages, read
from ``--data``, never copied into the project) is simulated by
:mod:`curator.al_simulation` (the code behind ``curator simulate active-learning``):
one set in a fresh store per order and seed; the simulated annotator votes each item's
true label, K at a time, taking the queue in order:

- ``rerank``: the app's loop: after every K votes, ``curator.active_learning.
  rerank_queue`` refits the in-loop model on the votes so far and re-ranks the queue
  (here the whole pool: the window is the pool's size), most uncertain first;
- ``fixed``: ordered once by the uncertainty of the in-loop model fitted on the seed
  votes (what ``set create --prefer uncertain`` does with a labeler), never re-ranked;
- ``random``: the pool in a seeded random order.

All three start from the same random seed votes. After every K votes the in-loop model
is fitted on all votes and scored on ``test.jsonl`` (F1 of the perf class); the table
is the mean over ``--seeds`` seeds. With ``--store DB`` the result is also kept in that
store, where the app's Train screen draws it.

    python tests/benchmarks/bench_active_learning.py [--data DIR] [--votes 400] [--every 20]
        [--seeds 3] [--store curator.db]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curator.al_simulation import (  # noqa: E402
    SimulationRequest,
    labeled_from_file,
    simulate,
    store_result,
)
from store import open_store  # noqa: E402

DATA = Path("/work/shared/data/perf-commit-messages")
# One row of train.jsonl has target 9; the benchmark has always counted every target
# but 1 as non-perf.
PERF_CURATOR = {"1": "perf", "0": "non-perf", "9": "non-perf"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--votes", type=int, default=400)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--store", type=Path, help="also keep the result in this store")
    args = parser.parse_args()
    if not (args.data / "train.jsonl").is_file() or not (args.data / "test.jsonl").is_file():
        sys.exit(f"error: {args.data}: no train.jsonl and test.jsonl here (give --data DIR)")
    pool, test = (
        labeled_from_file(args.data / name, "target", PERF_CURATOR, "commit_message")
        for name in ("train.jsonl", "test.jsonl")
    )
    request = SimulationRequest(pool, test, "perf", args.votes, args.every, args.seeds)
    result = simulate(
        request, lambda what, done, total: print(f"{what} ({done}/{total})", file=sys.stderr)
    )
    report: dict[str, object] = {"pool": len(pool), "test": len(test), "every": args.every}
    for strategy, points in result.curves.items():
        report[strategy] = {"f1_by_votes": points}
    report["mean_rerank_s"] = result.rerank_s
    report["seconds"] = result.seconds
    if args.store is not None:
        with open_store(args.store) as store:
            row = store_result(store, "train.jsonl", "test.jsonl", request, result)
        report["stored"] = f"simulation #{row.id} in {args.store}"
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
