#!/usr/bin/env python3
"""Sanity-check the sample commit recipe against PyDriller directly.

Builds the sample repository twice into temporary directories, confirms the
SHAs are identical, then replays every commit through PyDriller and checks the
recipe's ``expect`` value using the filter rules (in order):

  more than one modified file          -> too-many-files
  extension not a supported language   -> language
  no changed method                    -> no-function
  more than one changed method         -> too-many-functions
  otherwise                            -> stored

It also checks that no two stored commits share the MD5 of their (function
before, function after) code or of their diff text, and that
``perf-without-keyword`` messages avoid common performance words.

Usage: python sample_data/check_recipe.py [--recipe PATH]
Needs pydriller (not used by the builder itself).  Exit status 1 on mismatch.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from pydriller import Repository

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_commit_repo import DEFAULT_RECIPE, build_repository, load_recipe

SOURCE_EXT = {".py", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".java"}
PERF_WORDS = re.compile(
    r"perf|fast|speed|optimi[sz]|efficien|slow|latenc|throughput|cache|memory|quick",
    re.IGNORECASE,
)


def _lines(source: str | None, start: int, end: int) -> str:
    if not source:
        return ""
    return "\n".join(source.splitlines()[start - 1 : end])


def classify(commit) -> tuple[str, object, list]:
    files = commit.modified_files
    if len(files) > 1:
        return "too-many-files", None, []
    mf = files[0]
    if Path(mf.filename).suffix.lower() not in SOURCE_EXT:
        return "language", mf, []
    methods = mf.changed_methods
    if not methods:
        return "no-function", mf, methods
    if len(methods) > 1:
        return "too-many-functions", mf, methods
    return "stored", mf, methods


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", type=Path, default=DEFAULT_RECIPE)
    args = parser.parse_args(argv)
    recipe = load_recipe(args.recipe)
    problems: list[str] = []

    with tempfile.TemporaryDirectory() as tmp:
        first = build_repository(args.recipe, Path(tmp) / "a")
        second = build_repository(args.recipe, Path(tmp) / "b")
        if [c["sha"] for c in first] != [c["sha"] for c in second]:
            problems.append("SHAs differ between two builds")
        by_sha = {c["sha"]: c for c in first}
        func_hashes: dict[str, str] = {}
        diff_hashes: dict[str, str] = {}
        actual_counts: Counter[str] = Counter()
        for commit in Repository(
            str(Path(tmp) / "a"), order="reverse", only_no_merge=True
        ).traverse_commits():
            entry = by_sha[commit.hash]
            actual, mf, methods = classify(commit)
            actual_counts[actual] += 1
            n_methods = len(methods) if mf is not None else "-"
            if actual != entry["expect"]:
                problems.append(
                    f"{entry['id']}: expect {entry['expect']} but PyDriller gives {actual} "
                    f"(files={len(commit.modified_files)}, methods={n_methods}: "
                    f"{[m.long_name for m in methods]})"
                )
            if actual != "stored":
                continue
            name = methods[0].name
            before = [m for m in mf.methods_before if m.name == name]
            after = [m for m in mf.methods if m.name == name]
            code_before = (
                _lines(mf.source_code_before, before[0].start_line, before[0].end_line)
                if before
                else ""
            )
            code_after = (
                _lines(mf.source_code, after[0].start_line, after[0].end_line) if after else ""
            )
            fh = hashlib.md5((code_before + "\0" + code_after).encode()).hexdigest()
            dh = hashlib.md5(mf.diff.encode()).hexdigest()
            if fh in func_hashes:
                problems.append(f"{entry['id']}: same function change as {func_hashes[fh]}")
            if dh in diff_hashes:
                problems.append(f"{entry['id']}: same diff as {diff_hashes[dh]}")
            func_hashes[fh] = diff_hashes[dh] = entry["id"]

    for commit in recipe["commits"]:
        if commit.get("trap") == "perf-without-keyword" and PERF_WORDS.search(commit["message"]):
            problems.append(
                f"{commit['id']}: perf-without-keyword message contains a performance word"
            )
        if commit.get("trap") == "keyword-not-perf" and not PERF_WORDS.search(commit["message"]):
            problems.append(f"{commit['id']}: keyword-not-perf message has no performance word")

    langs = Counter()
    for c in first:
        exts = {Path(f).suffix for f in c["files"]}
        lang = (
            "python"
            if exts <= {".py"}
            else "cpp"
            if exts <= {".cpp", ".h", ".hpp", ".cc"}
            else "java"
            if exts <= {".java"}
            else "other"
        )
        langs[lang] += 1
    print(f"commits: {len(first)}  head: {first[-1]['sha']}")
    print("expect:", dict(Counter(c["expect"] for c in first)))
    print("pydriller:", dict(actual_counts))
    print("labels:", dict(Counter(c["label"] for c in first)))
    print("languages:", dict(langs))
    print("traps:", dict(Counter(c["trap"] for c in first if c["trap"])))
    for problem in problems:
        print("PROBLEM:", problem)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
