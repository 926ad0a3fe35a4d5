"""Real git repositories built in temporary folders, for the miner's tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

BASE_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
}


class GitRepo:
    """A throwaway repository with deterministic dates; each commit one hour apart."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        self.ticks = 0
        self.git("init", "-q", "-b", branch)

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        full_env = {**os.environ, **BASE_ENV, **(env or {})}
        return subprocess.run(
            ["git", "-C", str(self.path), "-c", "commit.gpgsign=false", *args],
            check=True,
            capture_output=True,
            env=full_env,
        ).stdout.decode("utf-8", "replace")

    def write(self, rel: str, content: str | bytes | None) -> None:
        target = self.path / rel
        if content is None:
            target.unlink()
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)

    def commit(self, message: str | bytes, files: dict[str, str | bytes | None]) -> str:
        for rel, content in files.items():
            self.write(rel, content)
        self.git("add", "-A")
        self.ticks += 1
        date = f"2024-03-01T{self.ticks // 60:02d}:{self.ticks % 60:02d}:00+00:00"
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        text = message if isinstance(message, str) else "placeholder"
        self.git("commit", "-q", "--allow-empty", "-m", text, env=env)
        if isinstance(message, bytes):
            self._replace_message(message)
        return self.head()

    def _replace_message(self, message: bytes) -> None:
        """Rewrite HEAD with raw message bytes (git commit would re-encode them)."""
        raw = subprocess.run(
            ["git", "-C", str(self.path), "cat-file", "commit", "HEAD"],
            check=True,
            capture_output=True,
        ).stdout
        head = raw.partition(b"\n\n")[0]
        new = (
            subprocess.run(
                ["git", "-C", str(self.path), "hash-object", "-t", "commit", "-w", "--stdin"],
                input=head + b"\n\n" + message,
                check=True,
                capture_output=True,
            )
            .stdout.decode()
            .strip()
        )
        self.git("update-ref", "HEAD", new)

    def set_author_date(self, date: bytes) -> str:
        """Rewrite HEAD with ``date`` as its author line's date, bytes that ``git commit``
        would refuse (``hash-object --literally`` skips git's checks); the new sha."""
        raw = subprocess.run(
            ["git", "-C", str(self.path), "cat-file", "commit", "HEAD"],
            check=True,
            capture_output=True,
        ).stdout
        head, _, message = raw.partition(b"\n\n")
        lines = [
            line.rpartition(b">")[0] + b"> " + date if line.startswith(b"author ") else line
            for line in head.split(b"\n")
        ]
        hash_object = ["hash-object", "-t", "commit", "--literally", "-w", "--stdin"]
        new = (
            subprocess.run(
                ["git", "-C", str(self.path), *hash_object],
                input=b"\n".join(lines) + b"\n\n" + message,
                check=True,
                capture_output=True,
            )
            .stdout.decode()
            .strip()
        )
        self.git("update-ref", "HEAD", new)
        return new

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()


def py_module(*bodies: str) -> str:
    """A Python file with one function per body: f0, f1, ..."""
    return "\n\n".join(
        f"def f{i}(x):\n    y = x\n    {body}\n    return y\n" for i, body in enumerate(bodies)
    )
