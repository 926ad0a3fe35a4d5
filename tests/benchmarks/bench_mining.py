"""Mining throughput: ``curator mine commits`` against plain PyDriller loops.

Both run on the same generated history in the same process and run. Baselines:

* ``pydriller-visit``: traverse every commit and read each modified file's diff;
* ``pydriller-filter``: the same loop doing the miner's job the obvious way (count
  modified files, then ``changed_methods`` on single-file commits).

Run ``python tests/benchmarks/bench_mining.py [--commits N] [--quick]``.

Real-history mode, over any local clone: ``--repo PATH --since DATE [--until DATE]``.
In one run it times the ``git log --no-merges --numstat`` floor over the window,
``curator mine commits`` (tree-sitter boundaries), the same run on the lizard path
(PyDriller's ``changed_methods``, the reference) and the plain PyDriller loop doing the
same job; then compares the commits both curator paths stored and the changed-function
names the two parsers give on every survivor of the cheap filter (every disagreement
listed). ``--no-lizard`` leaves the lizard run and the comparison out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydriller import Repository  # noqa: E402

from engines.commits.gitlog import count_commits  # noqa: E402
from engines.commits.languages import language_of  # noqa: E402
from engines.commits.miner import Mined, mine_repository  # noqa: E402
from engines.commits.options import MineOptions  # noqa: E402
from engines.commits.pipeline import mine_commits  # noqa: E402
from engines.labelers.keyword import KeywordLabeler  # noqa: E402
from store import open_store  # noqa: E402
from tests.benchmarks.synthetic_repo import build_repository  # noqa: E402
from tests.raw_sql import query  # noqa: E402

CHEAP_REASONS = {"no-files", "too-many-files", "language", "binary", "diff-too-large"}


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


def cpu_seconds() -> float:
    """CPU time of this process and of every child it has waited for (git included)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def stop_forkserver() -> None:
    """Stop multiprocessing's forkserver and wait for it, so that the CPU time of the
    extraction workers it forked (and their git processes) counts in this process's
    children time. Private API, as multiprocessing's own tests use it."""
    from multiprocessing import forkserver

    server = forkserver._forkserver  # type: ignore[attr-defined]
    if getattr(server, "_forkserver_pid", None) is not None:
        server._stop()


def timed_cpu(fn, *args):  # type: ignore[no-untyped-def]
    """``fn(*args)``, its wall time and the CPU time it (its git processes and its
    extraction workers included) used."""
    cpu = cpu_seconds()
    result, wall = timed(fn, *args)
    stop_forkserver()
    return result, wall, cpu_seconds() - cpu


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


def numstat_floor(path: Path, since: str | None, until: str | None) -> None:
    """What any miner must at least pay: git's own walk with per-file line counts."""
    window = [f"--since={since}"] if since else []
    window += [f"--until={until}"] if until else []
    subprocess.run(
        ["git", "-C", str(path), "log", "--no-merges", "--numstat", *window, "HEAD"],
        stdout=subprocess.DEVNULL,
        check=True,
    )


def pydriller_window(path: Path, since: str | None, until: str | None) -> set[str]:
    """The plain PyDriller loop doing the miner's job over the window: one file of a
    known language, then exactly one changed function."""
    window = {"since": datetime.fromisoformat(since)} if since else {}
    window |= {"to": datetime.fromisoformat(until)} if until else {}
    kept = set()
    for commit in Repository(str(path), only_no_merge=True, **window).traverse_commits():
        files = commit.modified_files
        if len(files) != 1 or language_of(files[0].new_path or files[0].old_path or "") is None:
            continue
        if len(files[0].changed_methods) == 1:
            kept.add(commit.hash)
    return kept


def curator_window(path: Path, db: Path, options: MineOptions) -> set[str]:
    """``curator mine commits`` over the window; the shas it stored."""
    with open_store(db) as store:
        mine_commits(store, [str(path)], options, [KeywordLabeler()])
        return {row[0] for row in query(store, "SELECT sha FROM commits")}


def name_agreement(path: Path, options: MineOptions) -> dict[str, object]:
    """Changed-function names from tree-sitter and from lizard on every survivor of
    the cheap filter (any number of functions), compared as multisets."""
    unlimited = dataclasses.replace(options, max_functions=10**9)
    found: dict[str, dict[str, object]] = {}
    for boundaries in ("tree-sitter", "lizard"):
        found[boundaries] = {
            o.sha: sorted(o.row.functions) if isinstance(o, Mined) else o.reason
            for o in mine_repository(
                path, str(path), "HEAD", dataclasses.replace(unlimited, boundaries=boundaries)
            )
            if isinstance(o, Mined) or o.reason not in CHEAP_REASONS
        }
    fast, reference = found["tree-sitter"], found["lizard"]
    disagreements = [
        {
            "sha": sha,
            "tree-sitter": fast.get(sha),
            "lizard": names,
            "same functions": _bare(fast.get(sha)) == _bare(names),
            "kind": classify(fast.get(sha), names),
        }
        for sha, names in reference.items()
        if fast.get(sha) != names
    ]
    survivors = len(reference)
    functions_agreed = survivors - sum(not d["same functions"] for d in disagreements)
    return {
        "survivors": survivors,
        "agreed": survivors - len(disagreements),
        "share": (survivors - len(disagreements)) / survivors if survivors else 1.0,
        "functions_agreed": functions_agreed,
        "functions_share": functions_agreed / survivors if survivors else 1.0,
        "disagreements": disagreements,
    }


def classify(fast: object, reference: object) -> str:
    """Why the two parsers' names differ on a commit, by the shape of the difference."""
    if _bare(fast) == _bare(reference):
        return "qualifiers"  # the same functions; lizard names their class otherwise
    # a parser that could not read the commit found nothing for want of trying
    if reference == "error":
        return "lizard-error"
    if fast == "error":
        return "tree-sitter-error"
    found = fast if isinstance(fast, list) else []
    if isinstance(reference, list):
        extra = set(reference) - set(found)
        if extra and all(_looks_like_annotation(name) for name in extra):
            return "lizard-counts-an-annotation"
    if not isinstance(reference, list):
        return "lizard-finds-none"
    if not isinstance(fast, list):
        return "tree-sitter-finds-none"
    ours, theirs = Counter(_bare(fast)), Counter(_bare(reference))  # type: ignore[arg-type]
    if not theirs - ours:
        return "lizard-misses-some"
    if not ours - theirs:
        return "tree-sitter-misses-some"
    return "other"


def _looks_like_annotation(name: str) -> bool:
    """``Class::MethodSource``: lizard reads ``@MethodSource({...})`` above a Java method
    as a function; Java methods are lower camel case, constructors repeat the class."""
    scope, _, bare = name.rpartition("::")
    return bool(scope) and bare[:1].isupper() and bare != scope.rsplit("::", 1)[-1]


def _bare(names: object) -> object:
    """Names without their class or enclosing-function qualifiers: the same functions,
    whatever lizard calls their class."""
    if not isinstance(names, list):
        return names
    return sorted(name.replace("::", ".").rsplit(".", 1)[-1] for name in names)


def run_real(
    path: Path,
    since: str | None,
    until: str | None = None,
    lizard: bool = True,
    loop: bool = True,
) -> dict[str, object]:
    """Every measurement of the real-history mode, in one run over one window."""
    path = path.resolve()
    options = MineOptions(since=since, until=until)
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    stored: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs: list[tuple[str, Callable[..., set[str] | None], tuple[object, ...]]] = [
            ("numstat-floor", numstat_floor, (path, since, until)),
            ("curator", curator_window, (path, Path(tmp) / "fast.db", options)),
        ]
        if lizard:
            lizard_options = dataclasses.replace(options, boundaries="lizard")
            runs.append(
                ("curator-lizard", curator_window, (path, Path(tmp) / "l.db", lizard_options))
            )
        if loop:
            runs.append(("pydriller", pydriller_window, (path, since, until)))
        for name, fn, args in runs:
            found, seconds[name], cpu[name] = timed_cpu(fn, *args)
            if found is not None:
                stored[name] = found
    head = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result: dict[str, object] = {
        "repo": str(path),
        "head": head,
        "since": since,
        "until": until,
        "commits": count_commits(path, "HEAD", since, until),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "stored": {name: len(shas) for name, shas in stored.items()},
        "times_the_floor": seconds["curator"] / seconds["numstat-floor"],
        "cpu_times_the_floor": cpu["curator"] / cpu["numstat-floor"],
    }
    if loop:
        result["ratio_vs_pydriller"] = seconds["pydriller"] / seconds["curator"]
        result["cpu_ratio_vs_pydriller"] = cpu["pydriller"] / cpu["curator"]
    if lizard:
        result["ratio_vs_lizard_path"] = seconds["curator-lizard"] / seconds["curator"]
        result["only_tree_sitter"] = sorted(stored["curator"] - stored["curator-lizard"])
        result["only_lizard"] = sorted(stored["curator-lizard"] - stored["curator"])
        result["agreement"] = name_agreement(path, options)
    return result


def print_real(result: dict[str, object]) -> None:
    seconds = result["seconds"]
    assert isinstance(seconds, dict)
    print(
        f"{result['repo']} @ {str(result['head'])[:12]}, since {result['since']}"
        f"{', until ' + str(result['until']) if result['until'] else ''}:"
        f" {result['commits']:,} non-merge commits"
    )
    cpu = result["cpu_seconds"]
    assert isinstance(cpu, dict)
    for name, value in seconds.items():
        print(f"  {name:<15} {value:7.2f} s wall, {cpu[name]:7.2f} s CPU (git included)")
    if "ratio_vs_pydriller" in result:
        print(f"  curator / pydriller loop = {result['ratio_vs_pydriller']:.2f}x faster")
        print(f"  in CPU time: {result['cpu_ratio_vs_pydriller']:.2f}x faster than the loop")
    print(f"  curator / numstat floor  = {result['times_the_floor']:.2f}x the floor")
    print(f"  in CPU time: {result['cpu_times_the_floor']:.2f}x the floor")
    if "ratio_vs_lizard_path" in result:
        print(f"  curator / lizard path    = {result['ratio_vs_lizard_path']:.2f}x faster")
    print(f"  stored: {result['stored']}")
    if "agreement" in result:
        print(f"  stored only by tree-sitter: {result['only_tree_sitter']}")
        print(f"  stored only by lizard:      {result['only_lizard']}")
        agreement = result["agreement"]
        assert isinstance(agreement, dict)
        print(
            f"  changed-function names agree on {agreement['agreed']}/{agreement['survivors']}"
            f" survivors ({agreement['share']:.2%}); the same functions (names without"
            f" their qualifiers) on {agreement['functions_agreed']}"
            f" ({agreement['functions_share']:.2%})"
        )
        kinds = Counter(row["kind"] for row in agreement["disagreements"])
        print(f"  disagreements by kind: {dict(kinds)}")
        for row in agreement["disagreements"]:
            print(
                f"    {row['sha'][:12]} {row['kind']}: tree-sitter={row['tree-sitter']}"
                f" lizard={row['lizard']}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--multi-file-share", type=float, default=0.8)
    parser.add_argument("--quick", action="store_true", help="a short form for CI (200 commits)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repo", type=Path, help="a local clone: real-history mode")
    parser.add_argument("--since", help="real-history mode: first day of the window")
    parser.add_argument("--until", help="real-history mode: last day of the window")
    parser.add_argument("--no-lizard", action="store_true", help="skip the lizard comparison")
    parser.add_argument(
        "--no-loop", action="store_true", help="skip the plain PyDriller loop (the slowest run)"
    )
    parser.add_argument(
        "--processes",
        type=int,
        help="extraction worker processes of the curator run (0 or 1: threads only;"
        " default: one per core), to compare threads with processes",
    )
    args = parser.parse_args(argv)
    if args.processes is not None:
        from engines.commits import extract_pool

        extract_pool.default_processes = lambda: args.processes  # type: ignore[assignment]
    if args.repo is not None:
        bare = subprocess.run(
            ["git", "-C", str(args.repo), "rev-parse", "--is-bare-repository"],
            capture_output=True,
            text=True,
        )
        if bare.returncode != 0:
            parser.error(f"--repo {args.repo}: not a git repository")
        if bare.stdout.strip() == "true":  # PyDriller's lizard path needs a work tree
            parser.error(f"--repo {args.repo}: a bare repository; clone it (git clone) first")
        real = run_real(
            args.repo, args.since, args.until, lizard=not args.no_lizard, loop=not args.no_loop
        )
        if args.json:
            print(json.dumps(real, indent=2))
        else:
            print_real(real)
        return 0
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
