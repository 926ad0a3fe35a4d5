"""Release throughput: commit records exported per second, against a baseline measured in
the same run, and the export's peak memory as the record count grows.

* ``curator``: :func:`curator.releases.export.export_release` on the whole store (stream in
  key order, build records with labels, canonical JSON, sha256 while writing, schema,
  datasheet, manifest, atomic rename);
* ``naive``: ``SELECT *`` of items joined to commits fetched all at once, then
  ``json.dumps`` per row into one file (no labels, no order, no checksum, no datasheet);
* ``validate``: :func:`curator.releases.validate.validate_release` on the release.

The store is synthetic commits (``tests/release_data.py``) bulk-loaded with one
``executemany`` per batch. With ``--memory`` each export also runs alone in a child
process at N/10 and N records, and how far its peak resident memory rises above
the process's size before the export started is reported: flat memory
means the curator growth stays the same from N/10 to N while the naive one grows
with N.

Run ``python tests/benchmarks/bench_release.py [--records N] [--memory] [--quick]``;
the long form is ``--records 1000000 --memory``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from curator.releases.export import ExportOptions, export_release  # noqa: E402
from curator.releases.validate import validate_release  # noqa: E402
from store import Store, open_store  # noqa: E402
from store.bulk import bulk_insert_commits  # noqa: E402
from tests import raw_sql  # noqa: E402
from tests.release_data import commit_rows  # noqa: E402


def build(db: Path, records: int) -> float:
    """A store of ``records`` synthetic commits over 200 repositories; seconds taken."""
    start = time.perf_counter()
    with open_store(db) as store:
        bulk_insert_commits(store, commit_rows(records, repos=200, diff_lines=6))
    return time.perf_counter() - start


def naive_export(store: Store, out: Path) -> int:
    rows = (
        raw_sql.connection(store)
        .execute(
            "SELECT * FROM items AS i JOIN commits AS c ON c.item_id = i.id WHERE i.kind = 'commit'"
        )
        .fetchall()
    )
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(dict(row)) + "\n")
    return len(rows)


def _timed(work: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = work()
    return value, time.perf_counter() - start


def child_growth(db: Path, out: Path, how: str) -> int:
    """How far (KiB) one export run alone in a fresh process raises its peak resident
    memory above what it held once imports were done and the store was open."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", how, str(db), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    before, peak = (int(x) for x in proc.stdout.split()[-2:])
    return peak - before


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    """Start the peak (VmHWM) afresh: imports may have peaked higher than the export."""
    Path("/proc/self/clear_refs").write_text("5")


def run(records: int, memory: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        root = Path(tmp)
        db = root / "store.db"
        result: dict[str, Any] = {"records": records, "build_s": round(build(db, records), 2)}
        with open_store(db) as store:
            naive, naive_s = _timed(lambda: naive_export(store, root / "naive.jsonl"))
            ours, ours_s = _timed(lambda: export_release(store, root, ExportOptions("bench")))
        report, validate_s = _timed(lambda: validate_release(root / "bench"))
        assert naive == ours.records == records and report.ok, report.problems[:3]
        result["records_per_s"] = {
            "curator": round(records / ours_s),
            "naive": round(records / naive_s),
            "validate": round(records / validate_s),
        }
        result["ratio_vs_naive"] = round(naive_s / ours_s, 3)
        result["release_bytes"] = sum(e["bytes"] for e in ours.manifest["files"].values())
        if memory:
            small = max(1, records // 10)
            small_db = root / "small.db"
            build(small_db, small)
            result["peak_growth_kib"] = {
                f"curator@{small}": child_growth(small_db, root / "m1", "curator"),
                f"curator@{records}": child_growth(db, root / "m2", "curator"),
                f"naive@{small}": child_growth(small_db, root / "m3.jsonl", "naive"),
                f"naive@{records}": child_growth(db, root / "m4.jsonl", "naive"),
            }
        result["machine"] = f"{platform.machine()}, Python {platform.python_version()}"
        return result


def _child(how: str, db: Path, out: Path) -> None:
    with open_store(db) as store:
        _reset_peak()
        before = _status_kib("VmRSS")
        if how == "naive":
            naive_export(store, out)
        else:
            export_release(store, out, ExportOptions("mem"))
        print(before, _status_kib("VmHWM"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--memory", action="store_true", help="Peak memory at N/10 and N.")
    parser.add_argument("--quick", action="store_true", help="2,000 records, no memory runs.")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("HOW", "DB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return 0
    result = run(2_000 if args.quick else args.records, args.memory and not args.quick)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['records']} synthetic commit records ({result['machine']})")
    for name, rate in result["records_per_s"].items():
        print(f"  {name:<9} {rate:>10,} records/s")
    print(f"  speed-up vs naive SELECT * + json.dumps = {result['ratio_vs_naive']:.2f}x")
    for name, kib in result.get("peak_growth_kib", {}).items():
        print(f"  peak memory growth {name:<16} {kib / 1024:8.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
