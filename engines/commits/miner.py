"""The per-repository commit miner: cheap filters first, a full look only for survivors.

:func:`mine_repository` walks one branch oldest-first and yields exactly one outcome
per commit (mined, filtered or rejected), never touching the database, so the same
code runs in-process or on a Dask worker.

Survivors of the cheap filter are extracted one of two ways, with the same rows as the
result: ``tree-sitter`` (the default, :mod:`engines.commits.extract`: long-lived git
processes, tree-sitter boundaries cached per blob) or ``lizard`` (PyDriller's
``changed_methods`` rule and lizard's parser, kept as the reference the tests and the
benchmark compare with). Both read the commit, its patch and its blobs the same way,
through :mod:`engines.commits.gitstream` (SHA-256 object names, symlinks and submodule
pointers left out as not code, paths that are not UTF-8 kept with escapes); only how
the changed functions are found differs.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engines.commits.extract import CommitPatch, kept_outcome, read_patch
from engines.commits.extract_pool import PROCESS_AFTER, ExtractPool, Pending, failed_outcome
from engines.commits.filters import cheap_filter
from engines.commits.gitlog import (
    CommitStat,
    CommitWindow,
    StatProblem,
    iter_commit_stats,
    shallow_boundary,
)
from engines.commits.gitstream import FilePatch, GitStreams
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.outcomes import (
    Filtered,
    Mined,
    Outcome,
    Rejected,
    file_outcome,
    flat,
)

if TYPE_CHECKING:
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


def _stream_file_class() -> type[ModifiedFile]:
    """PyDriller's ModifiedFile over one of our file patches (built when first needed).

    Its lizard analysis and ``changed_methods`` rule are PyDriller's, unchanged; what it
    reads (paths, patch text, blobs) is what the default path reads, from the git
    streams, each blob once. Nothing is read through GitPython, which knows neither
    SHA-256 repositories nor a submodule's pointer from a blob.
    """
    global _STREAM_FILE
    if _STREAM_FILE is None:
        from lizard_languages import get_reader_for
        from pydriller.domain.commit import ModifiedFile

        class _StreamFile(ModifiedFile):
            def __init__(self, git: GitStreams, patch: FilePatch, text: str) -> None:
                super().__init__(None)  # type: ignore[arg-type]  # no GitPython diff
                self._git, self._patch, self._text = git, patch, text

            @property
            def diff(self) -> str:
                return self._text

            @cached_property
            def content(self) -> bytes | None:  # type: ignore[override]
                return self._git.blob(self._patch.new_oid)

            @cached_property
            def content_before(self) -> bytes | None:  # type: ignore[override]
                return self._git.blob(self._patch.old_oid)

            @property
            def old_path(self) -> str | None:
                return self._patch.old_path

            @property
            def new_path(self) -> str | None:
                return self._patch.new_path

            @property
            def filename(self) -> str:
                # lizard picks its reader by extension and knows no .ipp, .inl, .cu:
                # the C++ files it does not know are read as .cpp, as tree-sitter does
                name = super().filename
                if language_of(name) == "cpp" and get_reader_for(name) is None:
                    return name + ".cpp"
                return name

        _STREAM_FILE = _StreamFile
    return _STREAM_FILE


_STREAM_FILE: type[ModifiedFile] | None = None


@dataclass
class _FunctionChange:
    names: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    moved: int = 0  # functions the diff touches whose code is the same before and after


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
    examined: frozenset[str] | None = None,
) -> Iterator[Outcome]:
    """Yield one outcome per non-merge commit of ``rev`` after ``after`` (or in
    ``window``, a slice of the history of the tip ``rev`` pointed at), oldest first.

    Commits that pass the cheap filter are extracted while the walk goes on. With
    tree-sitter, by :class:`engines.commits.extract_pool.ExtractPool`: threads for the
    first ``process_after`` survivors, then ``processes`` worker processes (default: one
    per core). With lizard, by ``workers`` threads, each with its own git streams.
    Outcomes still come out in commit order. ``examined``, when given, replaces
    ``after``: the commits an earlier walk examined, skipped wherever they are listed.
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
        stats = iter_commit_stats(
            path, rev, options.since, options.until, after, window, counts, examined
        )
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
    """The reference extraction on ``workers`` threads, each with its own git streams."""

    def __init__(
        self, path: Path, source: str, rev: str, options: MineOptions, workers: int
    ) -> None:
        self.path, self.source, self.rev, self.options = path, source, rev, options
        self._local = threading.local()
        self._opened: list[GitStreams] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="lizard")

    def submit(self, stat: CommitStat) -> Pending:
        return Pending(stat, self._pool.submit(self._extract, stat))

    def outcome(self, pending: Pending) -> Outcome:
        return pending.future.result()

    def _extract(self, stat: CommitStat) -> Outcome:
        try:
            git = getattr(self._local, "git", None)
            if git is None:
                git = self._local.git = GitStreams(self.path)
                with self._lock:
                    self._opened.append(git)
            return lizard_extract(git, self.source, self.rev, stat, self.options)
        except Exception as exc:  # a damaged object or a parser failure: skip this commit
            self._local.git = None  # its pipes may be mid-answer: start afresh
            return failed_outcome(stat, exc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            opened, self._opened = self._opened, []
        for git in opened:
            git.close()


def _ready(entry: Pending | Outcome) -> bool:
    return not isinstance(entry, Pending) or entry.future.done()


def _result(extractor: ExtractPool | _LizardPool, entry: Pending | Outcome) -> Outcome:
    return extractor.outcome(entry) if isinstance(entry, Pending) else entry


def lizard_extract(
    git: GitStreams, source: str, rev: str, stat: CommitStat, options: MineOptions
) -> Outcome:
    """The reference extraction: the commit read as the default path reads it
    (:func:`engines.commits.extract.read_patch`), lizard's ``changed_methods`` on it."""
    read = read_patch(git, stat, options)
    if not isinstance(read, CommitPatch):
        return read
    stream_file = _stream_file_class()
    change = _FunctionChange()
    for p, text in zip(read.patches, read.texts, strict=True):
        _collect_functions(stream_file(git, p, text), change)
    if not change.names:
        return Filtered(stat.sha, "no-code-change" if change.moved else "no-function")
    if len(change.names) > options.max_functions:
        return Filtered(stat.sha, "too-many-functions")
    return kept_outcome(source, rev, stat, read, change.names, change.before, change.after, options)


def _collect_functions(m: ModifiedFile, change: _FunctionChange) -> None:
    changed = m.changed_methods
    if not changed:
        return
    after_by_name = {f.long_name: f for f in m.methods}
    before_by_name = {f.long_name: f for f in m.methods_before}
    before_lines = (m.source_code_before or "").splitlines()
    after_lines = (m.source_code or "").splitlines()
    # the definitions that hold a deleted line (before) and an added one (after): one
    # whose text is the same on both sides was taken out and put back unchanged
    deleted = _holding(m.methods_before, [n for n, _ in m.diff_parsed["deleted"]])
    added = _holding(m.methods, [n for n, _ in m.diff_parsed["added"]])
    seen: set[str] = set()
    for method in sorted(changed, key=lambda f: (f.start_line, f.long_name)):
        if method.long_name in seen:
            continue
        seen.add(method.long_name)
        old, new = deleted.get(method.long_name), added.get(method.long_name)
        moved = old is not None and new is not None
        if moved and _slice(before_lines, old) == _slice(after_lines, new):
            change.moved += 1  # not a changed function
            continue
        change.names.append(method.name)
        change.before.append(_slice(before_lines, before_by_name.get(method.long_name)))
        change.after.append(_slice(after_lines, after_by_name.get(method.long_name)))


def _holding(methods: list[Method], lines: list[int]) -> dict[str, Method]:
    """The methods that hold one of ``lines``, by long name."""
    ordered = sorted(lines)
    return {
        f.long_name: f
        for f in methods
        if (k := bisect_left(ordered, f.start_line)) < len(ordered) and ordered[k] <= f.end_line
    }


def _slice(lines: list[str], method: Method | None) -> str:
    if method is None:
        return ""
    return "\n".join(lines[method.start_line - 1 : method.end_line])
