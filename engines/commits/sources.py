"""Turning a command-line source (a path or a git URL) into a local repository.

URLs are cloned bare into a cache directory (one folder per repository, however its URL
is spelled: see :func:`source_key`), fetched again on later runs, and never
half-written: a clone goes to a temporary folder first.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from engines.abandoned import owned_folder, remove_abandoned
from engines.commits.gitlog import GitError, is_repository, run_git

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
CLONE_TIMEOUT_S = 900.0


class SourceError(Exception):
    """A source that cannot be mined; the message says why in one line, ``reason``
    names the kind of failure for the summary (``not-found``, ``not-a-repository``,
    ``clone``)."""

    def __init__(self, message: str, reason: str = "source") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class LocalRepo:
    source: str  # what is stored as the commit's repo: the URL, or the absolute path
    path: Path
    warning: str | None = None


# Where URLs are cloned when the caller names no folder (the app passes its setting).
DEFAULT_CLONE_DIR = Path("~/.cache/curator/repos")


def is_url(spec: str) -> bool:
    return bool(_URL.match(spec))


def source_name(spec: str) -> str:
    """The name a source's commits and checkpoints are stored under: the URL as given,
    or the absolute path (worked out without touching the repository)."""
    return spec if is_url(spec) else str(Path(spec).expanduser().resolve())


_SCHEME_HOST = re.compile(r"^([a-z][a-z0-9+.-]*://)([^/]*)(.*)$", re.IGNORECASE | re.DOTALL)
_SCP_LIKE = re.compile(r"^([\w.-]+@)([\w.-]+)(:.*)$", re.DOTALL)


def clean_spelling(spec: str) -> str:
    """The spelling a new source is mined under: a URL with its scheme and host in lower
    case and no trailing ``/`` (still a URL git clones as given); a path as given (it is
    stored absolute, see :func:`source_name`), but a work tree's ``.git`` folder as the
    work tree, and a submodule's git folder (``super/.git/modules/X``) as its checkout
    (``super/X``) when that is checked out."""
    if not is_url(spec):
        resolved = Path(spec).expanduser().resolve()
        if resolved.name == ".git" and resolved.is_dir():
            return str(resolved.parent)
        work_tree = _submodule_work_tree(resolved)
        return str(work_tree) if work_tree is not None else spec
    url = spec.rstrip("/") or spec
    if m := _SCHEME_HOST.match(url):
        user, at, host = m.group(2).rpartition("@")
        return m.group(1).lower() + user + at + host.lower() + m.group(3)
    if m := _SCP_LIKE.match(url):
        return m.group(1) + m.group(2).lower() + m.group(3)
    return url


def source_key(spec: str) -> str:
    """What makes two spellings one repository: :func:`clean_spelling` without a final
    ``.git`` on a URL, and a ``file://`` URL as the path it names. Stored names are
    matched by this key; the key itself is never stored."""
    if not is_url(spec):
        return _local_key(Path(spec))
    if spec.lower().startswith("file://"):
        return _local_key(Path(unquote(spec[len("file://") :])))
    spelling = clean_spelling(spec)
    return spelling.removesuffix(".git").rstrip("/") or spelling


def _local_key(path: Path) -> str:
    """A local repository's key: the folder of its own git folder (``repo`` for
    ``repo/.git``), so that a submodule's checkout ``super/X`` (its ``.git`` a file
    pointing at ``super/.git/modules/X``) and that git folder are one repository. A
    ``git worktree``'s git folder is its own (``repo/.git/worktrees/W``, with its own
    HEAD), so a worktree stays a source apart from its main work tree."""
    resolved = path.expanduser().resolve()
    git_dir = _git_dir(resolved)
    if git_dir is None:
        return str(resolved)
    return str(git_dir.parent if git_dir.name == ".git" else git_dir)


def _git_dir(path: Path) -> Path | None:
    """The git folder of a repository's top folder, judged from its files alone (no git
    process: every local source of a long list is keyed): ``path/.git`` (a folder, or
    a file naming one, as in a submodule's checkout or a worktree), ``path`` itself
    when it is a git folder (``repo/.git``, a bare repository, ``.git/modules/X``),
    else None."""
    try:
        if path.name == ".git" and path.is_dir():
            return path
        dot = path / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            pointed = _gitdir_file(dot)
            return pointed if pointed is not None and pointed.is_dir() else None
        if (path / "HEAD").is_file() and (path / "objects").is_dir():
            return path
    except OSError:  # unreadable: keyed by its path
        return None
    return None


def _gitdir_file(dot_git: Path) -> Path | None:
    """The folder a ``.git`` file names (``gitdir: ../.git/modules/X``), resolved."""
    text = dot_git.read_bytes()[:4096].decode("utf-8", "surrogateescape")
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    return (dot_git.parent / first[len("gitdir:") :].strip()).resolve()


def _submodule_work_tree(git_dir: Path) -> Path | None:
    """The checkout of a submodule's git folder: the ``core.worktree`` it names, when
    that folder's ``.git`` file points back at this git folder (a submodule whose
    checkout was removed, ``git submodule deinit``, has none)."""
    try:
        if git_dir.name == ".git" or not (git_dir / "config").is_file():
            return None
        worktree = _core_worktree(git_dir / "config")
        if worktree is None:
            return None
        tree = (git_dir / worktree).resolve()
        dot = tree / ".git"
        if dot.is_file() and _gitdir_file(dot) == git_dir.resolve():
            return tree
    except OSError:
        return None
    return None


_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)\s*\]")
_WORKTREE = re.compile(r"^\s*worktree\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _core_worktree(config: Path) -> str | None:
    """``core.worktree`` as git writes it into a submodule's config (a plain relative
    path on its own line); anything fancier is not a submodule git made."""
    section = ""
    for line in config.read_bytes()[:65536].decode("utf-8", "surrogateescape").splitlines():
        if m := _SECTION.match(line):
            section = m.group(1).lower()
        elif section == "core" and (m := _WORKTREE.match(line)):
            value = m.group(1)
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            return value or None
    return None


def resolve_source(spec: str, clone_dir: Path | None = None, fetch: bool = True) -> LocalRepo:
    """A local repository for ``spec``; raises :class:`SourceError` with the reason.

    A URL is cloned into ``clone_dir`` the first time and fetched on later calls,
    unless ``fetch`` is false and a cached clone exists (a task continuing a run).
    """
    if is_url(spec):
        return _clone_or_fetch(spec, clone_dir or DEFAULT_CLONE_DIR, fetch)
    path = Path(spec).expanduser()
    if not path.exists():
        raise SourceError("no such file or directory", "not-found")
    if path.name == ".git" and path.is_file():
        raise SourceError(
            f"a .git file (it points git elsewhere): name its work tree {path.parent.resolve()}",
            "not-a-repository",
        )
    if not path.is_dir() or not is_repository(path):
        raise SourceError("not a git repository" + _holds_hint(path), "not-a-repository")
    root = _repository_root(path)
    if root is not None:
        raise SourceError(
            f"a folder inside the repository {root}: name the repository itself"
            " (a run walks its whole history)",
            "not-a-repository",
        )
    return LocalRepo(source_name(spec), path.resolve())


HINT_SCAN = 2000  # folders looked at for the hint, at most


def _looks_like_repository(path: Path) -> bool:
    """A bare repository or a work tree, judged from its files (no git process)."""
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _holds_hint(path: Path) -> str:
    """For a folder of repositories (a mirror's parent folder, one or two levels up):
    how many it holds, one of them, and how to mine them; else nothing."""
    if not path.is_dir():
        return ""
    found: list[Path] = []
    scanned = 0
    level = [path]
    for _depth in range(2):
        below: list[Path] = []
        for folder in level:
            if scanned > HINT_SCAN:
                break
            try:
                children = sorted(c for c in folder.iterdir() if c.is_dir())
            except OSError:
                continue
            for child in children[: HINT_SCAN + 1 - scanned]:
                scanned += 1
                (found if _looks_like_repository(child) else below).append(child)
        if found:
            break
        level = below
    if not found:
        return ""
    if len(found) == 1:
        return f", but it holds the repository {found[0]}: name that one"
    more = "+" if scanned > HINT_SCAN else ""
    return (
        f", but it holds {len(found):,}{more} repositories, e.g. {found[0].relative_to(path)}:"
        " name them on the command line or list them in a --repos-file"
    )


def _repository_root(path: Path) -> Path | None:
    """The repository a folder lies inside when it is not the repository's own folder
    (a work tree's top, or a bare repository), else None.

    git finds the repository from any folder inside it, so ``repo/lib`` or
    ``repo.git/objects`` would mine the whole history under another source name, and
    mining ``repo`` afterwards would take every commit for a fork's duplicate."""
    try:
        bare, inside_git_dir, prefix, git_dir = (
            run_git(
                path,
                "rev-parse",
                "--is-bare-repository",
                "--is-inside-git-dir",
                "--show-prefix",
                "--absolute-git-dir",
            )
            .decode("utf-8", "surrogateescape")
            .split("\n")[:4]
        )
    except (GitError, ValueError):
        return None
    if inside_git_dir == "true":
        top = Path(git_dir)
        if bare != "true" and top.name == ".git":
            top = top.parent  # inside a work tree's .git: the work tree names it
        return None if path.resolve() == Path(git_dir).resolve() else top
    if prefix:
        return Path(os.fsdecode(run_git(path, "rev-parse", "--show-toplevel").strip()))
    return None


_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_CACHE_NAME = re.compile(r"^(.*)-[0-9a-f]{10}$")


def _cache_name(text: str) -> str:
    """A cache folder's name for ``text``: its last path part, then a digest of it all."""
    slug = _SLUG.sub("-", text.rstrip("/").rsplit("/", 1)[-1])[:60] or "repo"
    return f"{slug}-{hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:10]}"


def _cache_path(url: str, clone_dir: Path) -> Path:
    """Where ``url`` is cloned: named after its :func:`source_key`, so that every spelling
    of one repository (``.git`` or not, a trailing ``/``, the host's case) shares one
    clone. A URL spelled as its key keeps the folder earlier versions gave it."""
    return clone_dir / _cache_name(source_key(url))


def _earlier_clone(url: str, clone_dir: Path) -> Path | None:
    """A clone of ``url``'s repository cached by an earlier version under the spelling it
    was given then (the folder was named after the URL as spelled): the folder of this
    spelling, else one named like another spelling whose ``origin`` has the same key."""
    key = source_key(url)
    exact = clone_dir / _cache_name(url)
    last = [part.rstrip("/").rsplit("/", 1)[-1] for part in (url, key, key + ".git")]
    slugs = {_SLUG.sub("-", part)[:60] or "repo" for part in last}
    try:
        named = sorted(
            entry.name
            for entry in os.scandir(clone_dir)
            if (m := _CACHE_NAME.match(entry.name)) and m.group(1) in slugs
        )
    except OSError:
        return None
    for folder in [exact.name] + [n for n in named if n != exact.name]:
        candidate = clone_dir / folder
        if not ((candidate / "HEAD").is_file() and (candidate / "config").is_file()):
            continue
        try:
            config = str(candidate / "config")
            origin = run_git(clone_dir, "config", "--file", config, "--get", "remote.origin.url")
        except GitError:
            continue
        if source_key(os.fsdecode(origin.strip())) == key:
            return candidate
    return None


def _cached_clone(url: str, clone_dir: Path) -> Path | None:
    """The cached clone of ``url``'s repository, if there is one: at its key's folder, or
    an earlier version's folder, moved there (or used where it is, if it cannot be)."""
    dest = _cache_path(url, clone_dir)
    if dest.exists() and is_repository(dest):
        return dest
    if not clone_dir.is_dir():
        return None
    earlier = _earlier_clone(url, clone_dir)
    if earlier is None or earlier == dest:
        return None
    try:
        earlier.rename(dest)
    except OSError:  # moved meanwhile by another run, or something is in the way
        if dest.exists() and is_repository(dest):
            return dest
        return earlier if earlier.exists() else None
    return dest


def _clone_or_fetch(url: str, clone_dir: Path, fetch: bool = True) -> LocalRepo:
    clone_dir = clone_dir.expanduser().resolve()  # git runs inside it: no relative paths
    dest = _cache_path(url, clone_dir)
    cached = _cached_clone(url, clone_dir)
    if cached is not None:
        dest = cached
        if not fetch:
            return LocalRepo(url, dest)
        try:
            run_git(
                dest,
                "fetch",
                "--quiet",
                "--prune",
                "origin",
                "+refs/heads/*:refs/heads/*",
                timeout=CLONE_TIMEOUT_S,
            )
        except GitError as exc:
            return LocalRepo(url, dest, warning=f"fetch failed, mining the cached copy ({exc})")
        return LocalRepo(url, dest)
    try:
        clone_dir.mkdir(parents=True, exist_ok=True)
        # a clone killed mid-way (SIGKILL, out of memory) could not remove its folder
        remove_abandoned(clone_dir, "clone", CLONE_TIMEOUT_S)
        tmp = owned_folder(clone_dir, "clone")
    except OSError as exc:  # a file of that name, no permission, a full disk
        raise SourceError(_folder_problem(clone_dir, exc), "clone") from None
    try:
        run_git(
            clone_dir, "clone", "--quiet", "--bare", url, str(tmp / "repo"), timeout=CLONE_TIMEOUT_S
        )
        if dest.exists():
            shutil.rmtree(dest)
        (tmp / "repo").rename(dest)
    except GitError as exc:
        raise SourceError(f"cannot clone: {exc}", "clone") from exc
    except OSError as exc:
        raise SourceError(_folder_problem(dest, exc), "clone") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return LocalRepo(url, dest)


def _folder_problem(folder: Path, exc: OSError) -> str:
    """One line for a clone folder that cannot be used: what and why, without the
    traceback's detail (a clone folder that is a file said only "File exists")."""
    where = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if where is not None and not where.is_dir():
        return f"cannot clone into {folder}: {where} is a file, not a folder"
    return f"cannot clone into {folder}: {exc.strerror or exc}"
