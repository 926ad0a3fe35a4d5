"""A stored active-learning simulation with fixed numbers (the shape of the benchmark's
result in docs/benchmarks.md), for the chart and screen snapshots."""

from __future__ import annotations

from store import Store
from store.simulations import SimulationRow, record_simulation

VOTES = [10, 30, 50, 70, 90, 110, 150, 210, 250, 310, 350, 410]
CURVES = {
    "rerank": [0.679, 0.718, 0.723, 0.725, 0.778, 0.788, 0.799, 0.815, 0.824, 0.84, 0.848, 0.847],
    "fixed": [0.679, 0.718, 0.632, 0.626, 0.653, 0.658, 0.729, 0.778, 0.779, 0.787, 0.791, 0.809],
    "random": [0.679, 0.727, 0.738, 0.757, 0.758, 0.737, 0.756, 0.782, 0.776, 0.792, 0.802, 0.814],
}


def store_fixed_simulation(store: Store) -> SimulationRow:
    return record_simulation(
        store,
        "active-learning",
        "train.jsonl",
        "test.jsonl",
        {"votes": 400, "every": 20, "seeds": 3, "seed_votes": 10, "positive": "perf"},
        {
            "curves": {
                k: [[n, f1] for n, f1 in zip(VOTES, v, strict=True)] for k, v in CURVES.items()
            },
            "mean_rerank_s": 2.9,
            "seconds": 600.0,
        },
        now="2026-11-24T12:00:00+00:00",
    )
