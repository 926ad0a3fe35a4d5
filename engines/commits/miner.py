"""The per-repository commit miner: cheap filters first, a full look only for survivors.

:func:`mine_repository` walks one branch oldest-first and yields exactly one outcome
per commit (mined, filtered or rejected), never touching the database, so the same
code runs in-process or on a Dask worker.

Survivors of the cheap filter are extracted one of two ways, with the same rows as the
result: ``tree-sitter`` (the default, :mod:`engines.commits.extract`: long-lived git
processes, tree-sitter boundaries cached per blob) or ``lizard`` (PyDriller's
``changed_methods``, kept as the reference the tests and the benchmark compare with).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engines.commits.extract import decode_message
from engines.commits.extract_pool import PROCESS_AFTER, ExtractPool, Pending, failed_outcome
from engines.commits.filters import cheap_filter, diff_bytes_verdict
from engines.commits.gitlog import (
    CommitStat,
    CommitWindow,
    StatProblem,
    iter_commit_stats,
    shallow_boundary,
)
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.outcomes import (
    Change,
    Filtered,
    Mined,
    Outcome,
    Rejected,
    commit_warnings,
    file_outcome,
    flat,
    mined_row,
)

if TYPE_CHECKING:
    from pydriller import Git
    from pydriller.domain.commit import Method, ModifiedFile

__all__ = [
    "Filtered",
    "Mined",
    "Outcome",
    "Rejected",
    "cheap_filter",
    "file_outcome",
    "mine_repository",
]

EXTRACT_WORKERS = 2  # lizard threads
IN_FLIGHT = 128  # outcomes held back at most, to keep memory flat on long histories


def _cached_file_class() -> type[ModifiedFile]:
    """PyDriller's ModifiedFile reading each blob once (built when first needed).

    Upstream re-reads the blob from git on every ``source_code`` access (a dozen
    times per file while computing ``changed_methods``); the analysis is unchanged.
    """
    global _CACHED_FILE
    if _CACHED_FILE is None:
        from pydriller.domain.commit import ModifiedFile

        class _CachedFile(ModifiedFile):
            @cached_property
            def content(self) -> bytes | None:  # type: ignore[override]
                return super().content

            @cached_property
            def content_before(self) -> bytes | None:  # type: ignore[override]
                return super().content_before

            @cached_property
            def diff(self) -> str:  # type: ignore[override]
                return super().diff

        _CACHED_FILE = _CachedFile
    return _CACHED_FILE


_CACHED_FILE: type[ModifiedFile] | None = None


@dataclass
class _FunctionChange:
    names: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)


def mine_repository(
    path: Path,
    source: str,
    rev: str,
    options: MineOptions,
    after: str | None = None,
    workers: int = EXTRACT_WORKERS,
    window: CommitWindow | None = None,
    processes: int | None = None,
    process_after: int = PROCESS_AFTER,
) -> Iterator[Outcome]:
    """Yield one outcome per non-merge commit of ``rev`` after ``after`` (or in
    ``window``, a slice of the history of the tip ``rev`` pointed at), oldest first.

    Commits that pass the cheap filter are extracted while the walk goes on. With
    tree-sitter, by :class:`engines.commits.extract_pool.ExtractPool`: threads for the
    first ``process_after`` survivors, then ``processes`` worker processes (default: one
    per core). With lizard, by ``workers`` threads, each with its own PyDriller ``Git``.
    Outcomes still come out in commit order.
    """
    boundaries = options.boundaries
    if boundaries not in ("tree-sitter", "lizard"):
        raise ValueError(f"unknown boundaries {boundaries!r}: tree-sitter or lizard")
    extractor: ExtractPool | _LizardPool = (
        ExtractPool(path, source, rev, options, processes, process_after)
        if boundaries == "tree-sitter"
        else _LizardPool(path, source, rev, options, workers)
    )
    queue: deque[Pending | Outcome] = deque()
    try:
        # the lizard path is the reference: its walk counts lines as it always did
        counts = boundaries == "lizard"
        stats = iter_commit_stats(path, rev, options.since, options.until, after, window, counts)
        shallow = shallow_boundary(path)
        for stat in stats:
            if isinstance(stat, StatProblem):
                queue.append(
                    Rejected(stat.sha, "error", f"cannot read commit: {flat(stat.message)}")
                )
            elif stat.sha in shallow:  # its diff would be its whole tree, added
                queue.append(Filtered(stat.sha, "shallow-boundary"))
            else:
                verdict = cheap_filter(stat, options)
                queue.append(verdict if verdict is not None else extractor.submit(stat))
            while queue and (len(queue) > IN_FLIGHT or _ready(queue[0])):
                yield _result(extractor, queue.popleft())
        while queue:
            yield _result(extractor, queue.popleft())
    finally:
        for pending in queue:
            if isinstance(pending, Pending):
                pending.future.cancel()
        extractor.close()


class _LizardPool:
    """The reference extraction on ``workers`` threads, each with its own PyDriller
    ``Git`` (opening one writes the repository's config, see :func:`_open_git`)."""

    def __init__(
        self, path: Path, source: str, rev: str, options: MineOptions, workers: int
    ) -> None:
        self.path, self.source, self.rev, self.options = path, source, rev, options
        self._local = threading.local()
        self._opened: list[Git] = []
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="lizard")

    def submit(self, stat: CommitStat) -> Pending:
        return Pending(stat, self._pool.submit(self._extract, stat))

    def outcome(self, pending: Pending) -> Outcome:
        return pending.future.result()

    def _extract(self, stat: CommitStat) -> Outcome:
        try:
            git = getattr(self._local, "git", None)
            if git is None:
                git = self._local.git = _open_git(self.path)
                self._opened.append(git)
            return lizard_extract(git, self.source, self.rev, stat, self.options)
        except Exception as exc:  # a damaged object or a parser failure: skip this commit
            return failed_outcome(stat, exc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for git in self._opened:
            git.clear()


_OPEN_LOCK = threading.Lock()


def _open_git(path: Path) -> Git:
    """A PyDriller ``Git``, opened one at a time.

    Opening writes a setting into the repository's config under a lock file, so
    two threads (or two processes) opening at once can collide: wait and retry.
    """
    from pydriller import Git

    with _OPEN_LOCK:
        for attempt in range(50):
            try:
                return Git(str(path))
            except OSError:
                if attempt == 49:
                    raise
                time.sleep(0.1)
    raise AssertionError("unreachable")


def _ready(entry: Pending | Outcome) -> bool:
    return not isinstance(entry, Pending) or entry.future.done()


def _result(extractor: ExtractPool | _LizardPool, entry: Pending | Outcome) -> Outcome:
    return extractor.outcome(entry) if isinstance(entry, Pending) else entry


def lizard_extract(
    git: Git, source: str, rev: str, stat: CommitStat, options: MineOptions
) -> Outcome:
    """The reference extraction: PyDriller's diff and lizard's ``changed_methods``."""
    cached_file = _cached_file_class()
    commit = git.get_commit(stat.sha)
    modified = [
        cached_file(m._c_diff)
        for m in commit.modified_files
        if language_of(_path_of(m)) in options.languages
    ]
    diff_parts = []
    for m in modified:
        name = _path_of(m)
        diff_parts.append(
            f"diff --git a/{m.old_path or name} b/{m.new_path or name}\n"
            f"--- a/{m.old_path or name}\n+++ b/{m.new_path or name}\n"
        )
        diff_parts.append(m.diff if m.diff.endswith("\n") or not m.diff else m.diff + "\n")
    diff = "".join(diff_parts)
    too_large = diff_bytes_verdict(stat.sha, diff, options)
    if too_large is not None:
        return too_large
    change = _FunctionChange()
    for m in modified:
        _collect_functions(m, change)
    if not change.names:
        return Filtered(stat.sha, "no-function")
    if len(change.names) > options.max_functions:
        return Filtered(stat.sha, "too-many-functions")

    raw = git.repo.odb.stream(bytes.fromhex(stat.sha)).read()
    message, valid = decode_message(raw)
    files = [_path_of(m) for m in modified]
    kept = Change(
        files,
        change.names,
        "\n".join(change.before),
        "\n".join(change.after),
        sum(m.added_lines for m in modified),
        sum(m.deleted_lines for m in modified),
    )
    row = mined_row(source, rev, stat, message, diff, kept, options)
    return Mined(row, commit_warnings(stat, raw, valid))


def _path_of(m: ModifiedFile) -> str:
    return m.new_path or m.old_path or m.filename


def _collect_functions(m: ModifiedFile, change: _FunctionChange) -> None:
    changed = m.changed_methods
    if not changed:
        return
    after_by_name = {f.long_name: f for f in m.methods}
    before_by_name = {f.long_name: f for f in m.methods_before}
    before_lines = (m.source_code_before or "").splitlines()
    after_lines = (m.source_code or "").splitlines()
    seen: set[str] = set()
    for method in sorted(changed, key=lambda f: (f.start_line, f.long_name)):
        if method.long_name in seen:
            continue
        seen.add(method.long_name)
        change.names.append(method.name)
        change.before.append(_slice(before_lines, before_by_name.get(method.long_name)))
        change.after.append(_slice(after_lines, after_by_name.get(method.long_name)))


def _slice(lines: list[str], method: Method | None) -> str:
    if method is None:
        return ""
    return "\n".join(lines[method.start_line - 1 : method.end_line])
