#!/usr/bin/env python3
"""Build the deterministic sample git repository described by a commit recipe.

The recipe (``commits/recipe.yaml`` beside this script by default) lists the
commits of a small multi-language code base.  Each commit is replayed with
``git`` subprocesses using fixed author/committer identities and dates and an
isolated git configuration, so the resulting commit SHAs are identical on every
machine and every run.

This script is standalone: it only needs the Python standard library, PyYAML
and a ``git`` executable.

Usage::

    python sample_data/build_commit_repo.py [--recipe PATH] [--force] [--json] DEST
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

DEFAULT_RECIPE = Path(__file__).resolve().parent / "commits" / "recipe.yaml"
DEFAULT_AUTHOR = {"name": "Sam Sample", "email": "sam.sample@example.org"}
VALID_LABELS = {"perf", "non-perf"}
VALID_EXPECT = {"stored", "too-many-files", "too-many-functions", "no-function", "language"}
VALID_TRAPS = {None, "keyword-not-perf", "perf-without-keyword"}


class RecipeError(ValueError):
    """Raised when the recipe is malformed or a change cannot be applied."""


def load_recipe(recipe_path: Path) -> dict[str, Any]:
    with open(recipe_path, encoding="utf-8") as handle:
        recipe = yaml.safe_load(handle)
    if not isinstance(recipe, dict) or "commits" not in recipe:
        raise RecipeError(f"{recipe_path}: expected a mapping with a 'commits' list")
    repo = recipe.get("repository") or {}
    recipe["repository"] = {
        "name": repo.get("name", "sample-perf"),
        "default_branch": repo.get("default_branch", "main"),
        "start_date": repo.get("start_date", "2024-01-01T09:00:00+00:00"),
    }
    seen: set[str] = set()
    for index, commit in enumerate(recipe["commits"]):
        cid = commit.get("id")
        if not cid:
            raise RecipeError(f"commit #{index} has no id")
        if cid in seen:
            raise RecipeError(f"duplicate commit id {cid!r}")
        seen.add(cid)
        if not commit.get("message", "").strip():
            raise RecipeError(f"commit {cid}: empty message")
        if commit.get("label") not in VALID_LABELS:
            raise RecipeError(f"commit {cid}: label must be one of {sorted(VALID_LABELS)}")
        if commit.get("expect") not in VALID_EXPECT:
            raise RecipeError(f"commit {cid}: expect must be one of {sorted(VALID_EXPECT)}")
        if commit.get("trap") not in VALID_TRAPS:
            raise RecipeError(f"commit {cid}: unknown trap {commit.get('trap')!r}")
        if not commit.get("changes"):
            raise RecipeError(f"commit {cid}: no changes")
    return recipe


def _git_env(name: str, email: str, date: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_SYSTEM": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date,
            "TZ": "UTC",
            "LC_ALL": "C",
        }
    )
    return env


def _git(
    dest: Path, args: list[str], name: str, email: str, date: str, stdin: str | None = None
) -> str:
    cmd = [
        "git",
        "-c",
        f"user.name={name}",
        "-c",
        f"user.email={email}",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "core.autocrlf=false",
        "-c",
        "core.hooksPath=/dev/null",
        *args,
    ]
    result = subprocess.run(
        cmd,
        cwd=dest,
        env=_git_env(name, email, date),
        input=stdin.encode("utf-8") if stdin is not None else None,
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed ({result.returncode}): "
            f"{result.stderr.decode('utf-8', 'replace').strip()}"
        )
    return result.stdout.decode("utf-8", "replace")


def _git_date(start: datetime, hours: int) -> str:
    moment = start + timedelta(hours=hours)
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{int(moment.timestamp())} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def _safe_path(dest: Path, rel: str, cid: str) -> Path:
    if not rel or os.path.isabs(rel) or ".." in Path(rel).parts:
        raise RecipeError(f"commit {cid}: invalid file path {rel!r}")
    return dest / rel


def apply_change(dest: Path, cid: str, change: dict[str, Any]) -> str:
    """Apply one file change of commit ``cid`` inside ``dest``; return the path."""
    rel = change.get("file")
    target = _safe_path(dest, rel, cid)
    if change.get("delete"):
        if not target.exists():
            raise RecipeError(f"commit {cid}: cannot delete missing file {rel}")
        target.unlink()
        return rel
    after = change.get("after")
    if after is None:
        raise RecipeError(f"commit {cid}: change to {rel} has no 'after'")
    before = change.get("before")
    if before is None:
        new_text = after
    else:
        if not target.exists():
            raise RecipeError(f"commit {cid}: {rel} does not exist, cannot replace text")
        current = target.read_bytes().decode("utf-8")
        occurrences = current.count(before)
        if occurrences != 1:
            raise RecipeError(
                f"commit {cid}: 'before' text must occur exactly once in {rel}, "
                f"found {occurrences} occurrence(s):\n{before}"
            )
        new_text = current.replace(before, after, 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(new_text.encode("utf-8"))
    return rel


def _normalize_message(message: str) -> str:
    lines = [line.rstrip() for line in message.strip("\n").splitlines()]
    return "\n".join(lines).strip() + "\n"


def build_repository(recipe_path: Path, dest: Path) -> list[dict[str, Any]]:
    """Create the git repository described by ``recipe_path`` in ``dest``.

    ``dest`` must not exist or be an empty directory.  Returns one dict per
    commit with keys id, sha, label, expect, trap, category and files.
    """
    recipe_path = Path(recipe_path)
    dest = Path(dest)
    recipe = load_recipe(recipe_path)
    repo = recipe["repository"]
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"destination {dest} exists and is not empty")
    dest.mkdir(parents=True, exist_ok=True)

    start = datetime.fromisoformat(str(repo["start_date"]))
    if start.tzinfo is None:
        raise RecipeError("repository.start_date must include a UTC offset")
    first_author = DEFAULT_AUTHOR
    _git(
        dest,
        ["init", "-q", "-b", repo["default_branch"]],
        first_author["name"],
        first_author["email"],
        _git_date(start, 0),
    )

    results: list[dict[str, Any]] = []
    for i, commit in enumerate(recipe["commits"]):
        cid = commit["id"]
        author = {**DEFAULT_AUTHOR, **(commit.get("author") or {})}
        date = _git_date(start, i)
        files: list[str] = []
        for change in commit["changes"]:
            rel = apply_change(dest, cid, change)
            if rel not in files:
                files.append(rel)
        _git(dest, ["add", "-A", "--", *files], author["name"], author["email"], date)
        staged = _git(
            dest, ["diff", "--cached", "--name-only"], author["name"], author["email"], date
        )
        if not staged.strip():
            raise RecipeError(f"commit {cid}: changes produce an empty commit")
        _git(
            dest,
            ["commit", "-q", "--no-verify", "--cleanup=verbatim", "-F", "-"],
            author["name"],
            author["email"],
            date,
            stdin=_normalize_message(commit["message"]),
        )
        sha = _git(dest, ["rev-parse", "HEAD"], author["name"], author["email"], date).strip()
        results.append(
            {
                "id": cid,
                "sha": sha,
                "label": commit["label"],
                "expect": commit["expect"],
                "trap": commit.get("trap"),
                "category": commit.get("category"),
                "files": files,
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build the deterministic sample commit repository."
    )
    parser.add_argument("dest", type=Path, help="directory to create the repository in")
    parser.add_argument("--recipe", type=Path, default=DEFAULT_RECIPE, help="recipe YAML file")
    parser.add_argument("--force", action="store_true", help="remove DEST first if it exists")
    parser.add_argument("--json", action="store_true", help="print the commit list as JSON")
    args = parser.parse_args(argv)

    dest: Path = args.dest
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        if not args.force:
            print(
                f"error: {dest} exists and is not empty (use --force to replace it)",
                file=sys.stderr,
            )
            return 2
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        else:
            dest.unlink()
    try:
        commits = build_repository(args.recipe, dest)
    except (RecipeError, RuntimeError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(commits, indent=2))
    print(f"Built {len(commits)} commits in {dest}", file=sys.stderr if args.json else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
