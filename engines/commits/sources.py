"""Turning a command-line source (a path or a git URL) into a local repository.

URLs are cloned bare into a cache directory (one folder per URL), fetched again on
later runs, and never half-written: a clone goes to a temporary folder first.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engines.commits.gitlog import GitError, is_repository, run_git

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
CLONE_TIMEOUT_S = 900.0


class SourceError(Exception):
    """A source that cannot be mined; the message says why in one line."""


@dataclass(frozen=True)
class LocalRepo:
    source: str  # what is stored as the commit's repo: the URL, or the absolute path
    path: Path
    warning: str | None = None


def default_clone_dir() -> Path:
    """``$CURATOR_CACHE/repos``, else ``$XDG_CACHE_HOME/curator/repos``, else ``~/.cache/...``."""
    if os.environ.get("CURATOR_CACHE"):
        return Path(os.environ["CURATOR_CACHE"]) / "repos"
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "curator" / "repos"


def is_url(spec: str) -> bool:
    return bool(_URL.match(spec))


def resolve_source(spec: str, clone_dir: Path | None = None) -> LocalRepo:
    """A local repository for ``spec``; raises :class:`SourceError` with the reason."""
    if is_url(spec):
        return _clone_or_fetch(spec, clone_dir or default_clone_dir())
    path = Path(spec).expanduser()
    if not path.exists():
        raise SourceError("no such file or directory")
    if not path.is_dir() or not is_repository(path):
        raise SourceError("not a git repository")
    return LocalRepo(str(path.resolve()), path.resolve())


def _cache_path(url: str, clone_dir: Path) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1])[:60] or "repo"
    digest = hashlib.sha1(url.encode(), usedforsecurity=False).hexdigest()[:10]
    return clone_dir / f"{slug}-{digest}"


def _clone_or_fetch(url: str, clone_dir: Path) -> LocalRepo:
    dest = _cache_path(url, clone_dir)
    if dest.exists() and is_repository(dest):
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
    clone_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=clone_dir))
    try:
        run_git(
            clone_dir, "clone", "--quiet", "--bare", url, str(tmp / "repo"), timeout=CLONE_TIMEOUT_S
        )
        if dest.exists():
            shutil.rmtree(dest)
        (tmp / "repo").rename(dest)
    except GitError as exc:
        raise SourceError(f"cannot clone: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return LocalRepo(url, dest)
