"""Cheap facts about a repository straight from ``git``: branches and per-commit files.

One streamed ``git log`` gives every commit's changed files, which is enough to drop
most commits before anyone pays for a diff. With ``--numstat`` it also counts each
file's changed lines, which means diffing every blob of every commit; with ``--raw``
(``counts=False``) git compares trees only, ten to forty times cheaper on real
histories, and the few commits that pass the path filters have their lines counted
from the patch they are extracted from. If git stops on a damaged object, the
remaining commits are read one by one so that a single bad commit costs only itself.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engines.commits.languages import suffix

HEADER = "\x1e"
FIELD = "\x1f"
_LOG_FORMAT = f"--format={HEADER}%H{FIELD}%aI{FIELD}%at{FIELD}"


class GitError(Exception):
    """A git command failed; the message is git's own last line of complaint."""

    reason = "git"  # as a mining summary names the failure


class BranchNotFound(GitError):
    """The repository has no branch of the name asked for (``--branch``)."""

    reason = "no-branch"

    def __init__(self, branch: str) -> None:
        super().__init__(f"branch {branch!r} not found")
        self.branch = branch


@dataclass(frozen=True)
class FileStat:
    """One changed file. ``added``/``deleted`` are None for a binary file, and for every
    file of a walk that did not count lines (``counted`` false)."""

    path: str
    added: int | None
    deleted: int | None
    old_path: str | None = None
    counted: bool = True

    @property
    def binary(self) -> bool:
        return self.counted and self.added is None


@dataclass(frozen=True)
class CommitStat:
    """One commit of a walk. ``author_date`` is git's ISO 8601 author date, or None
    where the commit object's date is one git cannot read (see :func:`checked_date`)."""

    sha: str
    author_date: str | None
    files: tuple[FileStat, ...]

    @property
    def lines_changed(self) -> int:
        return sum((f.added or 0) + (f.deleted or 0) for f in self.files)

    @property
    def counted(self) -> bool:
        """Whether the walk counted this commit's changed lines (and saw binaries)."""
        return all(f.counted for f in self.files)


@dataclass(frozen=True)
class CommitWindow:
    """A slice of a branch's history pinned to one tip: commits ``start`` to
    ``start + count`` (oldest first) of the ``total`` non-merge commits of ``tip``.

    Lets a task pick up a long history part-way without git computing numstat for
    the commits before it (``--skip`` applies to the newest-first walk, before
    ``--reverse``).
    """

    tip: str
    start: int
    count: int
    total: int

    def log_args(self) -> list[str]:
        skip = max(0, self.total - self.start - self.count)
        return [f"--skip={skip}", f"--max-count={max(0, self.count)}"]


@dataclass(frozen=True)
class StatProblem:
    """A commit whose file list git could not produce."""

    sha: str
    message: str


def git_env() -> dict[str, str]:
    """The environment git runs in: it never prompts (no terminal to answer from), and
    neither does ssh (a host key to confirm, a passphrase) unless the user chose their
    own ssh command, which is then theirs to make non-interactive."""
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", LC_ALL="C", GIT_PAGER="cat")
    if not env.get("GIT_SSH_COMMAND") and not env.get("GIT_SSH"):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


def run_git(repo: Path, *args: str, timeout: float | None = None) -> bytes:
    """Run ``git -C repo ARGS`` and return stdout; raise :class:`GitError` on failure."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            env=git_env(),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f}s") from exc
    if proc.returncode != 0:
        raise GitError(last_line(proc.stderr) or f"git {args[0]} exited {proc.returncode}")
    return proc.stdout


_GENERIC_REMOTE = "could not read from remote repository"
# how a transfer that broke off ends, whatever broke it
_BROKEN_OFF = (
    "early eof",
    "invalid index-pack output",
    "index-pack failed",
    "the remote end hung up unexpectedly",
)


def last_line(stderr: bytes) -> str:
    """git's last error line; or, when that is only "Could not read from remote
    repository.", the line before it, which says why (``ssh: Could not resolve hostname
    ...``, ``fatal: '/path' does not appear to be a git repository``); or, when a
    transfer broke off (``fatal: early EOF``, ``fetch-pack: invalid index-pack
    output``), the remote's own error (``remote: fatal: unable to read OID``: it lacks
    objects), else the first other error line (``error: RPC failed; curl 18 ...``)."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.lower().startswith(("fatal", "error"))]
    line = (errors or lines or [""])[-1]
    if _GENERIC_REMOTE in line.lower():
        k = lines.index(line)
        why = next((ln for ln in reversed(lines[:k]) if not ln.startswith("Cloning ")), None)
        if why is not None:
            return why
    if any(_broken_off(ln) for ln in errors):  # git prints the lines in no fixed order
        # the remote's own words first: its side of the broken transfer says why
        said = [ln for ln in lines if ln.lower().startswith(("remote: fatal", "remote: error"))]
        said += [ln for ln in lines if ln.lower().startswith(("fatal", "error"))]
        return next((" ".join(ln.split()) for ln in said if not _broken_off(ln)), line)
    return line


def _broken_off(line: str) -> bool:
    lowered = line.lower()
    return any(tail in lowered for tail in _BROKEN_OFF)


def is_repository(path: Path) -> bool:
    try:
        run_git(path, "rev-parse", "--git-dir")
    except GitError:
        return False
    return True


def shallow_boundary(repo: Path) -> frozenset[str]:
    """The commits at the edge of a shallow clone (``git clone --depth N``), whose parents
    were not fetched: git shows each as a root commit, every file of its tree added."""
    try:
        where = os.fsdecode(run_git(repo, "rev-parse", "--git-path", "shallow").strip())
    except GitError:
        return frozenset()
    path = Path(where) if Path(where).is_absolute() else repo / where
    try:
        return frozenset(path.read_text(encoding="ascii", errors="replace").split())
    except OSError:  # no such file: the repository is whole
        return frozenset()


def default_branch(repo: Path) -> str:
    """The branch HEAD points at (the default branch of a fresh clone); ``HEAD`` itself
    when it is detached, or names a branch whose name is not UTF-8 (it could not be
    stored, and git still walks ``HEAD``)."""
    try:
        return run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD").decode().strip()
    except (GitError, UnicodeDecodeError):
        return "HEAD"


def resolve_branch(repo: Path, branch: str | None) -> str:
    """Check that ``branch`` (or the default branch) exists and has commits."""
    name = branch or default_branch(repo)
    for candidate in (name, f"origin/{name}"):
        try:
            run_git(repo, "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
        except GitError:
            continue
        return candidate
    if branch:
        raise BranchNotFound(branch)
    others = _branches(repo)
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        raise GitError(
            f"HEAD names {name}, which has no commits; branches with commits: {shown}"
            " (choose one with --branch)"
        )
    raise GitError("repository has no commits")


def _branches(repo: Path) -> list[str]:
    """The local and remote-tracking branches by short name, for a hint."""
    try:
        out = run_git(repo, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
    except GitError:
        return []
    names = []
    for ref in out.decode("utf-8", "replace").splitlines():
        if ref.startswith("refs/remotes/") and not ref.endswith("/HEAD"):
            names.append(ref.removeprefix("refs/remotes/"))
        elif ref.startswith("refs/heads/"):
            names.append(ref.removeprefix("refs/heads/"))
    return names


def _range_args(rev: str, since: str | None, until: str | None) -> list[str]:
    args = ["--no-merges"]
    if since:
        args.append(f"--since={git_date(since)}")
    if until:
        args.append(f"--until={git_date(until)}")
    return [*args, rev, "--"]


def git_date(value: str) -> str:
    """A ``--since``/``--until`` date as git must be given it: with its time and zone.

    git reads a date without a time (``2024-03-01``) as that day at the time of day the
    command runs, so a window moved with the clock: run in the afternoon,
    ``--since 2024-03-01`` left out that morning's commits, and a rerun could find its
    checkpoint outside the window. A date is midnight, and a time without a zone is
    UTC, as the CLI compares them; anything ``datetime`` cannot read goes as given."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def is_ancestor(repo: Path, sha: str, rev: str) -> bool:
    """Whether ``sha`` is still in the history of ``rev`` (false after a force-push)."""
    try:
        run_git(repo, "merge-base", "--is-ancestor", sha, rev)
    except GitError:
        return False
    return True


def tip_of(repo: Path, rev: str) -> str:
    """The commit sha ``rev`` points at now."""
    return run_git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()


def list_commits(
    repo: Path, rev: str, since: str | None = None, until: str | None = None
) -> list[str]:
    """Non-merge commits reachable from ``rev``, oldest first."""
    out = run_git(repo, "rev-list", "--reverse", *_range_args(rev, since, until))
    return out.decode().split()


def newest_commit(
    repo: Path, rev: str, since: str | None = None, until: str | None = None
) -> str | None:
    """The last commit :func:`list_commits` lists (None when it lists none)."""
    out = run_git(repo, "rev-list", "-n", "1", *_range_args(rev, since, until))
    return out.decode().strip() or None


def tree_suffixes(repo: Path, rev: str) -> Counter[str]:
    """How many files of each extension (lower case, ``""`` for none) ``rev``'s tree holds."""
    out = run_git(repo, "ls-tree", "-r", "-z", "--name-only", rev)
    names = out.decode("utf-8", "surrogateescape").split("\0")
    return Counter(suffix(name).lower() for name in names if name)


def count_commits(repo: Path, rev: str, since: str | None = None, until: str | None = None) -> int:
    out = run_git(repo, "rev-list", "--count", *_range_args(rev, since, until))
    return int(out.decode().strip() or 0)


def checked_date(iso: str, seconds: str) -> str | None:
    """git's ISO author date (``%aI``), or None where git could not read the commit's date.

    For an unparseable date line git prints the placeholder itself (``%aI``); for a
    timestamp out of range it prints the epoch, 1970-01-01, while ``%at`` still shows the
    stored digits. So a date counts only if it parses and agrees with the raw seconds
    (a commit genuinely dated at the epoch has ``%at`` 0 and passes).
    """
    try:
        moment = datetime.fromisoformat(iso)
        return iso if int(seconds) == int(moment.timestamp()) else None
    except (ValueError, OverflowError):
        return None


def _number(text: str) -> int | None:
    return None if text == "-" else int(text)


class _LogParser:
    """Incremental parser of ``git log -z`` output (split on NUL bytes): a header token
    per commit, then one or more tokens per changed file (:meth:`_file`)."""

    def __init__(self) -> None:
        self.current: tuple[str, str | None] | None = None
        self.files: list[FileStat] = []

    def feed(self, token: bytes) -> CommitStat | None:
        text = token.decode("utf-8", "backslashreplace")  # a non-UTF-8 path stays tellable
        if self._file(text):
            return None
        text = text.lstrip("\n")
        if text.startswith(HEADER):
            done = self.finish()
            sha, date, seconds, _ = text[1:].split(FIELD, 3)
            self.current = (sha, checked_date(date, seconds))
            return done
        if text:
            self._start_file(text)
        return None

    def _file(self, text: str) -> bool:
        """Take ``text`` as the rest of a file entry begun earlier, if one is open."""
        raise NotImplementedError

    def _start_file(self, text: str) -> None:
        raise NotImplementedError

    def finish(self) -> CommitStat | None:
        if self.current is None:
            return None
        stat = CommitStat(self.current[0], self.current[1], tuple(self.files))
        self.current, self.files = None, []
        return stat


class _NumstatParser(_LogParser):
    """``--numstat``: ``added\tdeleted\tpath``, or for a rename ``added\tdeleted\t``
    followed by the old and the new path."""

    def __init__(self) -> None:
        super().__init__()
        self.pending_rename: tuple[int | None, int | None] | None = None
        self.rename_old: str | None = None

    def _file(self, text: str) -> bool:
        if self.pending_rename is None:
            return False
        if self.rename_old is None:
            self.rename_old = text
            return True
        added, deleted = self.pending_rename
        self.files.append(FileStat(text, added, deleted, old_path=self.rename_old))
        self.pending_rename, self.rename_old = None, None
        return True

    def _start_file(self, text: str) -> None:
        added, deleted, path = text.split("\t", 2)
        if path:
            self.files.append(FileStat(path, _number(added), _number(deleted)))
        else:
            self.pending_rename = (_number(added), _number(deleted))


class _RawParser(_LogParser):
    """``--raw``: ``:modes oids status`` followed by the path, or for a rename or copy
    by the old and the new path. No line counts."""

    def __init__(self) -> None:
        super().__init__()
        self.paths_wanted = 0
        self.paths: list[str] = []

    def _file(self, text: str) -> bool:
        if not self.paths_wanted:
            return False
        self.paths.append(text)
        if len(self.paths) == self.paths_wanted:
            old = self.paths[0] if len(self.paths) == 2 else None
            self.files.append(FileStat(self.paths[-1], None, None, old, counted=False))
            self.paths_wanted, self.paths = 0, []
        return True

    def _start_file(self, text: str) -> None:
        status = text.split()[-1][:1]
        self.paths_wanted = 2 if status in ("R", "C") else 1


def iter_commit_stats(
    repo: Path,
    rev: str,
    since: str | None = None,
    until: str | None = None,
    after: str | None = None,
    window: CommitWindow | None = None,
    counts: bool = True,
    examined: frozenset[str] | None = None,
) -> Iterator[CommitStat | StatProblem]:
    """Every non-merge commit of ``rev`` oldest first, with its changed files and (with
    ``counts``) their numstat.

    ``after`` skips commits up to and including that sha (a resume point); ``examined``
    instead skips exactly those commits wherever they are listed (a resume point on a
    branch that moved: a merged branch's older commits are listed before ``after``); a
    ``window`` instead reads just that slice of the history of ``window.tip``.
    """
    if window is not None:
        rev, after, examined = window.tip, None, None
    if examined is not None:
        after = None
    limits = window.log_args() if window is not None else []
    proc = subprocess.Popen(
        [
            "git",
            "-C",
            str(repo),
            "log",
            "--reverse",
            "-z",
            "--numstat" if counts else "--raw",
            "-M",
            "--no-color",
            "--no-ext-diff",
            _LOG_FORMAT,
            *limits,
            *_range_args(rev, since, until),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    parser: _LogParser = _NumstatParser() if counts else _RawParser()
    skipping = after is not None
    last_seen: str | None = after
    buffer = b""

    def emit(stat: CommitStat | None) -> Iterator[CommitStat]:
        nonlocal skipping, last_seen
        if stat is None:
            return
        if skipping:
            skipping = stat.sha != after
            return
        last_seen = stat.sha
        if examined is None or stat.sha not in examined:
            yield stat

    try:
        while chunk := proc.stdout.read(1 << 16):
            buffer += chunk
            *tokens, buffer = buffer.split(b"\0")
            for token in tokens:
                yield from emit(parser.feed(token))
        if buffer:
            yield from emit(parser.feed(buffer))
        stderr = proc.stderr.read()
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if code == 0:
        yield from emit(parser.finish())
        return
    # git stopped part-way (typically a damaged object): take the rest one at a time.
    reason = last_line(stderr)
    shas = list_commits(repo, rev, since, until)
    if window is not None:
        shas = shas[window.start : window.start + window.count]
    start = shas.index(last_seen) + 1 if last_seen in shas else 0
    for sha in shas[start:]:
        if examined is None or sha not in examined:
            yield _single_commit_stat(repo, sha, reason, counts)


def _single_commit_stat(
    repo: Path, sha: str, log_reason: str, counts: bool
) -> CommitStat | StatProblem:
    mode = "--numstat" if counts else "--raw"
    try:
        out = run_git(
            repo, "show", "-z", mode, "-M", "--no-color", "--no-ext-diff", _LOG_FORMAT, sha
        )
    except GitError as exc:
        return StatProblem(sha, str(exc) or log_reason)
    parser: _LogParser = _NumstatParser() if counts else _RawParser()
    for token in out.split(b"\0"):
        parser.feed(token)
    stat = parser.finish()
    return stat if stat is not None else StatProblem(sha, "git show returned no commit")
