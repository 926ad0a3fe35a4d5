"""Diffs written by other tools, put in git's layout before a model reads them.

The perf prior and every student learned from diffs as ``git diff`` writes them: each
file opens with ``diff --git a/P b/P``, an ``index`` line and ``--- a/P`` / ``+++ b/P``,
then its hunks. Commits imported from elsewhere come in other layouts: the hunks alone
(PyDriller's ``ModifiedFile.diff``, GitHub's ``patch``) with the file's path in a field
of its own, ``git diff --no-prefix``, ``diff -u`` and Subversion output (``Index:`` and
``---`` / ``+++`` lines, no ``diff --git``), ``git show`` output with the commit's header
in front. Read as they come, the model loses the file path it leans on: on round 22 the
default student scored 0.771 perf F1 reading git's layout, 0.730 reading the same
commits' hunks alone (docs/labelers.md, "Diffs written by other tools").

:func:`git_layout` rewrites file headers only; hunk lines are never changed. A diff
already in git's layout comes back as it is, less anything in front of its first file
(a ``git show`` header) and with ``a/`` / ``b/`` put back where ``--no-prefix`` left them
out. The ``index`` line written for a rebuilt header names no blobs
(``0000000..0000000``): the model sees the layout it learned, and nothing that looks
like a real object id.
"""

from __future__ import annotations

import re

_GIT_FILE = re.compile(r"^diff --git ", re.MULTILINE)
_ANY_HUNK = re.compile(r"^@@ ", re.MULTILINE)
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
    if not diff or diff.startswith("diff --git a/"):
        return diff
    first = _GIT_FILE.search(diff)
    if first is not None:
        return _with_prefixes(diff[first.start() :])
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


def names_no_file(diff: str, path: str | None = None) -> bool:
    """Whether ``diff`` is hunks with no file named, in it or by ``path``: the model reads
    such a diff without the path it leans on."""
    if path or not _ANY_HUNK.search(diff):
        return False
    return _GIT_FILE.search(git_layout(diff)) is None


def _with_prefixes(diff: str) -> str:
    """A diff in git's layout, with the ``a/`` and ``b/`` that ``git diff --no-prefix``
    leaves out put back into its file headers (hunk lines untouched)."""
    out: list[str] = []
    in_header = False
    for line in diff.splitlines(keepends=True):
        if line.startswith("diff --git "):
            in_header = True
            line = _prefixed_git_line(line)
        elif in_header:
            if line.startswith(_HUNK_HEADER):
                in_header = False
            elif line.startswith("--- ") and not line.startswith(("--- a/", "--- /dev/null")):
                line = "--- a/" + line[4:]
            elif line.startswith("+++ ") and not line.startswith(("+++ b/", "+++ /dev/null")):
                line = "+++ b/" + line[4:]
        out.append(line)
    return "".join(out)


def _prefixed_git_line(line: str) -> str:
    """``diff --git P Q`` as ``diff --git a/P b/Q``; a line that has them is kept."""
    body = line[len("diff --git ") :]
    rest = body.rstrip("\r\n")
    end = body[len(rest) :]
    if rest.startswith("a/") and " b/" in rest:
        return line
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half] == rest[half + 1 :]:
        old = new = rest[:half]  # the same path twice: spaces in it cannot mislead
    else:
        old, _, new = rest.partition(" ")
    return f"diff --git a/{old} b/{new}{end}"


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
