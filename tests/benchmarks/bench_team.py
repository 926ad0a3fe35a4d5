"""The home screen's figures and routing's next item on a set of N items (1,000,000 by
default), before and after the per-set counters.

Builds (once, cached under build/) a store whose one routed set holds N commit items,
votes_per_item 2, the first 30% voted twice by three annotators taking turns (one item
in ten in disagreement: a conflict). Then measures, through the app's own service:

- home before: the per-set figures as the home screen computed them until now (every
  decision of the set recomputed from the live votes, agreement, the annotator's count);
- home after: the same figures from the counters (``CurationService.counts``);
- agreement: kappa and alpha, which the home screen now fills in afterwards;
- next: routing's next item for a fourth annotator (claim included), and claim + vote.

    python tests/benchmarks/bench_team.py [--items N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotation.adjudication import decisions_for_set, summary  # noqa: E402
from annotation.routing import serve_next, submit  # noqa: E402
from annotation.set_reports import agreement_for_set  # noqa: E402
from curator.tui.service import CurationService  # noqa: E402
from store import Store, open_store  # noqa: E402
from store.item_views import annotator_votes_in_set  # noqa: E402
from store.items import ImportedItem, insert_imported_items  # noqa: E402
from store.sets import NewSet, SetRow, create_set, get_set, set_progress  # noqa: E402
from store.votes import VoteRow, append_votes  # noqa: E402

TEAM = ("ann", "ben", "cat")
CHUNK = 50_000


def build(path: Path, n: int) -> Path:
    if path.exists():
        return path
    tmp = path.with_suffix(".building")
    for leftover in tmp.parent.glob(tmp.name + "*"):
        leftover.unlink()
    with open_store(tmp) as store:
        ids: list[int] = []
        for start in range(0, n, CHUNK):
            items = [
                ImportedItem(
                    kind="commit",
                    key=f"{i:040x}",
                    source=f"https://example.org/r{i % 997}",
                    language=("python", "java", "cpp")[i % 3],
                    path=None,
                    payload={"message": f"Change {i}: avoid a copy", "model_input": f"c {i}"},
                    provenance={},
                )
                for i in range(start, min(n, start + CHUNK))
            ]
            ids.extend(item_id for _, item_id in insert_imported_items(store, items))
        set_row = create_set(
            store, NewSet(name="big", kind="commit", labels=["perf", "non-perf"]), ids
        )
        voted = ids[: int(n * 0.3)]
        for start in range(0, len(voted), CHUNK):
            rows = []
            for k, item_id in enumerate(voted[start : start + CHUNK], start=start):
                a, b = TEAM[k % 3], TEAM[(k + 1) % 3]
                label = "perf" if k % 4 == 0 else "non-perf"
                other = label if k % 10 else ("non-perf" if label == "perf" else "perf")
                rows.append(VoteRow(item_id, a, label, set_id=set_row.id))
                rows.append(VoteRow(item_id, b, other, set_id=set_row.id))
            append_votes(store, rows)
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(tmp) + suffix)
        if src.exists():
            src.replace(Path(str(path) + suffix))
    return path


def figures_before(store: Store, set_row: SetRow, annotator: str) -> dict[str, int]:
    """The home screen's per-set figures as computed before the counters (agreement
    included: the old home screen showed nothing for a set until all were ready)."""
    agreement_for_set(store, set_row)
    progress = set_progress(store, set_row.id)
    decisions = decisions_for_set(store, set_row)
    counts = summary(decisions)
    mine = annotator_votes_in_set(store, set_row.id, annotator)
    return {
        "items": progress["items"],
        "voted_items": progress["voted_items"],
        "settled": sum(1 for d in decisions if d.settled),
        "conflicts": counts["conflict"],
        "mine": mine,
    }


def ms(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples) * 1000, 3),
        "p95_ms": round(sorted(samples)[int(0.95 * (len(samples) - 1))] * 1000, 3),
    }


def measure(db: Path, rounds: int, nexts: int) -> dict[str, object]:
    result: dict[str, object] = {}
    with open_store(db) as store:
        set_row = get_set(store, "big")
        assert set_row is not None
        before: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            old = figures_before(store, set_row, "ann")
            before.append(time.perf_counter() - t0)
    service = CurationService(db, "ann")
    try:
        after: list[float] = []
        for _ in range(rounds * 5):
            t0 = time.perf_counter()
            new = service.counts(set_row)
            after.append(time.perf_counter() - t0)
        assert (new.items, new.voted_items, new.settled, new.conflicts, new.mine) == (
            old["items"],
            old["voted_items"],
            old["settled"],
            old["conflicts"],
            old["mine"],
        ), (new, old)
        t0 = time.perf_counter()
        full = service.overview(set_row)
        agreement_s = time.perf_counter() - t0
    finally:
        service.close()
    result["home_before"] = ms(before)
    result["home_after"] = ms(after)
    result["home_speedup"] = round(statistics.median(before) / statistics.median(after), 1)
    result["agreement_in_background_s"] = round(agreement_s, 2)
    result["kappa"] = round(full.kappa or 0.0, 3)
    serve_times: list[float] = []
    cycle_times: list[float] = []
    with open_store(db) as store:
        for _ in range(nexts):
            t0 = time.perf_counter()
            served = serve_next(store, set_row, "dan")
            t1 = time.perf_counter()
            assert served is not None
            submit(store, set_row, served.entry.item_id, "dan", "perf")
            t2 = time.perf_counter()
            serve_times.append(t1 - t0)
            cycle_times.append(t2 - t0)
    result["next_routed"] = ms(serve_times)
    result["next_and_vote_routed"] = ms(cycle_times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="20,000 items, few samples")
    parser.add_argument("--rounds", type=int, default=5, help="timings of the old figures")
    args = parser.parse_args()
    n = 20_000 if args.quick else args.items
    db = ROOT / "build" / f"bench-team-{n}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    build(db, n)
    result: dict[str, object] = {"items": n, "build_s": round(time.perf_counter() - t0, 1)}
    result.update(measure(db, 3 if args.quick else args.rounds, 20 if args.quick else 200))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
