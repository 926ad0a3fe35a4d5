"""The cheap filter: what a commit's file list (and line counts, when known) decides
before anyone reads a blob.

:func:`cheap_filter` runs on every commit of the walk. The walk of the default
(tree-sitter) path does not count lines, so for it the two checks that need counts,
:func:`size_verdict`, run again in the extraction, on counts taken from the commit's
patch: the outcome of every commit is the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence

from engines.commits.gitlog import CommitStat, FileStat
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.outcomes import Filtered, Rejected


def cheap_filter(stat: CommitStat, options: MineOptions) -> Filtered | Rejected | None:
    """Decide from the file list alone; None means the commit deserves a full look."""
    if not stat.files:
        return Filtered(stat.sha, "no-files")
    if len(stat.files) > options.max_files:
        return Filtered(stat.sha, "too-many-files")
    if not any(language_of(f.path) in options.languages for f in stat.files):
        return Filtered(stat.sha, "language")
    return size_verdict(stat.sha, stat.files, options) if stat.counted else None


def diff_bytes_verdict(sha: str, diff: str, options: MineOptions) -> Rejected | None:
    """A diff larger than ``--max-diff-mb`` (megabytes of 2**20 bytes, as the option)."""
    size = len(diff.encode("utf-8", "surrogatepass"))
    if size <= options.max_diff_bytes:
        return None
    said, limit = f"{size / 2**20:.1f} MB", f"{options.max_diff_bytes / 2**20:.1f} MB"
    if said == limit:  # a small --max-diff-mb: "0.0 MB, over the limit of 0.0 MB"
        said, limit = f"{size:,} bytes", f"{options.max_diff_bytes:,} bytes"
    return Rejected(sha, "diff-too-large", f"diff is {said}, over the limit of {limit}")


def size_verdict(sha: str, files: Sequence[FileStat], options: MineOptions) -> Rejected | None:
    """A binary source file, or more changed lines (all files) than a commit may have."""
    for f in files:
        if f.binary and language_of(f.path) in options.languages:
            return Rejected(sha, "binary", f"{f.path} is a binary file")
    lines = sum((f.added or 0) + (f.deleted or 0) for f in files)
    if lines > options.max_diff_lines:
        return Rejected(
            sha,
            "diff-too-large",
            f"diff has {lines:,} changed lines, over the limit of {options.max_diff_lines:,}",
        )
    return None
