"""Scale-out: commits/s on a Dask LocalCluster of 1 and 2 workers against the in-process
run, on the same generated repositories reached through file:// URLs.

Every run starts from an empty clone cache and an empty store, so each pays for its
clones, the walk, the filters, keyword labeling, dedup and the writes. The cluster's
start-up (about a second) is reported apart and left out of its rate, as it is paid once
per run however many commits follow.

Besides wall-clock rates, each run's CPU time is taken (this process, the workers and
every git process they waited for): commits per CPU-second is the per-core rate that
``docs/scaling.md`` projects from, and CPU-seconds per wall-second shows how many cores
a run kept busy.

Run ``python tests/benchmarks/bench_cluster.py [--repos 8] [--commits 400] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.commits.cluster import mine_on_cluster  # noqa: E402
from engines.commits.options import MineOptions  # noqa: E402
from engines.commits.pipeline import mine_commits  # noqa: E402
from engines.dask_cluster import dask_client  # noqa: E402
from engines.labelers.keyword import KeywordLabeler  # noqa: E402
from engines.labelers.registry import LabelerSpec  # noqa: E402
from store import open_store  # noqa: E402
from tests.benchmarks.synthetic_repo import build_repository  # noqa: E402

KEYWORD = LabelerSpec("keyword@1", "keyword", "1")
STORED = "SELECT key, dedup_hash FROM items ORDER BY key"


def _stored(db: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(STORED).fetchall()
    finally:
        conn.close()


def cpu_seconds(children: bool = True) -> float:
    """CPU time of this process (and of the children it has waited for, git included)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    if children:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        total += kids.ru_utime + kids.ru_stime
    return total


@dataclass
class Run:
    seconds: float
    cpu: float
    seen: int
    rows: list[tuple[str, str]]
    startup: float = 0.0
    driver_cpu: float | None = None


def in_process(urls: list[str], work: Path) -> Run:
    db = work / "in-process.db"
    cpu, start = cpu_seconds(), time.perf_counter()
    with open_store(db) as store:
        summaries = mine_commits(
            store, urls, MineOptions(), [KeywordLabeler()], clone_dir=work / "cache-in-process"
        )
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    assert not any(s.failed for s in summaries)
    return Run(seconds, cpu, sum(s.seen for s in summaries), _stored(db))


def on_cluster(urls: list[str], work: Path, workers: int, chunk: int) -> Run:
    db = work / f"cluster-{workers}.db"
    began = time.perf_counter()
    with dask_client(workers=workers, dashboard_address=None) as client:
        client.wait_for_workers(workers)
        before = sum(client.run(cpu_seconds).values())
        driver, started = cpu_seconds(children=False), time.perf_counter()
        with open_store(db) as store:
            summaries = mine_on_cluster(
                store,
                urls,
                MineOptions(),
                client,
                [KEYWORD],
                clone_dir=work / f"cache-{workers}",
                chunk=chunk,
            )
        seconds = time.perf_counter() - started
        driver = cpu_seconds(children=False) - driver
        on_workers = sum(client.run(cpu_seconds).values()) - before
    assert not any(s.failed for s in summaries), [s.failed for s in summaries]
    seen = sum(s.seen for s in summaries)
    return Run(seconds, driver + on_workers, seen, _stored(db), started - began, driver)


def run(repos: int, commits: int, multi_file_share: float, chunk: int) -> dict[str, object]:
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        urls = [
            f"file://{build_repository(work / f'r{i}', commits, 12, multi_file_share, i, i + 1)}"
            for i in range(repos)
        ]
        base = in_process(urls, work)
        results = {"in-process": _figures(base)}
        for n in (1, 2):
            run_n = on_cluster(urls, work, n, chunk)
            assert run_n.seen == base.seen and run_n.rows == base.rows, f"{n} worker(s) differ"
            results[f"{n}-worker"] = _figures(run_n, base)
    return {
        "repositories": repos,
        "commits": base.seen,
        "multi_file_share": multi_file_share,
        "stored": len(base.rows),
        "cpu_count": os.cpu_count(),
        "runs": results,
    }


def _figures(run: Run, base: Run | None = None) -> dict[str, float]:
    figures = {
        "seconds": run.seconds,
        "commits_per_s": run.seen / run.seconds,
        "commits_per_cpu_s": run.seen / run.cpu,
        "cores_busy": run.cpu / run.seconds,
    }
    if run.driver_cpu:
        # the driver is the one writer: its rows per CPU-second cap any cluster's rate
        figures["driver_cpu_s"] = run.driver_cpu
        figures["driver_rows_per_cpu_s"] = len(run.rows) / run.driver_cpu
    if base is not None:
        figures["startup_s"] = run.startup
        figures["ratio_vs_in_process"] = base.seconds / run.seconds
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=8)
    parser.add_argument("--commits", type=int, default=400, help="commits per repository")
    parser.add_argument("--multi-file-share", type=float, default=0.6)
    parser.add_argument("--task-commits", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="a short form for CI")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.repos, args.commits = 3, 60
    result = run(args.repos, args.commits, args.multi_file_share, args.task_commits)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{result['repositories']} repositories, {result['commits']} commits in all "
        f"({args.multi_file_share:.0%} touch 2-5 files), {result['stored']} stored; "
        f"{result['cpu_count']} CPUs"
    )
    for name, r in result["runs"].items():  # type: ignore[union-attr]
        extra = ""
        if "ratio_vs_in_process" in r:
            ratio, startup = r["ratio_vs_in_process"], r["startup_s"]
            extra = f"  {ratio:.2f}x in-process (start-up {startup:.1f} s)"
            extra += f", driver {r['driver_rows_per_cpu_s']:,.0f} rows/CPU-s"
        print(
            f"  {name:<11} {r['commits_per_s']:7.1f} commits/s {r['seconds']:6.2f} s"
            f" {r['commits_per_cpu_s']:6.1f} commits/CPU-s {r['cores_busy']:4.2f} cores busy{extra}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
