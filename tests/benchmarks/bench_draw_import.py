"""``audit draw``, ``set split``, ``predict SET`` (every member already predicted) and
``import items`` on the 200,000-commit store of ``bench_store_scale.py``, timed as a
user runs them; with ``--baseline DIR`` (a checkout of an earlier commit, e.g.
``git archive OLD | tar -x -C DIR``) the same commands run with that tree's code on a
copy of the same store in the same run, and the sets each drew are compared.

Usage (from the repository root)::

    python tests/benchmarks/bench_draw_import.py [--quick] [--scale F] [--dir DIR]
        [--baseline DIR] [--import-mb N]

``--quick`` builds 1/100 of the store (seconds). ``import items`` reads a generated JSONL
file of ``--import-mb`` MB (commits of about 8 KB) and its peak RSS is reported beside
its time. This is a benchmark: the timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.benchmarks.bench_store_scale import build  # noqa: E402

PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])\n"
)
CLI = "import sys; sys.argv[0] = 'curator'; from curator.cli import main; sys.exit(main())"
DRAWN = ("audited", "audited-unvoted", "part-a", "part-b", "part-c", "eighth")


def _run(tree: Path, db: Path, *args: str) -> tuple[float, int]:
    """Seconds and peak RSS (KiB) of ``curator ARGS`` with ``tree``'s code."""
    command = [sys.executable, "-c", PEAK, sys.executable, "-c", CLI, "--db", str(db), *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    seconds = time.perf_counter() - started
    code, peak = done.stdout.split()
    if code != "0":
        raise SystemExit(f"curator {' '.join(args)} ({tree}) failed:\n{done.stderr}")
    return seconds, int(peak)


def _items_file(path: Path, megabytes: int) -> Path:
    with path.open("w") as fh:
        for i in range(megabytes * 128):
            diff = "".join(f"+line {i} {j} {'x' * 70}\n" for j in range(100))
            fh.write(json.dumps({"id": f"imp{i}", "message": f"speed up {i}", "diff": diff}))
            fh.write("\n")
    return path


def measure(tree: Path, db: Path, commits: int, items: Path) -> dict[str, tuple[float, int]]:
    t: dict[str, tuple[float, int]] = {}
    t["audit draw --stratify language,keyword"] = _run(
        tree, db, "audit", "draw", "audited", "--from-labeler", "keyword@latest",
        "--stratify", "language,keyword", "--seed", "1",
    )  # fmt: skip
    t["audit draw --unlabeled --stratify repo"] = _run(
        tree, db, "audit", "draw", "audited-unvoted", "--from-labeler", "tfidf-lr@1",
        "--stratify", "repo", "--unlabeled", "--seed", "2",
    )  # fmt: skip
    t["set split --into 10,10,80"] = _run(
        tree, db, "set", "split", "--into", "part-a:10,part-b:10,part-c:80", "--seed", "1"
    )
    _run(tree, db, "set", "create", "eighth", "--sample", str(max(commits // 8, 1)), "--seed", "3")
    t["predict SET (1/8 of the commits, all predicted)"] = _run(
        tree, db, "predict", "eighth", "--labeler", "keyword@latest"
    )
    t[f"import items ({items.stat().st_size / 2**20:.0f} MB JSONL)"] = _run(
        tree, db, "import", "items", str(items)
    )
    return t


def members(db: Path) -> dict[str, list[int]]:
    """The members of each set the commands drew, in set order."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.name, si.item_id FROM sets AS s JOIN set_items AS si ON si.set_id = s.id"
            f" WHERE s.name IN ({','.join('?' * len(DRAWN))}) ORDER BY s.name, si.position",
            DRAWN,
        ).fetchall()
    found: dict[str, list[int]] = {}
    for name, item in rows:
        found.setdefault(name, []).append(item)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/100 of the full size.")
    parser.add_argument("--scale", type=float, default=1.0, help="Fraction of the full size.")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/draw-bench"))
    parser.add_argument("--baseline", type=Path, default=None, help="An earlier tree to compare.")
    parser.add_argument("--import-mb", type=int, default=40)
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    built = args.dir / "built.db"
    shape = build(built, 0.01 if args.quick else args.scale)
    items = _items_file(args.dir / "items.jsonl", 2 if args.quick else args.import_mb)
    trees = {"now": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    timings, drawn = {}, {}
    for name, tree in trees.items():
        db = args.dir / f"{name}.db"
        shutil.copyfile(built, db)
        timings[name] = measure(tree, db, shape["commits"], items)
        drawn[name] = members(db)
        db.unlink()
    print(f"store: {shape['commits']:,} commits (peak RSS: of each command's process)")
    print("| command | " + " | ".join(f"{n} s | {n} peak MB" for n in timings) + " |")
    print("|---|" + "---:|---:|" * len(timings))
    for command in timings["now"]:
        cells = [f"{t[command][0]:.2f} | {t[command][1] / 1024:.0f}" for t in timings.values()]
        print(f"| {command} | " + " | ".join(cells) + " |")
    if "baseline" in drawn:
        same = drawn["now"] == drawn["baseline"]
        print(f"sets drawn ({', '.join(DRAWN)}): {'the same' if same else 'DIFFERENT'} members")
    built.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(built) + suffix).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
