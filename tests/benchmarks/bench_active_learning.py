"""Active learning with a simulated annotator: F1 on a held-out test set against the
number of votes, for three ways of ordering the queue.

The pool (``train.jsonl`` of the PerfCurator authors' labeled commit messages, read
from ``--data``, never copied into the project) becomes one set in a fresh store per
strategy; the simulated annotator votes each item's true label, K at a time, taking the
queue in order:

- ``rerank``: the app's loop: after every K votes, ``curator.active_learning.
  rerank_queue`` refits the in-loop model on the votes so far and re-ranks the queue
  (here the whole pool: the window is the pool's size), most uncertain first;
- ``fixed``: ordered once by the uncertainty of the in-loop model fitted on the seed
  votes (what ``set create --prefer uncertain`` does with a labeler), never re-ranked;
- ``random``: the pool in a seeded random order.

All three start from the same random seed votes. After every K votes the in-loop model
is fitted on all votes and scored on ``test.jsonl`` (F1 of the perf class); the table
is the mean over ``--seeds`` seeds.

    python tests/benchmarks/bench_active_learning.py [--data DIR] [--votes 400] [--every 20]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curator.active_learning import rerank_queue, training_labels  # noqa: E402
from engines.labelers.inloop import fit_inloop  # noqa: E402
from store import Store, open_store  # noqa: E402
from store.items import ImportedItem, insert_imported_items  # noqa: E402
from store.reranking import unvoted_after  # noqa: E402
from store.sets import NewSet, SetRow, create_set  # noqa: E402
from store.votes import VoteRow, append_votes  # noqa: E402

DATA = Path("/work/shared/data/perf-commit-messages")
STRATEGIES = ("rerank", "fixed", "random")
SEED_VOTES = 10


def load(path: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [
        (str(r["commit_message"]), "perf" if int(r["target"]) == 1 else "non-perf") for r in rows
    ]


def f1(store: Store, set_row: SetRow, texts: dict[int, str], test: list[tuple[str, str]]) -> float:
    labels = training_labels(store, set_row)
    model = fit_inloop([texts[i] for i in labels], list(labels.values()), "perf")
    if model is None:
        return 0.0
    predicted = [p >= 0.5 for p in model.p_positive([t for t, _ in test])]
    truth = [label == "perf" for _, label in test]
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    fp = sum(p and not t for p, t in zip(predicted, truth, strict=True))
    fn = sum(t and not p for p, t in zip(predicted, truth, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def run(
    strategy: str,
    pool: list[tuple[str, str]],
    test: list[tuple[str, str]],
    votes: int,
    every: int,
    seed: int,
    folder: Path,
) -> dict[str, object]:
    """One strategy's curve: [(votes, F1)], and the re-ranks' mean time."""
    rng = random.Random(seed)
    order = list(range(len(pool)))
    rng.shuffle(order)
    seed_items, rest = order[:SEED_VOTES], order[SEED_VOTES:]
    db = folder / f"{strategy}-{seed}.db"
    with open_store(db) as store:
        stored = insert_imported_items(
            store,
            [
                ImportedItem(
                    "commit", f"p{i}", "pool", None, None, {"message": t, "model_input": t}, {}
                )
                for i, (t, _) in enumerate(pool)
            ],
        )
        ids = [item_id for _, item_id in stored]
        truth = {ids[i]: pool[i][1] for i in range(len(pool))}
        texts = {ids[i]: pool[i][0] for i in range(len(pool))}
        if strategy == "fixed":
            seeded = fit_inloop(
                [pool[i][0] for i in seed_items], [pool[i][1] for i in seed_items], "perf"
            )
            assert seeded is not None, "the seed votes hold one label only: use another seed"
            unsure = seeded.uncertainty([pool[i][0] for i in rest])
            rest = [i for _, i in sorted(zip(unsure, rest, strict=True), key=lambda p: -p[0])]
        set_row = create_set(
            store,
            NewSet(
                name="pool",
                kind="commit",
                labels=["perf", "non-perf"],
                params={"rerank_every": every},
            ),
            [ids[i] for i in seed_items + rest],
        )
        append_votes(
            store, [VoteRow(ids[i], "sim", truth[ids[i]], set_id=set_row.id) for i in seed_items]
        )
        curve = [(SEED_VOTES, f1(store, set_row, texts, test))]
        seconds: list[float] = []
        done = SEED_VOTES
        while done < votes:
            if strategy == "rerank":
                result = rerank_queue(store, set_row, -1, window=len(pool))
                if result is not None:
                    seconds.append(result.seconds)
            batch = unvoted_after(store, set_row.id, -1, every)
            append_votes(store, [VoteRow(i, "sim", truth[i], set_id=set_row.id) for _, i in batch])
            done += len(batch)
            curve.append((done, f1(store, set_row, texts, test)))
    return {"curve": curve, "rerank_s": statistics.mean(seconds) if seconds else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--votes", type=int, default=400)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if not (args.data / "train.jsonl").is_file() or not (args.data / "test.jsonl").is_file():
        sys.exit(f"error: {args.data}: no train.jsonl and test.jsonl here (give --data DIR)")
    pool, test = load(args.data / "train.jsonl"), load(args.data / "test.jsonl")
    report: dict[str, object] = {"pool": len(pool), "test": len(test), "every": args.every}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for strategy in STRATEGIES:
            runs = [
                run(strategy, pool, test, args.votes, args.every, seed, Path(tmp))
                for seed in range(args.seeds)
            ]
            curves = [r["curve"] for r in runs]
            points = [
                (curves[0][k][0], round(statistics.mean(c[k][1] for c in curves), 3))  # type: ignore[index]
                for k in range(len(curves[0]))  # type: ignore[arg-type]
            ]
            times = [r["rerank_s"] for r in runs if r["rerank_s"] is not None]
            report[strategy] = {
                "f1_by_votes": points,
                "mean_rerank_s": round(statistics.mean(times), 3) if times else None,  # type: ignore[arg-type]
            }
    report["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
