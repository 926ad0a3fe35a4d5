"""Where a source's walk begins: the local repository, its branch, and the resume point
its checkpoint gives. The in-process driver and the cluster's tasks both start here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.commits.gitlog import (
    GitError,
    is_ancestor,
    list_commits,
    resolve_branch,
    shallow_boundary,
    tip_of,
)
from engines.commits.options import MineOptions
from engines.commits.sources import LocalRepo, resolve_source
from store.records import Checkpoint


@dataclass(frozen=True)
class SourceStart:
    """A source ready to walk: ``after`` is the last commit examined by an earlier run
    (None: from the beginning) and ``counters`` that run's cumulative counters.

    ``tip`` is the commit the branch points at now, kept with each checkpoint.
    ``examined`` is set when the branch moved since the checkpoint: the commits the
    earlier walk had examined, to be skipped wherever they are listed now. Skipping
    everything listed up to ``after`` would lose the commits of a branch merged since:
    git lists them by date, and a merged branch's commits are often older than
    ``after``. ``shallow`` is the clone's shallow edge (empty for a whole repository)."""

    repo: LocalRepo
    branch: str
    scope: str
    after: str | None
    counters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    tip: str | None = None
    examined: frozenset[str] | None = None
    shallow: tuple[str, ...] = ()


def start_source(
    spec: str,
    options: MineOptions,
    checkpoints: Mapping[str, Checkpoint],
    clone_dir: Path | None = None,
) -> SourceStart:
    """Resolve (clone or fetch) ``spec``, its branch, and the checkpoint of this scope.

    ``checkpoints`` are the source's checkpoints by scope. A checkpoint whose commit is
    no longer on the branch (a force-push) is ignored with a warning: the walk starts
    over and commits already stored are recognised, not stored again.
    """
    repo = resolve_source(spec, clone_dir)
    warnings = [f"{spec}: {repo.warning}"] if repo.warning else []
    rev = resolve_branch(repo.path, options.branch)
    scope = options.scope(rev)
    checkpoint = checkpoints.get(scope)
    after = checkpoint.last_key if checkpoint else None
    counters = dict(checkpoint.counters) if checkpoint else {}
    if after is not None and not is_ancestor(repo.path, after, rev):
        warnings.append(
            f"{repo.source}: checkpoint {after[:12]} is no longer on {rev} (history rewritten?);"
            " walking the whole branch again, stored commits are skipped"
        )
        after, counters = None, {}
    shallow = tuple(sorted(shallow_boundary(repo.path)))
    if after is not None and _deepened(counters, shallow):
        warnings.append(
            f"{repo.source}: the clone was deepened since checkpoint {after[:12]} (git fetch"
            " --unshallow or --deepen); walking the whole branch again, stored commits are"
            " skipped"
        )
        after, counters = None, {}
    tip = tip_of(repo.path, rev)
    examined = None
    if after is not None and counters.get("tip") != tip:
        examined = _examined(repo.path, counters.get("tip"), after, options)
    elif after is not None and _outside_window(repo.path, rev, after, options):
        # the walk would skip every commit looking for it, and call the branch finished
        warnings.append(
            f"{repo.source}: checkpoint {after[:12]} is outside the walked range"
            " (--since/--until); walking it all again, stored commits are skipped"
        )
        after, counters = None, {}
    return SourceStart(repo, rev, scope, after, counters, tuple(warnings), tip, examined, shallow)


def _outside_window(repo: Path, rev: str, after: str, options: MineOptions) -> bool:
    """Whether a checkpoint's commit, on the branch, is not among the commits the
    window lists: a checkpoint written while git read a date without a time as the time
    of day the command ran (so the window moved with the clock)."""
    if not (options.since or options.until):
        return False  # the whole branch: on it is listed (a checkpoint is never a merge)
    return after not in set(list_commits(repo, rev, options.since, options.until))


def _deepened(counters: Mapping[str, Any], shallow: tuple[str, ...]) -> bool:
    """Whether the shallow edge the checkpoint's walk met has moved: the commits beyond it,
    now fetched, lie before the checkpoint and would never be walked. A checkpoint from
    before edges were kept shows one by its ``shallow-boundary`` count."""
    recorded = counters.get("shallow")
    if isinstance(recorded, list):
        return sorted(recorded) != list(shallow)
    filtered = counters.get("filtered")
    met = isinstance(filtered, Mapping) and bool(filtered.get("shallow-boundary"))
    return met and not shallow


def _examined(repo: Path, old_tip: Any, after: str, options: MineOptions) -> frozenset[str]:
    """The commits a walk of ``old_tip`` had examined when it stopped at ``after``: those
    git lists up to and including it. Without the old tip (a checkpoint from before tips
    were kept, or a tip no longer in the repository), ``after``'s own history: a commit
    of a branch merged before it is then examined again, and recognised as stored."""
    for tip in (old_tip, after) if isinstance(old_tip, str) else (after,):
        try:
            shas = list_commits(repo, tip, options.since, options.until)
        except GitError:
            continue
        if after in shas:
            return frozenset(shas[: shas.index(after) + 1])
    return frozenset(list_commits(repo, after, options.since, options.until))


def finished_in(checkpoint: Checkpoint, options: MineOptions) -> bool:
    """Whether a checkpoint records a walk to the end of its branch under ``options``."""
    branch = checkpoint.counters.get("branch")
    return (
        bool(checkpoint.counters.get("finished"))
        and isinstance(branch, str)
        and options.scope(branch) == checkpoint.scope
    )
