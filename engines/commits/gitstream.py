"""Commits, blobs and patches from two long-lived git processes.

One ``git cat-file --batch`` answers every object read (commit objects, blobs) and one
``git diff-tree --stdin`` every patch, so a survivor of the cheap filter costs two
round trips on open pipes instead of a GitPython call (and a git process) per file.
Each :class:`GitStreams` belongs to one thread.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from engines.commits.gitlog import GitError, git_env, run_git

NULL_OID = "0" * 40  # SHA-1's; a SHA-256 repository's is 64 zeros (see is_null_oid)
_DIFF_ARGS = ["-r", "-p", "--raw", "-M", "--full-index", "--no-color", "--no-ext-diff", "--always"]


def is_null_oid(oid: str) -> bool:
    """Whether ``oid`` is git's "no object" (all zeros, in either object format)."""
    return bool(oid) and not oid.strip("0")


@dataclass(frozen=True)
class CommitObject:
    parents: tuple[str, ...]
    raw: bytes  # the whole commit object, headers and message


@dataclass
class FilePatch:
    """One file pair of a commit's patch: blob ids (``NULL_OID`` when absent), paths as
    git stores them, and the patch text from the first ``@@`` line on (none for a
    binary file, which git marks ``binary``)."""

    old_oid: str
    new_oid: str
    status: str
    old_path: str | None
    new_path: str | None
    body: bytes = b""
    binary: bool = False
    utf8_paths: bool = True  # false: a path's bytes are not UTF-8 (kept as \xNN escapes)
    modes: tuple[str, str] = ("100644", "100644")  # old and new, as git prints them

    @property
    def is_file(self) -> bool:
        """Whether both sides are files (or absent), not a symlink, whose blob is a path,
        nor a submodule, whose "object" is a commit of another repository."""
        return not {"120000", "160000"} & set(self.modes)

    def line_counts(self) -> tuple[int, int]:
        """Added and deleted lines, as ``git log --numstat`` counts them."""
        added = deleted = 0
        for line in self.body.split(b"\n"):
            if line.startswith(b"+"):
                added += 1
            elif line.startswith(b"-"):
                deleted += 1
        return added, deleted


class GitStreams:
    """``cat-file --batch`` and ``diff-tree --stdin`` on one repository."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._cat = self._start("cat-file", "--batch")
        # diff-tree's complaints, for the line saying why it stopped (a file, not a pipe:
        # a pipe nobody reads would fill with warnings and stall git)
        self._diff_errors = tempfile.TemporaryFile()  # noqa: SIM115  # closed by close()
        self._diff = self._start("diff-tree", "--stdin", *_DIFF_ARGS, stderr=self._diff_errors)
        self._buffer = bytearray()  # what was read of diff-tree's output past the last answer

    def _start(
        self, *args: str, stderr: IO[bytes] | int = subprocess.DEVNULL
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["git", "-C", str(self.repo), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=git_env(),
        )

    def read(self, oid: str) -> tuple[str, bytes]:
        """An object's type and content."""
        cat = self._cat
        assert cat.stdin is not None and cat.stdout is not None
        cat.stdin.write(oid.encode() + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) != 3:
            raise GitError(f"object {oid[:12]} is missing or damaged")
        size = int(header[2])
        data = cat.stdout.read(size + 1)[:size]
        return header[1].decode(), data

    def commit(self, sha: str) -> CommitObject:
        kind, raw = self.read(sha)
        if kind != "commit":
            raise GitError(f"{sha[:12]} is a {kind}, not a commit")
        head = raw.partition(b"\n\n")[0]
        parents = tuple(
            line[7:].decode() for line in head.splitlines() if line.startswith(b"parent ")
        )
        return CommitObject(parents, raw)

    def blob(self, oid: str) -> bytes | None:
        if is_null_oid(oid):
            return None
        return self.read(oid)[1]

    def patch(self, sha: str, root: bool = False) -> list[FilePatch]:
        """Every file pair of ``sha`` against its first parent (the empty tree for a root)."""
        if root:
            out = run_git(self.repo, "diff-tree", "--root", *_DIFF_ARGS, sha)
            return parse_patch(out.partition(b"\n")[2])
        diff = self._diff
        assert diff.stdin is not None and diff.stdout is not None
        # then the commit against itself: no change, so only its header line (``--always``),
        # the end mark of this answer; a blank line makes git flush its output
        diff.stdin.write(f"{sha}\n{sha} {sha}\n\n".encode())
        diff.stdin.flush()
        answer = self._answer(diff.stdout, sha)
        return parse_patch(answer)

    def _answer(self, out: IO[bytes], sha: str) -> bytes:
        """One answer of ``diff-tree --stdin``: the line naming ``sha``, the patch, and the
        same line again as the end mark (then a blank line, skipped before the next
        answer; no line of a patch is a bare object name). Read in blocks, not line by
        line: a patch can run to thousands of lines."""
        buffer = self._buffer
        head = sha.encode() + b"\n"
        mark = b"\n" + head
        while True:
            del buffer[: len(buffer) - len(buffer.lstrip(b"\n"))]
            if len(buffer) >= len(head):
                break
            self._read_more(out, sha)
        if not buffer.startswith(head):
            raise GitError(f"git diff-tree gave no answer for {sha[:12]}")
        searched = len(head) - 1  # the mark may follow the head line at once: no patch
        while (end := buffer.find(mark, searched)) < 0:
            searched = max(searched, len(buffer) - len(mark) + 1)
            self._read_more(out, sha)
        body = bytes(buffer[len(head) : end + 1])
        del buffer[: end + len(mark)]
        return body

    def _read_more(self, out: IO[bytes], sha: str) -> None:
        chunk = out.read1(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            raise GitError(f"git diff-tree stopped while reading {sha[:12]}{self._why()}")
        self._buffer += chunk

    def _why(self) -> str:
        """``: `` and git's last complaint (``fatal: unable to read OID``, an object
        missing from the clone), or nothing when it said nothing."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self._diff.wait(timeout=2)  # its stdout closed: it is exiting
        try:
            end = self._diff_errors.seek(0, 2)
            self._diff_errors.seek(max(0, end - 4096))
            tail = self._diff_errors.read()
        except OSError:
            return ""
        lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines()]
        lines = [line for line in lines if line]
        if not lines:
            return ""
        said = next((x for x in reversed(lines) if x.startswith(("fatal:", "error:"))), lines[-1])
        return f": {' '.join(said.split())[:200]}"

    def close(self) -> None:
        """End both processes. Closing a pipe to a git that already died (Ctrl-C reaches
        the terminal's whole process group) must not raise: a broken pipe raised here,
        while a run is being interrupted, would replace the interruption with an error."""
        for proc in (self._cat, self._diff):
            if proc.stdin is not None:
                with contextlib.suppress(OSError):  # flushing what a Ctrl-C cut short
                    proc.stdin.close()
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        self._diff_errors.close()


def parse_patch(out: bytes) -> list[FilePatch]:
    """Raw lines (``:old new mode ... status\\tpath``) then one ``diff --git`` section
    per file pair, in the same order."""
    lines = out.split(b"\n")
    files: list[FilePatch] = []
    i = 0
    while i < len(lines) and lines[i].startswith(b":"):
        meta, _, paths = lines[i].partition(b"\t")
        fields = meta.split()
        status = fields[4].decode()[:1]
        raw = [unquote_bytes(p) for p in _split_paths(paths, status)]
        names = [decode_path(p) for p in raw]
        old_path = names[0] if status != "A" else None
        new_path = names[-1] if status != "D" else None
        files.append(
            FilePatch(
                fields[2].decode(),
                fields[3].decode(),
                status,
                old_path,
                new_path,
                utf8_paths=all(_is_utf8(p) for p in raw),
                modes=(fields[0].decode().lstrip(":"), fields[1].decode()),
            )
        )
        i += 1
    sections: list[list[bytes]] = []
    for line in lines[i:]:
        if line.startswith(b"diff --git "):
            sections.append([])
        elif sections:
            sections[-1].append(line)
    for file, section in zip(files, sections, strict=False):
        start = next((k for k, ln in enumerate(section) if ln.startswith(b"@@")), None)
        if start is None:
            file.binary = any(ln.startswith(b"Binary files ") for ln in section)
        else:
            body = section[start:]
            while body and body[-1] == b"":
                body.pop()
            file.body = b"\n".join(body)
    return files


def _split_paths(paths: bytes, status: str) -> list[bytes]:
    if status not in ("R", "C"):
        return [paths]
    if paths.startswith(b'"'):
        end = _quoted_end(paths)
        return [paths[: end + 1], paths[end + 2 :]]
    old, _, new = paths.partition(b"\t")
    return [old, new]


def _quoted_end(text: bytes) -> int:
    i = 1
    while i < len(text):
        if text[i : i + 1] == b"\\":
            i += 2
            continue
        if text[i : i + 1] == b'"':
            return i
        i += 1
    return len(text) - 1


_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b"}
_ESCAPES |= {b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def decode_path(path: bytes) -> str:
    """A path's bytes as text: UTF-8, with any byte that is not kept as a ``\\xNN``
    escape, so a Latin-1 name stays tellable from others (U+FFFD would merge them)."""
    return path.decode("utf-8", "backslashreplace")


def _is_utf8(path: bytes) -> bool:
    try:
        path.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def unquote(path: bytes) -> str:
    """A path as git prints it (C-quoted when it holds special bytes), decoded."""
    return decode_path(unquote_bytes(path))


def unquote_bytes(path: bytes) -> bytes:
    """A path's bytes from git's printing of it (C-quoted when it holds special bytes)."""
    if not path.startswith(b'"'):
        return path
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i : i + 1]
        if ch == b"\\" and i + 1 < len(body):
            nxt = body[i + 1 : i + 2]
            if nxt.isdigit():
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out += _ESCAPES.get(nxt, nxt)
            i += 2
            continue
        out += ch
        i += 1
    return bytes(out)
