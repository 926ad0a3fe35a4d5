"""Extracting a commit that passed the cheap filter, at the speed of git.

The same row the lizard path (:func:`engines.commits.miner.lizard_extract`) builds, from
the same reading of the commit (:func:`read_patch`, :func:`kept_outcome`): the commit
object and blobs come from ``git cat-file --batch``, the patch from ``git diff-tree
--stdin`` (both long-lived, :mod:`engines.commits.gitstream`); only the function
boundaries differ, here from tree-sitter (:mod:`engines.commits.boundaries`). Each
blob is parsed once: its spans are cached by object id, so a file's "after" in one
commit is its "before" in the next without a second parse. A changed function is one
whose span holds an added line (after the commit) or a deleted line (before it),
exactly PyDriller's ``changed_methods`` rule.
"""

from __future__ import annotations

import contextlib
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from engines.commits.boundaries import Parsed, Span, parse, spans_at
from engines.commits.filters import diff_bytes_verdict, size_verdict
from engines.commits.gitlog import CommitStat, FileStat
from engines.commits.gitstream import FilePatch, GitStreams, is_null_oid
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.outcomes import (
    Change,
    Filtered,
    Mined,
    Outcome,
    commit_warnings,
    mined_row,
)

LATEST_BYTES = 16 * 2**20  # text of the last parsed version of each path, kept at most

_HUNK_HEADER = re.compile(r"(?m)^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))?")


class TreeCache:
    """Parsed files by blob id, the most recent ``size`` of them, shared by threads.

    A blob parsed as one commit's "after" is the next commit's "before". A blob not
    parsed yet is parsed incrementally from the last parsed version of its path (the
    same file some commits earlier: tree-sitter re-parses only the paragraphs that
    differ), or from scratch when its path is new. Those last versions are kept for the
    most recently parsed paths up to ``latest_bytes`` of text: a large file parsed from
    scratch costs as much as dozens of incremental parses (commons-lang's window parsed
    118 files from scratch a second time when only 64 paths were kept).
    """

    def __init__(self, size: int = 64, latest_bytes: int = LATEST_BYTES) -> None:
        self.size = size
        self.latest_bytes = latest_bytes
        self._trees: OrderedDict[str, Parsed | None] = OrderedDict()
        self._latest: OrderedDict[str, Parsed] = OrderedDict()
        self._latest_size = 0  # bytes of text the last versions hold
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def has(self, oid: str) -> bool:
        """Whether the blob ``oid`` is parsed already."""
        with self._lock:
            return oid in self._trees

    def get(
        self,
        oid: str,
        path: str,
        read: Callable[[], bytes | None],
        previous: Parsed | None = None,
        latest: bool = True,
    ) -> Parsed | None:
        """The parse of blob ``oid`` (the text of ``path``). ``latest=False`` is for an
        older version than the last one parsed: later versions are then still parsed
        from the newest one."""
        with self._lock:
            if oid in self._trees:
                self._trees.move_to_end(oid)
                self.hits += 1
                return self._trees[oid]
            self.misses += 1
            if previous is None:
                previous = self._latest.get(path)
        source = read()
        parsed = parse(path, source, previous) if source is not None else None
        with self._lock:
            self._trees[oid] = parsed
            if len(self._trees) > self.size:
                self._trees.popitem(last=False)
            if parsed is not None and (latest or path not in self._latest):
                self._keep_latest(path, parsed)
        return parsed

    def _keep_latest(self, path: str, parsed: Parsed) -> None:
        gone = self._latest.pop(path, None)
        if gone is not None:
            self._latest_size -= len(gone.text)
        self._latest[path] = parsed
        self._latest_size += len(parsed.text)
        while self._latest_size > self.latest_bytes and len(self._latest) > 1:
            _, old = self._latest.popitem(last=False)
            self._latest_size -= len(old.text)


@dataclass
class _Touched:
    """One file's changed functions, and what is needed to slice their code (done only
    for a commit that is kept)."""

    spans: list[Span]
    before: Parsed | None
    after: Parsed | None
    before_by_name: dict[str, Span]
    after_by_name: dict[str, Span]

    def code(self) -> tuple[list[str], list[str]]:
        """Each function's code before and after the commit ("" where it is absent)."""
        touched = {s.long_name: s for s in self.spans}
        # a function's other side may lie outside every hunk (moved): look where its
        # name is in that file, if it is (not for a function added or deleted)
        if self.before is not None:
            _look_elsewhere(touched, self.before_by_name, self.before)
        if self.after is not None:
            _look_elsewhere(touched, self.after_by_name, self.after)
        before_lines, after_lines = _lines(self.before), _lines(self.after)
        return (
            [_slice(before_lines, self.before_by_name.get(s.long_name)) for s in self.spans],
            [_slice(after_lines, self.after_by_name.get(s.long_name)) for s in self.spans],
        )


@dataclass
class _Changed:
    names: list[str] = field(default_factory=list)
    files: list[_Touched] = field(default_factory=list)
    overflow: bool = False  # more functions than a commit may change: no need to go on
    moved: int = 0  # functions the diff touches whose code is the same before and after


def changed_lines(diff: str) -> tuple[list[int], list[int]]:
    """Line numbers of added lines (in the new file) and deleted lines (in the old one),
    counted as PyDriller's ``diff_parsed`` counts them."""
    added: list[int] = []
    deleted: list[int] = []
    old = new = 0
    for raw in diff.split("\n"):
        line = raw.rstrip()
        old += 1
        new += 1
        if line.startswith("@@"):
            match = _HUNK_HEADER.match(line)
            if match:
                old, new = int(match[1]) - 1, int(match[3]) - 1
        if line.startswith("-"):
            deleted.append(old)
            new -= 1
        if line.startswith("+"):
            added.append(new)
            old -= 1
        if line == r"\ No newline at end of file":
            old -= 1
            new -= 1
    return added, deleted


def _touched(spans: list[Span], lines: list[int]) -> list[Span]:
    """The spans that hold one of ``lines``."""
    if not spans or not lines:
        return []
    ordered = sorted(lines)  # already in order from a patch: linear
    return [
        s
        for s in spans
        if (k := bisect_left(ordered, s.start)) < len(ordered) and ordered[k] <= s.end
    ]


@dataclass
class CommitPatch:
    """A survivor as both extraction paths read it from the git streams: its raw commit
    object, its code files' patches (symlinks and submodule pointers left out: not code),
    each patch's text, and the diff the row stores."""

    raw: bytes
    patches: list[FilePatch]
    texts: list[str]
    diff: str


def read_patch(git: GitStreams, stat: CommitStat, options: MineOptions) -> CommitPatch | Outcome:
    """The commit and patch of ``stat``, or the outcome that drops it already: counts
    over the limits (when the walk left them to the patch) or a diff too large."""
    commit = git.commit(stat.sha)
    every_file = git.patch(stat.sha, root=not commit.parents)
    if not stat.counted:  # the walk left the line counts to the patch
        verdict = size_verdict(stat.sha, [_file_stat(p) for p in every_file], options)
        if verdict is not None:
            return verdict
    patches = [p for p in every_file if p.is_file and language_of(_path_of(p)) in options.languages]
    texts = [p.body.decode("utf-8", "ignore") for p in patches]
    parts = []
    for p, text in zip(patches, texts, strict=True):
        name = _path_of(p)
        old, new = p.old_path or name, p.new_path or name
        parts.append(f"diff --git a/{old} b/{new}\n--- a/{old}\n+++ b/{new}\n")
        parts.append(text if text.endswith("\n") or not text else text + "\n")
    diff = "".join(parts)
    too_large = diff_bytes_verdict(stat.sha, diff, options)
    if too_large is not None:
        return too_large
    return CommitPatch(commit.raw, patches, texts, diff)


def kept_outcome(
    source: str,
    rev: str,
    stat: CommitStat,
    read: CommitPatch,
    functions: list[str],
    before_code: list[str],
    after_code: list[str],
    options: MineOptions,
) -> Mined:
    """The row of a kept commit and its warnings, whichever path found ``functions``."""
    message, valid = decode_message(read.raw)
    warnings = commit_warnings(stat, read.raw, valid, all(p.utf8_paths for p in read.patches))
    change = Change(
        [_path_of(p) for p in read.patches],
        functions,
        "\n".join(before_code),
        "\n".join(after_code),
        sum(_count(t, "+") for t in read.texts),
        sum(_count(t, "-") for t in read.texts),
    )
    return Mined(mined_row(source, rev, stat, message, read.diff, change, options), warnings)


def extract_fast(
    git: GitStreams,
    cache: TreeCache,
    source: str,
    rev: str,
    stat: CommitStat,
    options: MineOptions,
) -> Outcome:
    read = read_patch(git, stat, options)
    if not isinstance(read, CommitPatch):
        return read
    changed = _Changed()
    for p, text in zip(read.patches, read.texts, strict=True):
        _collect(git, cache, p, text, changed, options.max_functions - len(changed.names))
        if changed.overflow:
            return Filtered(stat.sha, "too-many-functions")
    if not changed.names:
        return Filtered(stat.sha, "no-code-change" if changed.moved else "no-function")
    before_code: list[str] = []
    after_code: list[str] = []
    for touched in changed.files:
        before, after = touched.code()
        before_code += before
        after_code += after
    return kept_outcome(source, rev, stat, read, changed.names, before_code, after_code, options)


def _path_of(p: FilePatch) -> str:
    return p.new_path or p.old_path or ""


def _file_stat(p: FilePatch) -> FileStat:
    if p.binary:
        return FileStat(_path_of(p), None, None, p.old_path)
    return FileStat(_path_of(p), *p.line_counts(), p.old_path)


def _count(text: str, sign: str) -> int:
    return sum(1 for line in text.replace("\r", "").split("\n") if line.startswith(sign))


def hunk_ranges(diff: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Each hunk's lines, context included, in the old file and in the new one
    (1-based, inclusive; an empty side is the line it sits at)."""
    old: list[tuple[int, int]] = []
    new: list[tuple[int, int]] = []
    for match in _HUNK_HEADER.finditer(diff):
        for start, count, out in ((match[1], match[2], old), (match[3], match[4], new)):
            first, size = int(start), int(count) if count is not None else 1
            out.append((first, first + max(size, 1) - 1))
    return old, new


def _collect(
    git: GitStreams, cache: TreeCache, p: FilePatch, text: str, out: _Changed, limit: int
) -> None:
    """Add the functions ``p`` changes to ``out``; more than ``limit`` of them sets
    ``out.overflow`` and may stop early.

    When the file's version before the commit is not parsed yet (the commit that last
    changed it did not pass the cheap filter), the version after is parsed first: if
    its side alone already changes too many functions, or changes none and nothing was
    deleted, the version before is never needed."""
    added, deleted = changed_lines(text)
    if not added and not deleted:
        return
    path = _path_of(p)
    old_ranges, new_ranges = hunk_ranges(text)
    has_before, has_after = not is_null_oid(p.old_oid), not is_null_oid(p.new_oid)
    before = after = None
    before_spans: list[Span] = []
    before_touched: dict[str, Span] = {}
    if has_before and (not has_after or cache.has(p.old_oid)):
        before = cache.get(p.old_oid, p.old_path or path, lambda: git.blob(p.old_oid))
        before_spans, before_touched = _side(before, old_ranges, deleted, last_wins=False)
        if _surely_over(before_touched, before, lambda: git.blob(p.new_oid), has_after, limit):
            out.overflow = True
            return
    if has_after:
        after = cache.get(p.new_oid, path, lambda: git.blob(p.new_oid), before)
    after_spans, after_touched = _side(after, new_ranges, added, last_wins=True)
    other = (lambda: before.text) if before is not None else (lambda: git.blob(p.old_oid))
    if _surely_over(after_touched, after, other, has_before, limit):
        out.overflow = True
        return
    if has_before and before is None and (deleted or after_touched):
        before = cache.get(
            p.old_oid, p.old_path or path, lambda: git.blob(p.old_oid), after, latest=False
        )
        before_spans, before_touched = _side(before, old_ranges, deleted, last_wins=False)
    touched = before_touched | after_touched  # the new side wins, as in PyDriller's union
    before_by_name = {s.long_name: s for s in before_spans}
    after_by_name = {s.long_name: s for s in after_spans}
    # a function the diff takes out and puts back unchanged (moved within the file, or
    # the hunks cut through it so) did not change: the definition that holds the deleted
    # lines is the same as the one that holds the added lines (not the one of that name
    # a hunk's context reaches: Python's `forward(self, x)` of another class)
    for name in before_touched.keys() & after_touched.keys():
        if _same_code(before, before_touched[name], after, after_touched[name]):
            del touched[name]
            out.moved += 1
    if not touched:
        return
    spans = sorted(touched.values(), key=lambda s: (s.start, s.long_name))
    out.names.extend(s.name for s in spans)
    if len(spans) > limit:
        out.overflow = True
    out.files.append(_Touched(spans, before, after, before_by_name, after_by_name))


def _side(
    parsed: Parsed | None, ranges: list[tuple[int, int]], lines: list[int], last_wins: bool
) -> tuple[list[Span], dict[str, Span]]:
    """One side of a file pair: the functions its hunks overlap, and those of them that
    hold one of ``lines`` (the added lines after, the deleted ones before), by key; of
    two with one key, the first or (``last_wins``) the last, as PyDriller keeps them."""
    if parsed is None:
        return [], {}
    spans = spans_at(parsed, ranges)
    touched = _touched(spans, lines)
    if not last_wins:
        touched.reverse()
    return spans, {s.long_name: s for s in touched}


def _code(parsed: Parsed, span: Span) -> bytes:
    """The lines of ``span`` in ``parsed`` as they are in the file."""
    lines = parsed.text.split(b"\n", span.end)
    return b"\n".join(lines[span.start - 1 : span.end])


def _same_code(
    before: Parsed | None, old: Span | None, after: Parsed | None, new: Span | None
) -> bool:
    """Whether a function's code is byte for byte the same before and after."""
    if before is None or after is None or old is None or new is None:
        return False
    if old.end - old.start != new.end - new.start:
        return False
    return _code(before, old) == _code(after, new)


def _surely_over(
    touched: dict[str, Span],
    side: Parsed | None,
    other: Callable[[], bytes | None],
    other_exists: bool,
    limit: int,
) -> bool:
    """Whether more than ``limit`` of the functions ``touched`` on one side of a file
    changed for sure, before the other side is parsed: a function whose code does not
    occur in the other version of the file changed; one whose code does may only have
    moved, and is left to the count of both sides."""
    if len(touched) <= limit:
        return False
    if side is None or not other_exists:
        return True
    text = other() or b""
    return sum(1 for s in touched.values() if _code(side, s) not in text) > limit


_MANY = 64  # occurrences of a name beyond which the whole file is read instead


def _look_elsewhere(touched: dict[str, Span], found: dict[str, Span], side: Parsed) -> None:
    """Add to ``found`` the functions of ``side`` on the lines where the name of a
    touched function missing from ``found`` occurs (all of them, for a common name)."""
    places: set[int] = set()
    for long_name, span in touched.items():
        if long_name in found:
            continue
        bare = span.name.replace("::", ".").rsplit(".", 1)[-1].rsplit(" ", 1)[-1]
        name = bare.encode("utf-8", "surrogatepass")
        at = side.source.find(name)
        while at >= 0 and len(places) <= _MANY:
            places.add(at)
            at = side.source.find(name, at + len(name))
        if len(places) > _MANY:
            found.update((s.long_name, s) for s in spans_at(side))
            return
    lines, line, counted = [], 1, 0
    for at in sorted(places):
        line += side.source.count(b"\n", counted, at)
        counted = at
        lines.append((line, line))
    if lines:
        found.update((s.long_name, s) for s in spans_at(side, lines))


def _lines(parsed: Parsed | None) -> list[str]:
    return parsed.text.decode("utf-8", "ignore").splitlines() if parsed is not None else []


def _slice(lines: list[str], span: Span | None) -> str:
    if span is None:
        return ""
    return "\n".join(lines[span.start - 1 : span.end])


def decode_message(raw: bytes) -> tuple[str, bool]:
    """The commit message decoded from the raw object, and whether it decoded cleanly.

    GitPython quietly falls back to Latin-1 for bad bytes; we replace them instead
    and say so, so that mojibake never passes for the author's text.
    """
    head, _, body = raw.partition(b"\n\n")
    encoding = "utf-8"
    for line in head.splitlines():
        if line.startswith(b"encoding "):
            encoding = line[9:].decode("ascii", "replace").strip()
    try:
        return body.decode(encoding).strip(), True
    except UnicodeDecodeError:
        with contextlib.suppress(UnicodeError):
            return body.decode(encoding, "replace").strip(), False
    except (LookupError, UnicodeError):  # no such codec; one that fails otherwise (punycode)
        pass
    return body.decode("utf-8", "replace").strip(), False
