"""Materialize the hand-labeled cross-source evaluation set from local git clones.

``sample_data/cross_source/labels.csv`` holds only references (repository, commit, path)
and the Curator team's labels; this script reads each commit's message and the diff of
its one labeled file from a local clone and writes two files that Curator imports:

* ``items.jsonl``: one commit item per row, for ``curator import items``;
* ``votes.jsonl``: one vote per row by annotator ``cross-source`` (``--annotator``
  names another: a second labeler's CSV of the same commits, such as a set's
  ``second_opinion.csv``), for ``curator import votes``.

Usage::

    python scripts/cross_source_texts.py --clones DIR --out build/cross_source
    python scripts/cross_source_texts.py --repo numpy/numpy=/src/numpy --out build/cross_source

DIR holds one clone (work tree or bare) per repository, found as ``DIR/owner+name``,
``DIR/name``, ``DIR/owner/name`` (each also with a ``.git`` suffix or a ``repo``
subfolder); ``--repo owner/name=PATH`` overrides the lookup for one repository. A missing
repository or commit gives a one-line warning naming the CSV line, and the run goes on;
the exit code is 1 when nothing was written.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LABELS = ROOT / "sample_data" / "cross_source" / "labels.csv"
ANNOTATOR = "cross-source"
COLUMNS = ("repo", "commit", "path", "label", "category", "note")
SKIP = "skip"  # a labeler who could not tell (a second opinion may say so): no vote
LABELS = ("perf", "non-perf")

# Languages as Curator's miner names them (engines/commits/languages.py).
LANGUAGES = {
    ".py": "python",
    ".c": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".java": "java",
}

# The CSV's coarse categories, mapped onto Curator's taxonomy slugs
# (annotation/labels.py), which `curator import votes` checks against.
CATEGORY_SLUGS = {
    "algorithmic": "inefficient-algorithm-data-structure/suboptimal-algorithm",
    "data-structure": "inefficient-algorithm-data-structure/suboptimal-data-structures",
    "memory": "memory-inefficiency/unnecessary-memory-allocation",
    "io": "inefficient-i-o",
    "caching": "inefficient-i-o/inefficient-caching",
    "concurrency": "poor-concurrency-control",
    "library": "api-misuse",
    "compiler/vectorization": "micro-architectural/missed-compiler-optimization",
    "other": "other",
}


@dataclass(frozen=True)
class Row:
    origin: str  # "labels.csv:LINE", for warnings
    repo: str
    commit: str
    path: str
    label: str
    category: str
    note: str


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def git(repo_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo_dir), *args], capture_output=True, check=False)


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def is_git_dir(path: Path) -> bool:
    """True for a work tree or a bare repository (its top level, not a subfolder)."""
    if not path.is_dir():
        return False
    result = git(path, "rev-parse", "--is-bare-repository", "--show-prefix")
    if result.returncode != 0:
        return False
    bare, _, prefix = text(result.stdout).partition("\n")
    return bare.strip() == "true" or not prefix.strip()


def candidates(clones: Path, repo: str) -> Iterable[Path]:
    owner, _, name = repo.partition("/")
    for base in (clones / f"{owner}+{name}", clones / name, clones / owner / name):
        yield from (base, base.with_name(base.name + ".git"), base / "repo")


def resolve_repo(repo: str, clones: Path | None, overrides: dict[str, Path]) -> Path | None:
    if repo in overrides:
        path = overrides[repo]
        return path if is_git_dir(path) else None
    if clones is None:
        return None
    if is_git_dir(clones) and not any(p.is_dir() for p in candidates(clones, repo)):
        return clones  # DIR itself is the one clone
    return next((p for p in candidates(clones, repo) if is_git_dir(p)), None)


def read_rows(path: Path) -> list[Row]:
    rows: list[Row] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise SystemExit(f"{path}:1: missing column(s) {', '.join(missing)}")
        for record in reader:
            origin = f"{path.name}:{reader.line_num}"
            row = Row(origin, *((record.get(c) or "").strip() for c in COLUMNS))
            if row.label == SKIP:
                continue
            if row.label not in LABELS:
                warn(f"{origin}: label {row.label!r} is not perf or non-perf")
            elif row.category and row.category not in CATEGORY_SLUGS:
                warn(f"{origin}: unknown category {row.category!r}")
            elif not (row.repo and row.commit and row.path):
                warn(f"{origin}: repo, commit and path are all required")
            else:
                rows.append(row)
    return rows


def materialize(row: Row, repo_dir: Path, key: str) -> dict[str, Any] | None:
    """The item for one row, or None (with a warning) when the commit cannot be read."""
    where = f"{row.origin} ({row.repo}@{row.commit[:12]})"
    shown = git(repo_dir, "show", "-s", "--format=%aI%x00%B", row.commit, "--")
    if shown.returncode != 0:
        warn(f"{where}: commit not found in {repo_dir}")
        return None
    date, _, message = text(shown.stdout).partition("\x00")
    diff = git(
        repo_dir,
        "show",
        "--format=",
        "--patch",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        row.commit,
        "--",
        row.path,
    )
    if diff.returncode != 0 or not diff.stdout.strip():
        warn(f"{where}: commit does not change {row.path}")
        return None
    return {
        "id": key,
        "repo": row.repo,
        "sha": row.commit,
        "date": date.strip(),
        "file": row.path,
        "language": LANGUAGES.get(PurePosixPath(row.path).suffix.lower()),
        "message": message.rstrip("\n"),
        "diff": text(diff.stdout),
    }


def vote(row: Row, key: str, annotator: str = ANNOTATOR) -> dict[str, Any]:
    record: dict[str, Any] = {"item": key, "annotator": annotator, "label": row.label}
    if row.category:
        record["category"] = CATEGORY_SLUGS[row.category]
    if row.note:
        record["note"] = row.note
    return record


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """Write next to ``path`` first, then rename, so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def parse_overrides(values: list[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for value in values:
        repo, sep, path = value.partition("=")
        if not sep or "/" not in repo or not path:
            raise SystemExit(f"--repo wants owner/name=PATH, got {value!r}")
        found[repo.strip()] = Path(path).expanduser()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clones", type=Path, help="folder holding one clone per repository")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS, help="the labels CSV")
    parser.add_argument("--out", type=Path, default=Path("build/cross_source"))
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME=PATH",
        help="clone of one repository (repeatable); wins over --clones",
    )
    parser.add_argument(
        "--sha-keys",
        action="store_true",
        help="key items by bare sha (as `curator mine` does) instead of owner/name@sha",
    )
    parser.add_argument(
        "--annotator",
        default=ANNOTATOR,
        help=f"who the votes are by (default {ANNOTATOR}; e.g. second-opinion)",
    )
    args = parser.parse_args(argv)
    if not args.annotator.strip():
        parser.error("--annotator needs a name")
    overrides = parse_overrides(args.repo)
    if args.clones is None and not overrides:
        parser.error("give --clones DIR or at least one --repo owner/name=PATH")

    rows = read_rows(args.labels)
    resolved: dict[str, Path | None] = {}
    items: list[dict[str, Any]] = []
    votes: list[dict[str, Any]] = []
    for row in rows:
        if row.repo not in resolved:
            resolved[row.repo] = resolve_repo(row.repo, args.clones, overrides)
        repo_dir = resolved[row.repo]
        if repo_dir is None:
            warn(f"{row.origin} ({row.repo}@{row.commit[:12]}): no clone of {row.repo}")
            continue
        key = row.commit if args.sha_keys else f"{row.repo}@{row.commit}"
        item = materialize(row, repo_dir, key)
        if item is not None:
            items.append(item)
            votes.append(vote(row, key, args.annotator))

    if not items:
        print("nothing written: no row could be materialized", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "items.jsonl", items)
    write_jsonl(args.out / "votes.jsonl", votes)
    print(
        f"{len(items)} of {len(rows)} rows written to {args.out}/items.jsonl"
        f" and {args.out}/votes.jsonl"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
