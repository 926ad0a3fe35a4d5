"""Everyday commands on a store the size a real project reaches, against the same
commands on a store ten times smaller measured in the same run.

Usage (from the repository root)::

    python tests/benchmarks/bench_store_scale.py [--quick] [--scale F] [--dir DIR]
        [--json OUT] [--keep]

The full store (``--scale 1``) holds 200,000 commits (messages of 1-4 lines, diffs of
about 1.5 KB, every commit predicted by three labelers), 5,000 OpenCL kernels, 2,000 IR
modules, 20 sets and 50,000 votes by 8 annotators; the baseline store is the same recipe
at a tenth of the size. Both are written with the store's own bulk and batch writers
(``bulk_insert_commits``, ``save_kernel_batch``, ``save_ir_batch``, ``create_set``,
``append_votes``) under ``DIR`` (default ``/tmp/scale``), then every command is run as a
user runs it (``curator ... --db PATH`` in a fresh process, start-up included) and timed;
the app's home screen is opened headless (Textual Pilot) and timed until the set table
shows every set's counts, then until the agreement figures are in. ``chart threshold``
is timed beside the everyday commands: it reads a labeler's scores on one set.

``--quick`` builds 1/100 and 1/1000 of the full size and runs each command once
(seconds): what the test suite runs. Otherwise a command that only reads is timed as
the best of ``--repeat`` runs (3), since other processes share the machine.

This is a benchmark, not a test: the timings are printed, never asserted. Commands that
write (``set create``, ``next``, ``vote``, ``undo``, ``predict``) write to the store they
time, so each run starts from a freshly built store.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from store import Store, open_store  # noqa: E402
from store.bulk import bulk_insert_commits  # noqa: E402
from store.ir import IRModuleRow, save_ir_batch  # noqa: E402
from store.kernel_records import KernelRow  # noqa: E402
from store.kernels import save_kernel_batch  # noqa: E402
from store.records import CommitRow, PredictionRow  # noqa: E402
from store.sets import NewSet, create_set  # noqa: E402
from store.votes import VoteRow, append_votes  # noqa: E402
from tests import raw_sql  # noqa: E402

FULL = {"commits": 200_000, "kernels": 5_000, "ir": 2_000, "votes": 50_000}
SETS = 20
ANNOTATORS = ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal")
LABELERS = ("keyword@5", "heuristics@1", "tfidf-lr@1")
LANGUAGES = ("python", "java", "cpp", "c", "go")
PERF_WORDS = ("cache", "speed", "faster", "latency", "allocation", "vectorize", "memory")
WORDS = (
    "fix",
    "parser",
    "docs",
    "test",
    "lock",
    "refactor",
    "config",
    "update",
    "handle",
    "error",
    "build",
    "option",
    "remove",
    "unused",
    "rename",
    "module",
    "loop",
    "buffer",
    "thread",
    "queue",
    "index",
    "table",
    "reader",
    "writer",
    *PERF_WORDS,
)
HOME_TIMEOUT_S = 300
CURATOR = [str(REPO / ".venv/bin/curator")]
if not Path(CURATOR[0]).exists():
    CURATOR = [sys.executable, "-m", "curator"]


def _message(rng: random.Random) -> str:
    subject = " ".join(rng.choices(WORDS, k=rng.randint(4, 10)))
    body = [" ".join(rng.choices(WORDS, k=rng.randint(6, 14))) for _ in range(rng.randint(0, 3))]
    return "\n\n".join([subject.capitalize(), *body]) if body else subject.capitalize()


def _diff(rng: random.Random, path: str) -> str:
    lines = [f"--- a/{path}", f"+++ b/{path}", "@@ -10,12 +10,14 @@"]
    for _ in range(rng.randint(20, 50)):
        sign = rng.choice(" +-")
        lines.append(sign + "    " + " ".join(rng.choices(WORDS, k=rng.randint(3, 8))))
    return "\n".join(lines)


def _commit(i: int, rng: random.Random) -> CommitRow:
    language = LANGUAGES[i % len(LANGUAGES)]
    path = f"src/mod{i % 300}/file{i % 40}.{language}"
    message = _message(rng)
    diff = _diff(rng, path)
    perf = any(w in message for w in PERF_WORDS)
    predictions = [
        PredictionRow(LABELERS[0], "perf" if perf else "non-perf", 1.0 if perf else 0.0, {}),
        PredictionRow(
            LABELERS[1], "perf" if perf and i % 3 else "non-perf", 0.7, {"fired": ["lf"]}
        ),
        PredictionRow(
            LABELERS[2],
            "perf" if (perf or i % 11 == 0) else "non-perf",
            p := round(rng.random(), 4),
            {"p_perf": p},
        ),
    ]
    return CommitRow(
        source=f"https://github.com/org{i % 40}/repo{i % 400}",
        sha=hashlib.sha1(f"c{i}".encode()).hexdigest(),
        branch="main",
        author_date=f"20{15 + i % 11}-0{1 + i % 9}-1{i % 10}T12:00:00+00:00",
        message=message,
        diff=diff,
        file=path,
        files=[path],
        language=language,
        functions=[f"fn_{i % 97}"],
        code_before="",
        code_after="",
        added=diff.count("\n+"),
        deleted=diff.count("\n-"),
        model_input=f"{message}\n{diff[:400]}",
        function_md5=None,
        diff_hash=hashlib.md5(f"d{i}".encode()).hexdigest(),
        predictions=predictions,
    )


def _kernel(i: int, rng: random.Random) -> KernelRow:
    body = "\n".join(
        f"  out[i] = in[i] * {rng.randint(1, 99)} + {rng.randint(1, 99)};"
        for _ in range(rng.randint(5, 40))
    )
    source = (
        f"__kernel void k{i}(__global float* in, __global float* out) {{\n"
        f"  int i = get_global_id(0);\n{body}\n}}\n"
    )
    accepted = i % 5 != 0
    return KernelRow(
        source=f"https://github.com/gpu{i % 50}/kernels",
        key=f"gpu{i % 50}/kernels:src/k{i}.cl:k{i}",
        source_file=f"src/k{i}.cl",
        kernel_name=f"k{i}",
        origin="cl",
        original_source=source,
        normalized_source=source if accepted else None,
        normalized_hash=hashlib.sha256(source.encode()).hexdigest(),
        shim_needed=False,
        shim_names=[],
        accepted=accepted,
        instructions=rng.randint(20, 400) if accepted else None,
        message=None if accepted else "compile error",
        verdict=None if accepted else "compile-error",
    )


def _ir(i: int, rng: random.Random) -> IRModuleRow:
    text = "\n".join(
        f"define i32 @f{i}_{j}(i32 %x) {{\n  %y = add i32 %x, {j}\n  ret i32 %y\n}}"
        for j in range(rng.randint(10, 60))
    )
    return IRModuleRow(
        source=f"https://github.com/llvm{i % 20}/proj",
        path=f"lib/m{i}.ll",
        language="c",
        structural_hash=hashlib.sha256(f"ir{i}".encode()).hexdigest(),
        input_sha256=hashlib.sha256(text.encode()).hexdigest(),
        input_format="ll",
        compile_command=None,
        project=f"proj{i % 20}",
        license=("MIT", "Apache-2.0", "BSD-3-Clause")[i % 3],
        text=text,
        bitcode=text.encode()[:2000],
        text_bytes=len(text),
        bitcode_bytes=min(len(text), 2000),
        tokens=len(text.split()),
        functions=text.count("define"),
        declarations=0,
        globals=0,
        basic_blocks=text.count("define"),
        instructions=2 * text.count("define"),
        opcodes={"add": text.count("add"), "ret": text.count("ret")},
    )


def build(path: Path, fraction: float) -> dict[str, Any]:
    """A store of ``fraction`` of :data:`FULL` at ``path`` (replaced); what it holds."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    n = {k: max(int(v * fraction), 1) for k, v in FULL.items()}
    rng = random.Random(1)
    started = time.perf_counter()
    with open_store(path) as store:
        bulk_insert_commits(store, (_commit(i, rng) for i in range(n["commits"])), batch=5000)
        for start in range(0, n["kernels"], 1000):
            stop = min(n["kernels"], start + 1000)
            save_kernel_batch(store, [_kernel(i, rng) for i in range(start, stop)])
        for start in range(0, n["ir"], 500):
            save_ir_batch(store, [_ir(i, rng) for i in range(start, min(n["ir"], start + 500))])
        sets = _sets(store, n)
        votes = _votes(store, sets, n["votes"], rng)
    return {**n, "sets": len(sets), "votes": votes, "build_s": time.perf_counter() - started}


def _ids(store: Store, kind: str) -> list[int]:
    return [r[0] for r in raw_sql.query(store, "SELECT id FROM items WHERE kind = ?", (kind,))]


def _sets(store: Store, n: dict[str, int]) -> list[tuple[int, list[int], list[str]]]:
    """20 sets: 17 of commits, 2 of kernels, 1 of IR modules; sizes so that the votes
    cover about two thirds of their items twice."""
    commits, kernels, irs = _ids(store, "commit"), _ids(store, "kernel"), _ids(store, "ir")
    per_set = max(n["votes"] * 3 // (4 * SETS), 4)
    made: list[tuple[int, list[int], list[str]]] = []
    for k in range(SETS):
        kind, pool = ("commit", commits)
        if k in (17, 18):
            kind, pool = ("kernel", kernels)
        elif k == 19:
            kind, pool = ("ir", irs)
        size = min(per_set, len(pool))
        offset = (k * per_set) % max(len(pool) - size, 1)
        members = pool[offset : offset + size]
        labels = ["perf", "non-perf"] if kind == "commit" else ["useful", "not-useful"]
        row = create_set(store, NewSet(name=f"set{k:02d}", kind=kind, labels=labels), members)
        made.append((row.id, members, labels))
    return made


def _votes(
    store: Store, sets: list[tuple[int, list[int], list[str]]], total: int, rng: random.Random
) -> int:
    """About ``total`` votes shared evenly by the sets: two annotators per voted item (the
    first item of each set agreed on, so that every set has a settled item), a quarter of
    each set left to do."""
    quota = max(total // len(sets), 4)
    rows: list[VoteRow] = []
    for set_id, members, labels in sets:
        cast = 0
        for j, item_id in enumerate(members):
            if cast >= quota:
                break
            if j % 4 == 3:
                continue
            a = ANNOTATORS[(item_id + j) % len(ANNOTATORS)]
            b = ANNOTATORS[(item_id + j + 1 + j % 3) % len(ANNOTATORS)]
            first = labels[0] if rng.random() < 0.3 else labels[1]
            agreed = j == 0 or rng.random() < 0.85
            second = first if agreed else labels[0 if first == labels[1] else 1]
            rows.append(VoteRow(item_id, a, first, set_id=set_id))
            rows.append(VoteRow(item_id, b, second, set_id=set_id))
            cast += 2
    for start in range(0, len(rows), 5000):
        append_votes(store, rows[start : start + 5000])
    return len(rows)


def add_new_commits(path: Path, count: int, first: int) -> None:
    """``count`` more commits that ``keyword@5`` has not labeled yet (what predict labels)."""
    rng = random.Random(2)
    rows = []
    for i in range(first, first + count):
        row = _commit(i, rng)
        row.predictions = [p for p in row.predictions if p.labeler != LABELERS[0]]
        rows.append(row)
    with open_store(path) as store:
        bulk_insert_commits(store, rows)


def _cli(db: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [*CURATOR, "--db", str(db), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "160"},
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(
            f"curator {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return seconds, proc.stdout


async def _home(db: Path) -> dict[str, float]:
    from textual.widgets import DataTable

    from curator.tui.app import CuratorApp
    from curator.tui.screens.home import HomeScreen

    app = CuratorApp(db, "ann")
    started = time.perf_counter()
    counts = 0.0
    async with app.run_test(size=(160, 50)):
        while True:
            screen = app.screen
            if isinstance(screen, HomeScreen) and screen.sets:
                table = screen.query_one(DataTable)
                cells = [str(table.get_cell(str(s.id), "items")) for s in screen.sets]
                if all(c not in ("…", "") for c in cells):
                    if not counts:
                        counts = time.perf_counter() - started
                    kappas = [str(table.get_cell(str(s.id), "κ")) for s in screen.sets]
                    if all(k != "…" for k in kappas):
                        break
            if time.perf_counter() - started > HOME_TIMEOUT_S:
                raise SystemExit(f"the home screen did not fill in {HOME_TIMEOUT_S} s")
            await asyncio.sleep(0.005)
        full = time.perf_counter() - started
    return {"home counts": counts, "home agreement": full}


def _best(repeat: int, db: Path, *args: str) -> float:
    """The fastest of ``repeat`` runs of a command that writes nothing."""
    return min(_cli(db, *args)[0] for _ in range(repeat))


def measure(db: Path, tmp: Path, commits: int, new_commits: int, repeat: int) -> dict[str, float]:
    """Seconds per command on the store at ``db`` of ``commits`` commits (which they
    change): the best of ``repeat`` runs for commands that only read, one run for those
    that write; ``set create`` draws 500 items, or a quarter of the commits if fewer."""
    t: dict[str, float] = {}
    t["stats"] = _best(repeat, db, "stats")
    t["stats --kind kernel"] = _best(repeat, db, "stats", "--kind", "kernel")
    t["set list"] = _best(repeat, db, "set", "list")
    t["set show"] = _best(repeat, db, "set", "show", "set03")
    sample = str(min(500, commits // 4))
    t["set create --sample 500 --stratify language,keyword"], _ = _cli(
        db, "set", "create", "drawn", "--sample", sample, "--stratify", "language,keyword"
    )
    t["next --annotator"], out = _cli(db, "next", "set03", "--annotator", "zed", "--json")
    item = (json.loads(out).get("item") or {}).get("id")
    if item is None:
        raise SystemExit(f"next printed no item: {out!r}")
    t["vote"], _ = _cli(db, "vote", str(item), "perf", "--set", "set03", "--annotator", "zed")
    t["undo"], _ = _cli(db, "undo", "--annotator", "zed")
    t["agree"] = _best(repeat, db, "agree", "set03")
    t["adjudicate --json"] = _best(repeat, db, "adjudicate", "set03", "--json")
    t["eval --labeler keyword@latest"] = _best(
        repeat, db, "eval", "set03", "--labeler", "keyword@latest"
    )
    t["chart threshold --labeler tfidf-lr@1"] = _best(
        repeat, db, "chart", "threshold", "--set", "set03", "--labeler", "tfidf-lr@1"
    )
    t["search cache"] = _best(repeat, db, "search", "cache")
    t["search '' --disagree keyword@latest,final --set"] = _best(
        repeat, db, "search", "", "--disagree", "keyword@latest,final", "--set", "set03"
    )
    out_dir = tmp / f"release-{db.stem}"
    shutil.rmtree(out_dir, ignore_errors=True)
    t["export (time only)"], _ = _cli(db, "export", "v1.0.0", "--out", str(out_dir))
    shutil.rmtree(out_dir, ignore_errors=True)
    with open_store(db) as store:
        first = int(raw_sql.scalar(store, "SELECT COUNT(*) FROM items") or 0)
    add_new_commits(db, new_commits, first + 10_000_000)
    t[f"predict --labeler keyword@latest ({new_commits:,} new)"], _ = _cli(
        db, "predict", "--labeler", "keyword@latest"
    )
    homes = [asyncio.run(_home(db)) for _ in range(repeat)]
    for name in homes[0]:
        t[name] = min(h[name] for h in homes)
    return t


def run(fraction: float, directory: Path, keep: bool = False, repeat: int = 3) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    big_db, small_db = directory / "big.db", directory / "small.db"
    big = build(big_db, fraction)
    small = build(small_db, fraction / 10)
    small_t = measure(small_db, directory, small["commits"], 1000, repeat)
    big_t = measure(big_db, directory, big["commits"], 1000, repeat)
    if not keep:
        for db in (big_db, small_db):
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
    rows = {
        name: {"small_s": small_t[name], "big_s": big_t[name], "ratio": big_t[name] / small_t[name]}
        for name in big_t
    }
    return {"big": big, "small": small, "rows": rows}


def print_report(result: dict[str, Any]) -> None:
    big, small = result["big"], result["small"]
    for name, shape in (("store", big), ("baseline (1/10)", small)):
        print(
            f"{name}: {shape['commits']:,} commits, {shape['kernels']:,} kernels,"
            f" {shape['ir']:,} IR modules, {shape['sets']} sets, {shape['votes']:,} votes"
            f" (built in {shape['build_s']:.1f} s)"
        )
    print("| command | baseline (1/10) s | store s | ratio |")
    print("|---|---:|---:|---:|")
    for name, r in result["rows"].items():
        print(f"| {name} | {r['small_s']:.2f} | {r['big_s']:.2f} | {r['ratio']:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/100 of the full size.")
    parser.add_argument("--scale", type=float, default=1.0, help="Fraction of the full size.")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/scale"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="Keep the stores afterwards.")
    parser.add_argument(
        "--repeat", type=int, default=None, help="Runs of each read-only command (3; quick: 1)."
    )
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    result = run(0.01 if args.quick else args.scale, args.dir, args.keep, repeat)
    print_report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
