"""Mining throughput: ``curator mine commits`` against plain PyDriller loops.

Both run on the same generated history in the same process and run. Baselines:

* ``pydriller-visit``: traverse every commit and read each modified file's diff;
* ``pydriller-filter``: the same loop doing the miner's job the obvious way (count
  modified files, then ``changed_methods`` on single-file commits).

Run ``python tests/benchmarks/bench_mining.py [--commits N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydriller import Repository  # noqa: E402

from engines.commits.languages import language_of  # noqa: E402
from engines.commits.options import MineOptions  # noqa: E402
from engines.commits.pipeline import mine_commits  # noqa: E402
from engines.labelers.keyword import KeywordLabeler  # noqa: E402
from store import open_store  # noqa: E402
from tests.benchmarks.synthetic_repo import build_repository  # noqa: E402


def pydriller_visit(path: Path) -> int:
    seen = 0
    for commit in Repository(str(path), only_no_merge=True).traverse_commits():
        for m in commit.modified_files:
            _ = m.diff
        seen += 1
    return seen


def pydriller_filter(path: Path) -> int:
    kept = 0
    for commit in Repository(str(path), only_no_merge=True).traverse_commits():
        files = commit.modified_files
        if len(files) != 1 or language_of(files[0].new_path or files[0].old_path or "") is None:
            continue
        if len(files[0].changed_methods) == 1:
            kept += 1
    return kept


def curator_mine(path: Path, db: Path) -> int:
    with open_store(db) as store:
        (summary,) = mine_commits(store, [str(path)], MineOptions(), [KeywordLabeler()])
    return summary.stored


def timed(fn, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def run(commits: int, multi_file_share: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_repository(Path(tmp) / "repo", commits, multi_file_share=multi_file_share)
        total = commits + 1
        visited, t_visit = timed(pydriller_visit, repo)
        kept, t_filter = timed(pydriller_filter, repo)
        stored, t_curator = timed(curator_mine, repo, Path(tmp) / "bench.db")
    assert visited == total
    rates = {
        "curator": total / t_curator,
        "pydriller-visit": total / t_visit,
        "pydriller-filter": total / t_filter,
    }
    return {
        "commits": total,
        "multi_file_share": multi_file_share,
        "kept_by_plain_filter": kept,
        "stored_by_curator": stored,
        "seconds": {"curator": t_curator, "pydriller-visit": t_visit, "pydriller-filter": t_filter},
        "commits_per_s": rates,
        "ratio_vs_visit": rates["curator"] / rates["pydriller-visit"],
        "ratio_vs_filter": rates["curator"] / rates["pydriller-filter"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--multi-file-share", type=float, default=0.8)
    parser.add_argument("--quick", action="store_true", help="a short form for CI (200 commits)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(200 if args.quick else args.commits, args.multi_file_share)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"history: {result['commits']} commits, {args.multi_file_share:.0%} touch 2-5 files")
    for name, rate in result["commits_per_s"].items():  # type: ignore[union-attr]
        print(f"  {name:<17} {rate:8.1f} commits/s")
    print(f"  curator / pydriller-visit  = {result['ratio_vs_visit']:.2f}x")
    print(f"  curator / pydriller-filter = {result['ratio_vs_filter']:.2f}x")
    print(
        f"  kept: curator stored {result['stored_by_curator']}, "
        f"the plain filter loop kept {result['kept_by_plain_filter']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
