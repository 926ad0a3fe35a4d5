"""The knobs of a commit-mining run, and the fingerprint that keys its checkpoints."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from engines.commits.languages import known_languages
from engines.commits.representation import DEFAULT_TOKEN_BUDGET


@dataclass(frozen=True)
class MineOptions:
    """What to keep. Defaults follow the papers: single-file, single-function commits."""

    languages: frozenset[str] = field(default_factory=lambda: frozenset(known_languages()))
    branch: str | None = None
    since: str | None = None
    until: str | None = None
    max_files: int = 1
    max_functions: int = 1
    limit: int | None = None
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_diff_bytes: int = 5 * 1024 * 1024
    max_diff_lines: int = 50_000
    # how survivors' changed functions are found: "tree-sitter" (fast) or "lizard"
    # (PyDriller's, the reference); both store the same rows (docs/mining.md)
    boundaries: str = "tree-sitter"

    def scope(self, rev: str) -> str:
        """A short fingerprint of everything that decides which commits are kept.

        A checkpoint is only reused by a run with the same scope; ``limit`` is left
        out on purpose so that a limited run can be continued.
        """
        data = asdict(self)
        data.pop("limit")
        data.pop("boundaries")
        data["languages"] = sorted(self.languages)
        data["branch"] = rev
        blob = json.dumps(data, sort_keys=True).encode()
        return hashlib.sha1(blob, usedforsecurity=False).hexdigest()[:16]
