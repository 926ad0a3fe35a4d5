"""Labelers on commits of another source, driven through the CLI as a new user would.

Usage (from the repository root, after ``make demo``)::

    python scripts/cross_source_texts.py --clones DIR --out build/cross_source
    python tests/benchmarks/accuracy_cross_source.py --cross build/cross_source \\
        [--data ../shared/data/perf-commit-messages] [--work build/xs-bench] \\
        [--labelers keyword@1,keyword@2,heuristics@1,tfidf-lr@latest,student@latest] \\
        [--train-args "--epochs 2"] [--curve 50,100,200] [--no-ensemble] [--json OUT]

What it does, every step a ``curator`` command on a fresh database in ``--work``:

1. imports the shared hand-labeled messages (``train.jsonl`` and ``extra.jsonl``; the
   data is read where it lies, written only to the work folder) as items with one vote
   each into set ``train``, and ``test.jsonl`` into set ``test``;
2. imports the cross-source set (the hand-labeled commits of
   ``sample_data/cross_source/``, with their diffs, materialized by
   ``scripts/cross_source_texts.py``) into set ``xsrc`` with its votes;
3. ``curator train --votes train`` with the defaults (plus ``--train-args``) and
   ``curator train --kind tfidf-lr --votes train``;
4. ``curator train --kind ensemble --dev test``: keyword, heuristics, TF-IDF and the
   student combined by the combiner that wins cross-validation on ``test.jsonl`` (so the
   ensemble's ``test`` row is its own dev score; its ``xsrc`` row is unseen data);
5. ``curator predict`` with each trained labeler on ``test`` and ``xsrc``, then
   ``curator eval`` on both sets; prints one table of perf-class precision, recall, F1;
6. with ``--curve 50,100,200``: adaptation. The cross-source set is split by repository
   (``--adapt-repos``: their commits are the new source's votes, set ``xs-adapt``; the
   other repositories' commits are set ``xs-heldout``), and
   ``curator train --curve ... --order both --from-model student@1 --votes xs-adapt
   --eval xs-heldout`` measures F1 after 50/100/200 in-domain votes, in random and in
   uncertainty order, then registers the full adapted run; keyword@1, keyword@2 and the unadapted
   student are scored on ``xs-heldout`` beside it.

Training the student on ~2,500 messages takes 5-15 minutes on two CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "perf-commit-messages"
TRAINED = ("student", "tfidf-lr", "tfidf-svm", "ensemble")


def curator(db: Path, *args: str) -> str:
    """Run one curator command on ``db``; its stdout, or exit with its stderr."""
    command = [sys.executable, "-m", "curator", *args, "--db", str(db)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        sys.exit(f"failed: {shlex.join(command)}\n{done.stdout}\n{done.stderr}")
    for line in done.stderr.splitlines():
        if line.strip().lower().startswith("warning"):
            print(f"  {line.strip()}", file=sys.stderr)
    return done.stdout


def write_messages(files: list[Path], prefix: str, out: Path) -> tuple[Path, Path]:
    """The shared messages as ``import items`` and ``import votes`` JSONL (one vote each,
    annotator ``perfcurator``); rows whose target is not 0/1 are left out."""
    items, votes = out / f"{prefix}-items.jsonl", out / f"{prefix}-votes.jsonl"
    with items.open("w", encoding="utf-8") as fi, votes.open("w", encoding="utf-8") as fv:
        for path in files:
            for line in path.open(encoding="utf-8"):
                row = json.loads(line)
                if row.get("target") not in (0, 1):
                    continue
                key = f"perfcurator:{path.stem}:{row['idx']}"
                fi.write(json.dumps({"id": key, "message": row["commit_message"] or ""}) + "\n")
                label = "perf" if row["target"] == 1 else "non-perf"
                vote = {"item": key, "annotator": "perfcurator", "label": label}
                fv.write(json.dumps(vote) + "\n")
    return items, votes


def import_set(db: Path, name: str, items: Path, votes: Path) -> None:
    curator(
        db,
        "import",
        "items",
        str(items),
        "--set",
        name,
        "--labels",
        "perf,non-perf",
        "--votes-per-item",
        "1",
    )
    curator(db, "import", "votes", str(votes))


def has_set(db: Path, name: str) -> bool:
    """Whether ``db`` already holds a set called ``name`` (``--skip-train`` reruns)."""
    return any(row.get("name") == name for row in json.loads(curator(db, "set", "list", "--json")))


def evaluate(db: Path, set_name: str, labelers: list[str]) -> dict[str, Any]:
    args = ["eval", set_name, "--json"]
    for name in labelers:
        args += ["--labeler", name]
    return json.loads(curator(db, *args))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cross", type=Path, required=True, help="materialized cross set")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument(
        "--labelers", default="keyword@1,keyword@2,heuristics@1,tfidf-lr@latest,student@latest"
    )
    parser.add_argument("--train-args", default="", help="extra flags for curator train")
    parser.add_argument("--skip-train", action="store_true", help="reuse the work folder")
    parser.add_argument("--no-ensemble", action="store_true")
    parser.add_argument("--curve", default="", help="learning-curve sizes, e.g. 50,100,200")
    parser.add_argument(
        "--adapt-repos",
        default="numpy/numpy,fmtlib/fmt,apache/commons-lang,google/re2,networkx/networkx",
        help="repositories whose commits are the new source's votes (the rest: held out)",
    )
    parser.add_argument(
        "--holdout",
        type=Path,
        default=None,
        help="a second materialized set (scripts/cross_source_texts.py --labels"
        " sample_data/cross_source_holdout/labels.csv), scored as set 'holdout'",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="xs-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "curator.db"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    labelers = [x for x in args.labelers.split(",") if x]
    if not args.no_ensemble and not any(x.startswith("ensemble") for x in labelers):
        labelers.append("ensemble@latest")
    if not args.skip_train:
        if db.exists():
            sys.exit(f"{db} exists: use another --work folder or --skip-train")
        shared = [args.data / "train.jsonl", args.data / "extra.jsonl"]
        import_set(db, "train", *write_messages(shared, "train", work))
        import_set(db, "test", *write_messages([args.data / "test.jsonl"], "test", work))
        import_set(db, "xsrc", args.cross / "items.jsonl", args.cross / "votes.jsonl")
        curator(db, "train", "--votes", "train", *shlex.split(args.train_args))
        curator(db, "train", "--kind", "tfidf-lr", "--votes", "train")
        if not args.no_ensemble:
            curator(db, "train", "--kind", "ensemble", "--dev", "test")
    sets = ["test", "xsrc"]
    if args.holdout is not None:
        if not has_set(db, "holdout"):
            import_set(db, "holdout", args.holdout / "items.jsonl", args.holdout / "votes.jsonl")
        sets.append("holdout")
    for name in labelers:
        for set_name in sets:
            curator(db, "predict", set_name, "--labeler", name)
    report = {s: evaluate(db, s, labelers) for s in sets}
    print(f"{'labeler':24} {'set':8} {'P':>6} {'R':>6} {'F1':>6}")
    for set_name, result in report.items():
        for row in _perf_rows(result):
            print(
                f"{row['labeler']:24} {set_name:8} {row['precision']:6.3f} "
                f"{row['recall']:6.3f} {row['f1']:6.3f}"
            )
    if args.curve:
        report["curve"] = adapt(
            db,
            work,
            args.cross,
            args.adapt_repos.split(","),
            args.curve,
            extra_sets=["holdout"] if args.holdout is not None else [],
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def adapt(
    db: Path,
    work: Path,
    cross: Path,
    repos: list[str],
    sizes: str,
    extra_sets: list[str],
) -> dict[str, Any]:
    """Split the cross-source set by repository, measure the learning curve of a warm
    start from student@1 on one part, scored on the other; keyword and the unadapted
    student on the same held-out part, and on each of ``extra_sets`` (sets of yet other
    repositories) beside the adapted model."""
    items = [json.loads(line) for line in (cross / "items.jsonl").open(encoding="utf-8")]
    votes = [json.loads(line) for line in (cross / "votes.jsonl").open(encoding="utf-8")]
    for name, keep in (("xs-adapt", True), ("xs-heldout", False)):
        chosen = {i["id"] for i in items if (i.get("repo") in repos) == keep}
        part_items, part_votes = work / f"{name}-items.jsonl", work / f"{name}-votes.jsonl"
        part_items.write_text(
            "".join(json.dumps(i) + "\n" for i in items if i["id"] in chosen), encoding="utf-8"
        )
        part_votes.write_text(
            "".join(json.dumps(v) + "\n" for v in votes if v["item"] in chosen),
            encoding="utf-8",
        )
        import_set(db, name, part_items, part_votes)
    curve = json.loads(
        curator(
            db,
            "train",
            "--curve",
            sizes,
            "--order",
            "both",
            "--from-model",
            "student@1",
            "--votes",
            "xs-adapt",
            "--eval",
            "xs-heldout",
            "--json",
        )
    )
    adapted = curve.get("model") or curve.get("final", {}).get("model") or "student@latest"
    compared = ["keyword@1", "keyword@2", "student@1", adapted]
    scored: dict[str, Any] = {}
    print(json.dumps(curve.get("curve", curve), indent=2)[:4000])
    for set_name in ["xs-heldout", *extra_sets]:
        for name in compared:
            curator(db, "predict", set_name, "--labeler", name)
        scored[set_name] = evaluate(db, set_name, compared)
        for row in _perf_rows(scored[set_name]):
            print(
                f"{row['labeler']:24} {set_name:10} {row['precision']:6.3f} "
                f"{row['recall']:6.3f} {row['f1']:6.3f}"
            )
    return {"curve": curve, "heldout": scored["xs-heldout"], "beside": scored}


def _perf_rows(result: Any) -> list[dict[str, Any]]:
    """The perf-class row of each labeler in ``curator eval --json`` output."""
    rows = []
    for entry in result.get("labelers", result if isinstance(result, list) else []):
        perf = entry.get("per_class", {}).get("perf", {})
        rows.append(
            {
                "labeler": entry.get("labeler", "?"),
                "precision": perf.get("precision") or 0.0,
                "recall": perf.get("recall") or 0.0,
                "f1": perf.get("f1") or 0.0,
            }
        )
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
