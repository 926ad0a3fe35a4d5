"""Where a source's walk begins: the local repository, its branch, and the resume point
its checkpoint gives. The in-process driver and the cluster's tasks both start here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.commits.gitlog import is_ancestor, resolve_branch
from engines.commits.options import MineOptions
from engines.commits.sources import LocalRepo, resolve_source
from store.records import Checkpoint


@dataclass(frozen=True)
class SourceStart:
    """A source ready to walk: ``after`` is the last commit examined by an earlier run
    (None: from the beginning) and ``counters`` that run's cumulative counters."""

    repo: LocalRepo
    branch: str
    scope: str
    after: str | None
    counters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


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
    return SourceStart(repo, rev, scope, after, counters, tuple(warnings))


def finished_in(checkpoint: Checkpoint, options: MineOptions) -> bool:
    """Whether a checkpoint records a walk to the end of its branch under ``options``."""
    branch = checkpoint.counters.get("branch")
    return (
        bool(checkpoint.counters.get("finished"))
        and isinstance(branch, str)
        and options.scope(branch) == checkpoint.scope
    )
