"""Where a module came from: its project, the project's license, git commit and URL.

A file's project is the nearest folder above it (its own folder first) that holds a
license file or is the top of a git work tree; when none does, the folder that was
named on the command line. Projects are looked up once per folder and cached.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from engines.ir.licenses import detect_project_license, license_files
from engines.pathtext import path_text

GIT_TIMEOUT_S = 30
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.IGNORECASE)


@dataclass(frozen=True)
class Project:
    """One project: the unit licenses and provenance are decided for."""

    root: Path
    name: str
    license: str
    license_files: tuple[str, ...] = ()
    git_commit: str | None = None
    url: str | None = None

    @property
    def source(self) -> str:
        """The ``items.source`` of its modules: the project folder's absolute path (a
        name that is not UTF-8 with its bytes as ``\\xNN``)."""
        return path_text(str(self.root))


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value else None


def _is_root(folder: Path) -> bool:
    return bool(license_files(folder)) or (folder / ".git").exists()


@dataclass
class ProjectFinder:
    """Resolves files to projects, caching per folder (one git call per project)."""

    projects: dict[Path, Project] = field(default_factory=dict)
    roots: dict[Path, Path | None] = field(default_factory=dict)

    def _root_above(self, folder: Path) -> Path | None:
        seen: list[Path] = []
        found: Path | None = None
        current = folder
        while True:
            if current in self.roots:
                found = self.roots[current]
                break
            seen.append(current)
            if _is_root(current):
                found = current
                break
            if current.parent == current:
                break
            current = current.parent
        for path in seen:
            self.roots[path] = found
        return found

    def project_of(self, file: Path, fallback: Path) -> Project:
        """The project holding ``file`` (absolute); ``fallback`` when no root is found."""
        root = self._root_above(file.parent) or fallback
        project = self.projects.get(root)
        if project is None:
            spdx, files = detect_project_license(root)
            url = _git(root, "remote", "get-url", "origin")
            if url is not None:
                url = _USERINFO.sub(r"\1", url)  # never keep credentials
            project = Project(
                root=root,
                name=path_text(root.name or str(root)),
                license=spdx,
                license_files=tuple(path_text(f) for f in files),
                git_commit=_git(root, "rev-parse", "HEAD"),
                url=url,
            )
            self.projects[root] = project
        return project


def relative_to_project(file: Path, project: Project) -> str:
    """The file's path inside its project, with forward slashes."""
    try:
        return file.relative_to(project.root).as_posix()
    except ValueError:
        return file.as_posix()
