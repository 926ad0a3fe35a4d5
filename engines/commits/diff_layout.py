"""Diffs written by other tools, put in git's layout before a model reads them.

The perf prior and every student learned from diffs as ``git diff`` writes them: each
file opens with ``diff --git a/P b/P``, an ``index`` line and ``--- a/P`` / ``+++ b/P``,
then its hunks. Commits imported from elsewhere come in other layouts: the hunks alone
(PyDriller's ``ModifiedFile.diff``, GitHub's ``patch``) with the file's path in a field
of its own, ``git diff --no-prefix``, ``diff -u`` and Subversion output (``Index:`` and
``---`` / ``+++`` lines, no ``diff --git``), ``git show`` output with the commit's header
in front; Curator's own miner writes no ``index`` line. Read as they come, the model
loses the file path it leans on, or reads a header it never learned: on round 22 the
default student scored 0.771 perf F1 reading git's layout, 0.730 reading the same
commits' hunks alone and 0.763 reading them as the miner stores them (docs/labelers.md,
"Diffs written by other tools").

:func:`git_layout` rewrites file headers only; hunk lines are never changed. A diff
already in git's layout comes back as it is, less anything in front of its first file
(a ``git show`` header), with ``a/`` / ``b/`` put back where ``--no-prefix`` left them
out and an ``index`` line where a file has none. The ``index`` line written names no blobs
(``0000000..0000000``): the model sees the layout it learned, and nothing that looks
like a real object id.
"""

from __future__ import annotations

import re

# Diff content lines start with ' ', '+', '-' or '\'; these two starts are unambiguous.
GIT_FILE = re.compile(r"^diff --git ", re.MULTILINE)
HUNK = re.compile(r"^@@ ", re.MULTILINE)
# a ``---`` line, a ``+++`` line and a hunk: a file header of diff -u (as _is_file_header)
_FILE_PAIR = re.compile(r"^--- [^\n]*\n\+\+\+ [^\n]*\n@@ ", re.MULTILINE)
_FIRST_HUNK = re.compile(r"\n@@ ")
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
    if not diff:
        return diff
    first = GIT_FILE.search(diff)
    if first is not None:
        return _git_headers(diff[first.start() :])
    lines = _lines(diff)
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
    return not (path or GIT_FILE.search(diff) or _FILE_PAIR.search(diff)) and bool(
        HUNK.search(diff)
    )


def _git_headers(diff: str) -> str:
    """A diff in git's layout with every file header as ``git diff`` writes it: the ``a/``
    and ``b/`` that ``--no-prefix`` leaves out put back, and an ``index`` line where a
    file that has a ``---`` line (or hunks) has none; Curator's miner writes none. Only
    the headers are read line by line; hunks are copied as they are."""
    starts = [m.start() for m in GIT_FILE.finditer(diff)]
    out: list[str] = []
    for start, end in zip(starts, [*starts[1:], len(diff)], strict=True):
        hunks = _FIRST_HUNK.search(diff, start, end)
        cut = hunks.start() + 1 if hunks is not None else end
        out.append(_file_header(diff[start:cut], hunks is not None))
        out.append(diff[cut:end])
    return "".join(out)


def _file_header(header: str, has_hunks: bool) -> str:
    lines = _lines(header)
    lines[0] = _prefixed_git_line(lines[0])
    has_index = False
    old_side: int | None = None  # where the "---" line is
    for at, line in enumerate(lines[1:], start=1):
        if line.startswith("index "):
            has_index = True
        elif line.startswith("--- "):
            old_side = at
            if not line.startswith(("--- a/", "--- /dev/null")):
                lines[at] = "--- a/" + line[4:]
        elif line.startswith("+++ ") and not line.startswith(("+++ b/", "+++ /dev/null")):
            lines[at] = "+++ b/" + line[4:]
    if not has_index and (has_hunks or old_side is not None):
        lines.insert(len(lines) if old_side is None else old_side, NEUTRAL_INDEX + "\n")
    return "".join(lines)


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


def _lines(text: str) -> list[str]:
    """``text`` cut after each newline. Not ``str.splitlines``, which also cuts at form
    feeds, U+2028 and other separators inside a line of code."""
    lines = text.split("\n")
    ended = [line + "\n" for line in lines[:-1]]
    return [*ended, lines[-1]] if lines[-1] else ended


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
