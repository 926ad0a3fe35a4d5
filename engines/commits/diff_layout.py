"""Diffs written by other tools, put in git's layout before a model reads them.

The perf prior and every student learned from diffs as ``git diff`` writes them: each
file opens with ``diff --git a/P b/P``, an ``index`` line and ``--- a/P`` / ``+++ b/P``,
then its hunks. Commits imported from elsewhere come with diffs in other layouts: the
hunks alone (PyDriller's ``ModifiedFile.diff``, GitHub's ``patch``), with the file's
path in a field of its own; ``diff -u`` and Subversion output (``Index:`` and ``---`` /
``+++`` lines, no ``diff --git``); ``git show`` output with the commit's header in
front. Read as they come, the model loses the file path it leans on (measured on round
22 with the default student: git's layout 0.771 perf F1, the same commits as hunks
alone 0.730, as ``diff -u`` 0.741; rebuilt by :func:`git_layout`, 0.769 both).

:func:`git_layout` rewrites the file headers only: hunk lines are never changed. A diff
already in git's layout comes back as it is, less anything in front of its first file
(a ``git show`` header). The ``index`` line it writes for a rebuilt header names no
blobs (``0000000..0000000``): the model sees the layout it learned, and nothing that
looks like a real object id.
"""

from __future__ import annotations

import re

_GIT_FILE = re.compile(r"^diff --git ", re.MULTILINE)
_HUNK_HEADER = "@@ "
# Hunk content: context, added, removed, "\ No newline at end of file", or a blank
# context line whose leading space an editor or a web form dropped.
_CONTENT_STARTS = (" ", "+", "-", "\\")
_NO_FILE = "/dev/null"
NEUTRAL_INDEX = "index 0000000..0000000 100644"


def git_layout(diff: str, path: str | None = None) -> str:
    """``diff`` with git's file headers: kept where it has them, rebuilt from ``---`` /
    ``+++`` lines where it has those, and written for ``path`` in front of hunks that
    have neither. Lines that are neither hunk content nor a file header (``Index:``,
    ``=====``, ``diff -u ...``, ``Binary files ... differ``) are dropped."""
    if not diff or diff.startswith("diff --git "):
        return diff
    first = _GIT_FILE.search(diff)
    if first is not None:
        return diff[first.start() :]
    lines = diff.splitlines(keepends=True)
    out: list[str] = []
    in_file = False
    at = 0
    while at < len(lines):
        line = lines[at]
        if _is_file_header(lines, at):
            out.append(_git_header(_header_path(line[4:]), _header_path(lines[at + 1][4:])))
            in_file = True
            at += 2
            continue
        if line.startswith(_HUNK_HEADER):
            if not in_file and path:
                out.append(_git_header(f"a/{path}", f"b/{path}"))
            in_file = True
            out.append(line)
        elif in_file and (line.startswith(_CONTENT_STARTS) or not line.strip()):
            out.append(line)
        at += 1
    return "".join(out) if out else diff


def _is_file_header(lines: list[str], at: int) -> bool:
    return (
        lines[at].startswith("--- ")
        and at + 2 < len(lines)
        and lines[at + 1].startswith("+++ ")
        and lines[at + 2].startswith(_HUNK_HEADER)
    )


def _header_path(rest: str) -> str:
    """The path of a ``---`` / ``+++`` line, without ``diff -u``'s tab and timestamp."""
    return rest.rstrip("\r\n").split("\t", 1)[0].strip()


def _bare(side: str) -> str:
    return side[2:] if side.startswith(("a/", "b/")) else side


def _git_header(old: str, new: str) -> str:
    """git's header for a file whose sides ``diff -u`` names ``old`` and ``new``."""
    name = _bare(new if new != _NO_FILE else old)
    before = _NO_FILE if old == _NO_FILE else f"a/{_bare(old)}"
    after = _NO_FILE if new == _NO_FILE else f"b/{_bare(new)}"
    return f"diff --git a/{name} b/{name}\n{NEUTRAL_INDEX}\n--- {before}\n+++ {after}\n"
